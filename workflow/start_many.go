package workflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// StartManyParams is one run of StartMany: its input, and its options (nil
// for the workflow's DefineOpts), as Start takes them.
type StartManyParams[In any] struct {
	Input In
	Opts  *StartOpts
}

// StartMany starts a run for each of params, all in one transaction, and
// returns their handles in params' order: all of them are started, or none
// (on any error). The runs without an idempotency key, a debounce or
// RequireWorker, the common case, are inserted together, their River jobs
// with one InsertManyTx and their rows with one INSERT, as River's
// InsertMany inserts jobs; the others are started one after another in
// the same transaction, with Start's guarantees (an idempotency key
// already taken returns its run, Handle.Existing set). Every run is
// validated before the first write: a *ValidationError names the run by
// its index (Field "params[3].StartOpts.Tenant") and writes nothing.
//
// The start middleware sees each run's start as Start's does, but its
// wrapped call returns once the run is prepared, before the transaction
// writes it.
func (d *Definition[In, Out]) StartMany(ctx context.Context, c *Client, params []StartManyParams[In]) ([]*Handle[Out], error) {
	var handles []*Handle[Out]
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		var err error
		handles, err = d.StartManyTx(ctx, c, tx, params)
		return err
	})
	if err != nil {
		return nil, err
	}
	return handles, nil
}

// StartManyTx is like StartMany, within tx: the runs become visible when
// the caller commits and vanish if it rolls back. A *ValidationError leaves
// tx untouched and usable.
func (d *Definition[In, Out]) StartManyTx(ctx context.Context, c *Client, tx pgx.Tx, params []StartManyParams[In]) ([]*Handle[Out], error) {
	starts := make([]*startParams, len(params))
	for i, param := range params {
		p, err := d.startParams(param.Input, param.Opts)
		if err != nil {
			return nil, indexed(i, err)
		}
		starts[i] = p
	}
	runs, err := c.startManyTx(ctx, tx, starts)
	if err != nil {
		return nil, err
	}
	handles := make([]*Handle[Out], len(runs))
	for i, run := range runs {
		handles[i] = &Handle[Out]{ID: run.ID, Existing: run.existing, client: c}
	}
	return handles, nil
}

// startManyTx prepares every start (under the start middleware), then
// writes the plain ones together and the others one by one, in tx.
func (c *Client) startManyTx(ctx context.Context, tx pgx.Tx, starts []*startParams) ([]*startedRun, error) {
	prepared := make([]*preparedStart, len(starts))
	for i, p := range starts {
		var err error
		if len(c.mw.start) == 0 {
			prepared[i], err = c.prepareStart(p, nil)
		} else {
			// The middleware wraps each run's preparation; the writes follow.
			info := &StartInfo{Type: p.typeName, Trigger: TriggerAPI}
			err = c.mw.wrapStart(ctx, info, func(context.Context) error {
				ps, err := c.prepareStart(p, info.added)
				if err != nil {
					return err
				}
				prepared[i], info.RunID = ps, ps.id
				return nil
			})
		}
		if err != nil {
			return nil, indexed(i, err)
		}
	}

	runs := make([]*startedRun, len(starts))
	var plain []*preparedStart
	var plainAt []int
	for i, ps := range prepared {
		if groupable(ps.p) {
			plain, plainAt = append(plain, ps), append(plainAt, i)
			continue
		}
		run, err := c.writeStartTx(ctx, tx, ps)
		if err != nil {
			return nil, fmt.Errorf("workflow: start run %d of %d: %w", i, len(starts), err)
		}
		runs[i] = run
	}
	if len(plain) > 0 {
		written, err := c.writePlainStartsTx(ctx, tx, plain)
		if err != nil {
			return nil, err
		}
		for j, run := range written {
			runs[plainAt[j]] = run
		}
	}
	started := map[string]int{}
	for i, run := range runs {
		if !run.existing {
			started[starts[i].typeName]++
		}
	}
	for typ, n := range started {
		c.mw.runsStarted(ctx, typ, TriggerAPI, n)
	}
	return runs, nil
}

// indexed names the run of index i in a *ValidationError's field
// ("params[3].StartOpts.Tenant"); other errors are returned as they are.
func indexed(i int, err error) error {
	var verr *ValidationError
	if errors.As(err, &verr) {
		named := *verr
		named.Field = fmt.Sprintf("params[%d].%s", i, verr.Field)
		return &named
	}
	return err
}
