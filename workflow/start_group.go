package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/tributary-go/tributary/internal/engine"
)

// Group commit of starts.
//
// Start and StartByName, which own their transaction, do not each begin
// and commit one when several arrive together: the first to arrive while
// no group is being written writes at once, alone, as it always did; those
// that arrive while it writes wait, and the first of them then writes them
// all in one transaction (their River jobs with one InsertManyTx, their
// runs with one INSERT), and so on. A lone Start is as fast as before; many
// concurrent ones share round trips and commits. Each caller returns when
// its own run is committed, as before: the durability promise is the same.
//
// Only plain starts group: without an idempotency key, a debounce or
// RequireWorker (each decides something in its own transaction), and not
// a schedule's, a child's or a fork's (those are started within another
// transaction). A group whose transaction fails (a racing migration, a lost
// connection, a run a constraint refuses) is written again one start a
// transaction, so that one start's failure is its own.

// maxStartGroup bounds the starts written in one transaction.
const maxStartGroup = 500

// startGroupTimeout bounds the writing of a group of several starts: its
// transaction no longer belongs to one caller's context, since the group's
// other callers must not see one caller's cancellation.
const startGroupTimeout = time.Minute

// errGroupRolledBack marks a group's failure that wrote nothing: its
// starts may be written again, alone.
var errGroupRolledBack = errors.New("workflow: a group of starts was rolled back")

// errStartAlone is what a start of a group that could not be written gets:
// its caller then starts it alone.
var errStartAlone = errors.New("workflow: write the start alone")

// startGroups gathers the starts waiting to be written.
type startGroups struct {
	mu      sync.Mutex
	writing bool            // a group is being written
	waiting []*groupedStart // the starts that arrived meanwhile, in order

	grouped    atomic.Int64 // starts written in groups of two or more
	rolledBack atomic.Int64 // groups rolled back and written again one start at a time
}

// groupedStart is a start waiting in a group.
type groupedStart struct {
	ps *preparedStart

	lead chan struct{} // closed when this start's caller is to write the next group
	done chan struct{} // closed when run or err is set
	run  *startedRun
	err  error
}

// groupable reports whether p may be written in a group.
func groupable(p *startParams) bool {
	if p.parentID != nil || p.scheduleID != nil || p.fork || p.skip != "" {
		return false
	}
	opts := p.opts
	return opts == nil || (opts.IdempotencyKey == "" && opts.Debounce == nil && !opts.RequireWorker)
}

// startGrouped starts p (groupable) in a group: prepared here, written by
// whichever caller leads the group it lands in.
func (c *Client) startGrouped(ctx context.Context, p *startParams, added map[string]any) (*startedRun, error) {
	ps, err := c.prepareStart(p, added)
	if err != nil {
		return nil, err
	}
	s := &groupedStart{ps: ps, lead: make(chan struct{}), done: make(chan struct{})}

	g := &c.startGroups
	g.mu.Lock()
	g.waiting = append(g.waiting, s)
	lead := !g.writing
	g.writing = true
	g.mu.Unlock()

	if !lead {
		select {
		case <-s.done:
		case <-s.lead:
			c.writeStartGroup(ctx)
		case <-ctx.Done():
			if g.withdraw(s) {
				return nil, ctx.Err()
			}
			// Taken into a group already: its outcome is this start's.
			select {
			case <-s.done:
			case <-s.lead:
				c.writeStartGroup(ctx)
			}
		}
	} else {
		c.writeStartGroup(ctx)
	}
	<-s.done
	if errors.Is(s.err, errStartAlone) {
		return c.startAlone(ctx, ps)
	}
	return s.run, s.err
}

// withdraw takes s out of the waiting starts, and reports whether it was
// still there (not yet taken into a group). A start withdrawn with the lead
// hands it on, or ends the writing when no start waits.
func (g *startGroups) withdraw(s *groupedStart) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, w := range g.waiting {
		if w != s {
			continue
		}
		g.waiting = append(g.waiting[:i], g.waiting[i+1:]...)
		select {
		case <-s.lead: // it was to write the next group: the lead moves on
			if len(g.waiting) > 0 {
				close(g.waiting[0].lead)
			} else {
				g.writing = false
			}
		default:
		}
		return true
	}
	return false
}

// writeStartGroup writes the starts waiting (up to maxStartGroup) in one
// transaction, tells each its outcome, and hands the lead to the first of
// those that arrived meanwhile, or ends the writing.
func (c *Client) writeStartGroup(ctx context.Context) {
	g := &c.startGroups
	g.mu.Lock()
	group := g.waiting[:min(len(g.waiting), maxStartGroup)]
	g.waiting = append([]*groupedStart(nil), g.waiting[len(group):]...)
	g.mu.Unlock()

	// A group's first start is the leader's own. Alone, it is written
	// under the leader's context, as a Start always was, so that its
	// caller can still cancel it; a group of several is not, since its
	// other callers must not see the leader's cancellation.
	writeCtx, cancel := ctx, context.CancelFunc(func() {})
	if len(group) > 1 {
		writeCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), startGroupTimeout)
	}
	runs, err := c.writeGroupTx(writeCtx, group)
	cancel()
	if len(group) > 1 {
		g.grouped.Add(int64(len(group)))
		if errors.Is(err, errGroupRolledBack) {
			g.rolledBack.Add(1)
		}
	}
	for i, s := range group {
		switch {
		case err == nil:
			s.run = runs[i]
		case len(group) > 1 && errors.Is(err, errGroupRolledBack):
			s.err = errStartAlone
		default:
			s.err = err
		}
		close(s.done)
	}

	g.mu.Lock()
	if len(g.waiting) > 0 {
		close(g.waiting[0].lead)
	} else {
		g.writing = false
	}
	g.mu.Unlock()
}

// writeGroupTx inserts the group's River jobs and runs in one transaction
// and returns the runs, in the group's order.
func (c *Client) writeGroupTx(ctx context.Context, group []*groupedStart) ([]*startedRun, error) {
	if len(group) == 1 {
		// Alone: as a Start always wrote, the job, then the run.
		run, err := c.startAlone(ctx, group[0].ps)
		return []*startedRun{run}, err
	}

	prepared := make([]*preparedStart, len(group))
	for i, s := range group {
		prepared[i] = s.ps
	}
	tx, err := c.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errGroupRolledBack, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit, a no-op
	runs, err := c.writePlainStartsTx(ctx, tx, prepared)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errGroupRolledBack, err)
	}
	// A failed commit may have committed all the same: its starts are not
	// written again, each caller gets the error, as from a Start alone.
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("workflow: commit the starts of %d runs: %w", len(group), err)
	}
	return runs, nil
}

// writePlainStartsTx inserts plain starts (groupable) in tx: their River
// jobs in one InsertManyTx, their runs in one INSERT. It returns the runs
// in the starts' order.
func (c *Client) writePlainStartsTx(ctx context.Context, tx pgx.Tx, starts []*preparedStart) ([]*startedRun, error) {
	params := make([]river.InsertManyParams, len(starts))
	for i, ps := range starts {
		params[i] = river.InsertManyParams{Args: ps.args, InsertOpts: ps.insertOpts}
	}
	jobs, err := c.river.InsertManyTx(ctx, tx, params)
	if err != nil {
		return nil, fmt.Errorf("workflow: insert the River jobs of %d runs: %w", len(starts), err)
	}
	rows := engine.InsertRunsParams{Now: c.sqlNow()}
	for i, ps := range starts {
		job := jobs[i].Job
		if job.State == rivertype.JobStateScheduled {
			if err := c.waker.ScheduleTx(ctx, tx, job.ID, job.Queue, job.ScheduledAt); err != nil {
				return nil, err
			}
		}
		tags, err := json.Marshal(ps.tags)
		if err != nil {
			return nil, err
		}
		rows.IDs = append(rows.IDs, ps.id)
		rows.Types = append(rows.Types, ps.p.typeName)
		rows.Inputs = append(rows.Inputs, string(ps.p.input))
		rows.MaxAttempts = append(rows.MaxAttempts, int32(ps.maxAttempts))
		rows.Queues = append(rows.Queues, ps.queue)
		rows.Priorities = append(rows.Priorities, int32(ps.priority))
		rows.JobIDs = append(rows.JobIDs, job.ID)
		rows.Metadata = append(rows.Metadata, string(ps.metadata))
		rows.Tags = append(rows.Tags, string(tags))
		rows.Tenants = append(rows.Tenants, ps.tenant)
	}
	inserted, err := c.db.InsertRuns(ctx, tx, &rows)
	if err != nil {
		return nil, fmt.Errorf("workflow: insert %d runs: %w", len(starts), err)
	}
	byID := make(map[uuid.UUID]*engine.Run, len(inserted))
	for _, r := range inserted {
		byID[r.ID] = r
	}
	runs := make([]*startedRun, len(starts))
	for i, ps := range starts {
		row, ok := byID[ps.id]
		if !ok {
			return nil, fmt.Errorf("workflow: run %s was not inserted", ps.id)
		}
		runs[i] = &startedRun{}
		if err := setRun(&runs[i].run, row); err != nil {
			return nil, err
		}
		runs[i].Run = &runs[i].run
	}
	return runs, nil
}

// startAlone writes a prepared start in a transaction of its own.
func (c *Client) startAlone(ctx context.Context, ps *preparedStart) (*startedRun, error) {
	var run *startedRun
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		var err error
		run, err = c.writeStartTx(ctx, tx, ps)
		return err
	})
	return run, err
}
