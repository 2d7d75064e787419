package workflow

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivershared/baseservice"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivertype"
)

// A worker frees its River slot as soon as the workflow function returns,
// as a raw River job does, instead of holding it until the run's completion
// commits. The run and its job still complete in one transaction, by
// whichever of two writers gets there first:
//
//   - The engine's completion batcher (flushCompletes), queued the moment
//     the attempt ends. It is the usual writer, and it keeps Result prompt:
//     it writes at once after a quiet spell and within completionSpacing
//     under load, where River's completer waits up to 250 ms to gather a
//     batch.
//   - River's own completer, which completes the job after Work returns.
//     Its batches go through pilot.JobSetStateIfRunningMany, which, for a
//     job whose run is still pending completion, completes the run in the
//     same transaction. So River can never complete a workflow job without
//     its run, even when its completer runs first.
//
// Both writers take the job's row lock and only complete a job that is
// still running, so the second to commit finds nothing left to do. If the
// process dies before either commits, the job is still running: River
// rescues it and the run replays from its memos, as after any crash.
//
// The pilot is River's plugin point for exactly this (River Pro uses it to
// keep its own writes atomic with River's). It is marked as River's
// internal API, so a River upgrade must be checked against it;
// TestCompletionByRiverCompleter fails if River stops routing completions
// through it.

// maxPendingCompletions bounds the runs whose attempts have ended but whose
// completion has not committed yet. When it is reached, a worker waits for
// its own completion, as it did before, which slows fetching down to what
// the database commits.
const maxPendingCompletions = 2 * batchMax

// pendingCompletions holds the runs whose attempts have ended and whose
// completion has not committed, by River job id. An entry goes when either
// writer commits its job's fate; one whose job River's completer gave up on
// (a non-retryable error) stays until Stop, bounded by limit, and the job,
// still running, is rescued by River.
type pendingCompletions struct {
	limit int // maxPendingCompletions; tests lower it

	mu sync.Mutex
	m  map[int64]completeReq
}

// add records req unless limit completions are pending already.
func (p *pendingCompletions) add(req completeReq) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m) >= p.limit {
		return false
	}
	if p.m == nil {
		p.m = make(map[int64]completeReq)
	}
	p.m[req.job.ID] = req
	return true
}

// of returns the pending completions of those jobs River is about to mark
// completed.
func (p *pendingCompletions) of(params *riverdriver.JobSetStateIfRunningManyParams) []completeReq {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m) == 0 {
		return nil
	}
	var reqs []completeReq
	for i, id := range params.ID {
		if req, ok := p.m[id]; ok && params.State[i] == rivertype.JobStateCompleted {
			reqs = append(reqs, req)
		}
	}
	return reqs
}

// done forgets completions whose job's fate is committed: completed with
// its run, or found no longer running.
func (p *pendingCompletions) done(reqs []completeReq) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, req := range reqs {
		delete(p.m, req.job.ID)
	}
}

func (p *pendingCompletions) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

// clear forgets every pending completion: the client is stopping, and the
// jobs of those still pending stay running until River rescues them.
func (p *pendingCompletions) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.m)
}

// driver is River's pgx driver with the engine's pilot plugged in. River
// looks for the plugin methods on the driver it is given.
type driver struct {
	*riverpgxv5.Driver
	pilot *pilot
}

func newDriver(pool *pgxpool.Pool, c *Client) *driver {
	return &driver{Driver: riverpgxv5.New(pool), pilot: &pilot{c: c}}
}

// PluginInit is called by river.NewClient.
func (d *driver) PluginInit(*baseservice.Archetype) {}

// PluginPilot gives River the engine's pilot.
func (d *driver) PluginPilot() riverpilot.Pilot { return d.pilot }

// pilot is River's standard pilot except that River's completer completes
// a workflow run together with its job (see the comment at the top).
type pilot struct {
	riverpilot.StandardPilot
	c *Client
}

// JobSetStateIfRunningMany is River's completer's write. When some of the
// jobs it completes have a run pending completion, it completes those runs
// first, in one transaction with River's own update.
func (p *pilot) JobSetStateIfRunningMany(ctx context.Context, exec riverdriver.Executor, params *riverdriver.JobSetStateIfRunningManyParams) ([]*rivertype.JobRow, error) {
	c := p.c
	reqs := c.pending.of(params)
	if len(reqs) == 0 {
		return p.StandardPilot.JobSetStateIfRunningMany(ctx, exec, params)
	}
	if c.testFailPilot.Load() {
		return nil, errors.New("tributary: River's completer failed by the test")
	}
	var rows []*rivertype.JobRow
	err := retryDeadlock(func() error {
		return pgx.BeginFunc(ctx, c.writePool(), func(tx pgx.Tx) error {
			if _, err := c.completeRunsTx(ctx, tx, reqs); err != nil {
				return err
			}
			var err error
			rows, err = p.StandardPilot.JobSetStateIfRunningMany(ctx, c.river.Driver().UnwrapExecutor(tx), params)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("tributary: complete runs with River's completer: %w", err)
	}
	c.pending.done(reqs)
	return rows, nil
}
