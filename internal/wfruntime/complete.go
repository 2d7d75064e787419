package wfruntime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
)

// The engine's completion batch: the usual writer of a run's completion
// with its River job; River's completer is the other (see the comment at
// the top of pilot.go).

// Flush is the flush of a workflow client's completion Batcher: it
// completes runs and their River jobs atomically (see completeRuns), in one
// transaction shared by the runs completing at the same moment. A run whose
// attempt did not wait for it (see the comment at the top of pilot.go) is
// forgotten once its batch commits durably; when the batch fails, River's
// completer completes it instead. With workflow.Config.AsyncCompletion, a batch of such runs
// commits without waiting for the WAL flush, and they stay pending until
// River's completer has made sure the completion is durable; a batch holding
// a completion its worker waits for (not pending) commits synchronously.
func (cp *Completer) Flush(ctx context.Context, items []*BatchItem[Completion, struct{}]) error {
	c := &cp.c
	if c.FailBatch != nil && c.FailBatch() {
		return errors.New("completion batch failed by the test")
	}
	reqs := make([]Completion, len(items))
	hasParent := false
	for i, item := range items {
		reqs[i] = item.Req
		hasParent = hasParent || item.Req.HasParent
	}
	// River's completer may wait on the batch (TakeCompleted): tell it
	// when the batch has tried, whatever came of it.
	defer c.Pending.tried(reqs)
	async := c.Async && c.Pending.holdAll(reqs)
	var (
		completed map[int64]time.Time
		finished  map[int64]bool
	)
	err := retryDeadlock(func() error {
		if hasParent {
			return pgx.BeginFunc(ctx, c.WritePool(), func(tx pgx.Tx) error {
				var err error
				completed, finished, err = cp.completeRunsTx(ctx, tx, reqs, async)
				return err
			})
		}
		var err error
		completed, finished, _, err = cp.completeRuns(ctx, c.WritePool(), reqs, async)
		return err
	})
	if err != nil {
		if len(items) == 1 { // the batcher has already tried it alone
			c.Logger.WarnContext(ctx, "tributary: Failed to complete a run; River's completer will complete it with its job",
				slog.String("run_id", reqs[0].RunID.String()), slog.String("err", err.Error()))
		}
		return err
	}
	cp.reportCompleted(ctx, reqs, finished)
	var committed, ended []Completion
	for _, item := range items {
		if _, ok := completed[item.Req.JobID]; ok {
			committed = append(committed, item.Req)
		} else {
			item.Err = engine.ErrJobNotRunning // rescued or cancelled meanwhile: leave the run be
			ended = append(ended, item.Req)
		}
	}
	if !async {
		c.Pending.settle(reqs, completed)
		return nil
	}
	// Committed, visible, not yet durable: River's completer forgets these
	// once they are (see the comment at the top of pilot.go). The WAL position read now lies past the
	// commit; an error leaves it unknown, and River's completer flushes.
	lsn, err := c.Queries.WALInsertLSN(ctx, c.WritePool())
	if err != nil {
		lsn = 0 // unknown
	}
	c.Pending.committed(committed, lsn)
	c.Pending.done(ended)
	return nil
}

// completeRunsTx completes runs and their River jobs (see completeRuns) and
// wakes the parents of child runs it completes, in tx. It returns the jobs it
// completed, and those of the runs it completed (see completeRuns).
func (cp *Completer) completeRunsTx(ctx context.Context, tx pgx.Tx, reqs []Completion, async bool) (completed map[int64]time.Time, finished map[int64]bool, err error) {
	completed, finished, parents, err := cp.completeRuns(ctx, tx, reqs, async)
	if err != nil {
		return nil, nil, err
	}
	for _, parent := range parents {
		if err := cp.c.WakeRunTx(ctx, tx, parent); err != nil {
			return nil, nil, fmt.Errorf("wake parent run %s: %w", parent, err)
		}
	}
	return completed, finished, nil
}

// reportCompleted reports to RunCompleted (workflow's HookRunFinished) the runs of reqs whose jobs
// are in finished, once their completion has committed.
func (cp *Completer) reportCompleted(ctx context.Context, reqs []Completion, finished map[int64]bool) {
	if len(finished) == 0 {
		return
	}
	for _, req := range reqs {
		if finished[req.JobID] {
			cp.c.RunCompleted(ctx, req.RunID, req.Type)
		}
	}
}

// completeRuns completes runs and their River jobs in one statement
// (engine.Queries.CompleteRuns, which says what it writes and locks), with
// the memos those runs' attempts left unsaved (see workflow.Step), and NOTIFYs
// Result waiters. With async, it turns synchronous_commit off for its
// transaction (see workflow.Config.AsyncCompletion and the comment at the
// top of pilot.go). It returns the jobs
// it completed, with their finalized_at, and the parents of the child runs among them, which the
// caller must wake in the same transaction, and, when RunCompleted is
// set (a workflow.HookRunFinished is installed), the jobs of the runs it completed (finished; a job completed
// whose run was cancelled meanwhile is not). One statement instead of
// River's general-purpose completion query plus BEGIN/COMMIT: completion is
// on every run's path.
// It sorts reqs (its callers build them for it) by job id: the jobs'
// primary-key scan locks them in that order anyway, and the runs then
// follow it too, so that two batches holding the same runs lock them in
// the same order and do not deadlock.
func (cp *Completer) completeRuns(ctx context.Context, db engine.DBTX, reqs []Completion, async bool) (completed map[int64]time.Time, finished map[int64]bool, parents []uuid.UUID, err error) {
	slices.SortFunc(reqs, func(a, b Completion) int { return cmp.Compare(a.JobID, b.JobID) })
	n := len(reqs)
	var (
		jobIDs     = make([]int64, 0, n)
		runIDs     = make([][16]byte, 0, n) // binary: see engine.MemoBatch
		outputs    = make([]string, 0, n)
		attempts   = make([]int32, 0, n)
		startedAts = make([]*time.Time, 0, n)
	)
	for _, r := range reqs {
		jobIDs = append(jobIDs, r.JobID)
		runIDs = append(runIDs, r.RunID)
		outputs = append(outputs, string(r.Output))
		attempts = append(attempts, int32(r.Attempt)) //nolint:gosec // attempts are small
		startedAts = append(startedAts, r.StartedAt)
	}
	p := &engine.CompleteRunsParams{JobIDs: jobIDs, RunIDs: runIDs, Outputs: outputs, Attempts: attempts, StartedAts: startedAts, Async: async, Now: cp.c.SQLNow()}
	for _, r := range reqs {
		for _, m := range r.Memos {
			p.Memos.Add(m)
		}
	}
	rows, err := cp.c.Queries.CompleteRuns(ctx, db, p)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("complete runs and their River jobs: %w", err)
	}
	completed = make(map[int64]time.Time, n)
	report := cp.c.RunCompleted != nil
	for _, row := range rows {
		if row.JobCompleted && row.FinalizedAt != nil {
			completed[row.JobID] = *row.FinalizedAt
		}
		if row.RunCompleted && report {
			if finished == nil {
				finished = make(map[int64]bool, n)
			}
			finished[row.JobID] = true
		}
		if row.ParentID != nil {
			parents = append(parents, *row.ParentID)
		}
	}
	return completed, finished, parents, nil
}
