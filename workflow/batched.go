package workflow

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/wfruntime"
)

// The three writes every run makes on its hot path go through batchers (see
// wfruntime.Batcher): starting an attempt, storing a step's memo, and completing the
// run with its River job. Each request still waits for its own commit.
const (
	batchMax = 500 // largest batch

	// Batches of one kind in flight at once. A running workflow waits for
	// each of its memos, so memos have two flows: one batch executes while
	// the other waits for its commit to reach the disk. Measured at 20
	// workers, that ran 3-step workflows about 9% faster than one flow,
	// though each statement then carries fewer memos.
	beginFlows    = 1
	memoFlows     = 2
	completeFlows = 1

	// completionSpacing is the least time between the starts of two
	// completion batches. Memos and attempt starts hold up a running
	// workflow, so they go as soon as their connection is free. A
	// completion holds up only Result waiters (the worker's River slot is
	// already free, see wfruntime.Completer), so under load completions wait up to this
	// long to share a statement: a statement that writes river_job costs the
	// server a fixed amount (River's CHECK constraints and five indexes to
	// set up), which 3-step benchmark runs paid every 5 or 6 runs without a
	// spacing. A completion after a quiet spell goes at once.
	completionSpacing = 10 * time.Millisecond

	// batchPoolConns is the size of the client's own pool for batched
	// writes: one connection per batcher flow, and one for River's
	// completer when it completes runs (see wfruntime.Completer).
	batchPoolConns = beginFlows + memoFlows + completeFlows + 1
)

type batchers struct {
	begins    *wfruntime.Batcher[uuid.UUID, *attemptState]
	completes *wfruntime.Batcher[wfruntime.Completion, struct{}]
	memos     *wfruntime.Batcher[memoReq, struct{}]
}

func newBatchers(c *Client) *batchers {
	return &batchers{
		begins:    wfruntime.NewBatcher(beginFlows, batchMax, 0, c.flushBegins),
		completes: wfruntime.NewBatcher(completeFlows, batchMax, completionSpacing, c.flushCompletes),
		memos:     wfruntime.NewBatcher(memoFlows, batchMax, 0, c.flushMemos),
	}
}

func (b *batchers) start() {
	b.begins.Start()
	b.completes.Start()
	b.memos.Start()
}

func (b *batchers) stop() {
	b.begins.Stop()
	b.completes.Stop()
	b.memos.Stop()
}

// attemptState is what an attempt starts from: the run and all its memos.
type attemptState struct {
	fireAt     *time.Time
	input      []byte
	memos      []*memo
	metadata   []byte
	parentID   *uuid.UUID
	scheduleID *uuid.UUID
	typ        string
}

// flushBegins loads the runs that attempts start on, with all their memos,
// in one query. A run that is not runnable (finished, cancelled) gets a nil
// state.
func (c *Client) flushBegins(ctx context.Context, items []*wfruntime.BatchItem[uuid.UUID, *attemptState]) error {
	ids := make([][16]byte, 0, len(items)) // binary: see engine.MemoBatch
	for _, item := range items {
		ids = append(ids, item.Req)
	}
	runs, err := c.db.BeginAttempts(ctx, c.writePool(), ids)
	if err != nil {
		return fmt.Errorf("begin attempts: %w", err)
	}
	states := make(map[uuid.UUID]*attemptState, len(ids))
	for i := range runs {
		r := &runs[i]
		st := &attemptState{typ: r.Type, input: r.Input, scheduleID: r.ScheduleID, fireAt: r.FireAt, parentID: r.ParentID, metadata: r.Metadata}
		if err := json.Unmarshal(r.Memos, &st.memos); err != nil {
			return fmt.Errorf("decode step memos of run %s: %w", r.ID, err)
		}
		states[r.ID] = st
	}
	for _, item := range items {
		item.Res = states[item.Req]
	}
	return nil
}

// memoReq stores one step record.
type memoReq struct {
	at        time.Time
	memo      *memo
	runID     uuid.UUID
	startedAt time.Time

	// fresh says the attempt found no record of this step when it started,
	// so the write is expected to insert (see flushMemos).
	fresh bool
}

// writeMemo stores m for runID and returns once it is committed. fresh says
// the attempt found no record of the step when it started.
func (c *Client) writeMemo(ctx context.Context, runID uuid.UUID, m *memo, startedAt time.Time, fresh bool) error {
	_, err := c.batch.memos.Do(ctx, memoReq{at: c.now().UTC(), memo: m, runID: runID, startedAt: startedAt, fresh: fresh})
	return err
}

func (c *Client) flushMemos(ctx context.Context, items []*wfruntime.BatchItem[memoReq, struct{}]) error {
	var (
		fresh = true
		memos = engine.NewMemoBatch(len(items))
	)
	for _, item := range items {
		if memos.Add(item.Req.row()) {
			fresh = fresh && item.Req.fresh
		}
	}
	// A batch of first writes is a plain insert: an upsert pays for a
	// speculative insertion (an extra index probe and WAL record per row).
	// Should a step's record exist all the same (another attempt of the run
	// wrote it meanwhile), the insert fails whole and the upsert settles it.
	if fresh {
		err := c.db.InsertMemos(ctx, c.writePool(), &memos)
		if err == nil {
			return nil
		}
		if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != uniqueViolation {
			return fmt.Errorf("store %d step memos: %w", memos.Len(), err)
		}
	}
	if _, err := c.db.UpsertMemos(ctx, c.writePool(), &memos); err != nil {
		return fmt.Errorf("store %d step memos: %w", memos.Len(), err)
	}
	return nil
}

// row is the step record r stores.
func (r *memoReq) row() *engine.Memo {
	return &engine.Memo{
		RunID: r.runID, Name: r.memo.Name, Kind: string(r.memo.Kind), Status: string(r.memo.Status),
		ResultType: r.memo.ResultType, Output: r.memo.Output, StartedAt: r.startedAt, FinishedAt: r.at, Seq: r.memo.Seq,
	}
}

// memoRows are the step records reqs store.
func memoRows(reqs []memoReq) []*engine.Memo {
	if len(reqs) == 0 {
		return nil
	}
	rows := make([]*engine.Memo, len(reqs))
	for i := range reqs {
		rows[i] = reqs[i].row()
	}
	return rows
}

// uniqueViolation is Postgres's SQLSTATE for a duplicate key.
const uniqueViolation = "23505"

// flushCompletes completes runs and their River jobs atomically (see
// completeRuns), in one transaction shared by the runs completing at the
// same moment. A run whose attempt did not wait for it (see wfruntime.Completer) is
// forgotten once its batch commits durably; when the batch fails, River's
// completer completes it instead. With AsyncCompletion, a batch of such runs
// commits without waiting for the WAL flush, and they stay pending until
// River's completer has made sure the completion is durable; a batch holding
// a completion its worker waits for (not pending) commits synchronously.
func (c *Client) flushCompletes(ctx context.Context, items []*wfruntime.BatchItem[wfruntime.Completion, struct{}]) error {
	if c.testFailCompletions.Load() {
		return errors.New("completion batch failed by the test")
	}
	reqs := make([]wfruntime.Completion, len(items))
	hasParent := false
	for i, item := range items {
		reqs[i] = item.Req
		hasParent = hasParent || item.Req.HasParent
	}
	async := c.asyncCompletion && c.pending.HoldAll(reqs)
	var completed, finished map[int64]bool
	err := wfruntime.RetryDeadlock(func() error {
		if hasParent {
			return pgx.BeginFunc(ctx, c.writePool(), func(tx pgx.Tx) error {
				var err error
				completed, finished, err = c.completeRunsTx(ctx, tx, reqs, async)
				return err
			})
		}
		var err error
		completed, finished, _, err = c.completeRuns(ctx, c.writePool(), reqs, async)
		return err
	})
	if err != nil {
		if len(items) == 1 { // the batcher has already tried it alone
			c.logger.WarnContext(ctx, "tributary: Failed to complete a run; River's completer will complete it with its job",
				slog.String("run_id", reqs[0].RunID.String()), slog.String("err", err.Error()))
		}
		return err
	}
	c.reportCompleted(ctx, reqs, finished)
	var committed, ended []wfruntime.Completion
	for _, item := range items {
		if completed[item.Req.JobID] {
			committed = append(committed, item.Req)
		} else {
			item.Err = engine.ErrJobNotRunning // rescued or cancelled meanwhile: leave the run be
			ended = append(ended, item.Req)
		}
	}
	if !async {
		c.pending.Done(reqs)
		return nil
	}
	// Committed, visible, not yet durable: River's completer forgets these
	// once they are (see wfruntime.Completer). The WAL position read now lies past the
	// commit; an error leaves it unknown, and River's completer flushes.
	lsn, err := c.db.WALInsertLSN(ctx, c.writePool())
	if err != nil {
		lsn = 0 // unknown
	}
	c.pending.Committed(committed, lsn)
	c.pending.Done(ended)
	return nil
}

// completeRunsTx completes runs and their River jobs (see completeRuns) and
// wakes the parents of child runs it completes, in tx. It returns the jobs it
// completed, and those of the runs it completed (see completeRuns).
func (c *Client) completeRunsTx(ctx context.Context, tx pgx.Tx, reqs []wfruntime.Completion, async bool) (completed, finished map[int64]bool, err error) {
	completed, finished, parents, err := c.completeRuns(ctx, tx, reqs, async)
	if err != nil {
		return nil, nil, err
	}
	for _, parent := range parents {
		if err := c.wakeRunTx(ctx, tx, parent); err != nil {
			return nil, nil, fmt.Errorf("wake parent run %s: %w", parent, err)
		}
	}
	return completed, finished, nil
}

// reportCompleted reports to HookRunFinished the runs of reqs whose jobs
// are in finished, once their completion has committed.
func (c *Client) reportCompleted(ctx context.Context, reqs []wfruntime.Completion, finished map[int64]bool) {
	if len(finished) == 0 {
		return
	}
	for _, req := range reqs {
		if finished[req.JobID] {
			c.mw.runFinished(ctx, req.RunID, req.Type, StatusCompleted)
		}
	}
}

// completeRuns completes runs and their River jobs in one statement
// (engine.Queries.CompleteRuns, which says what it writes and locks), with
// the memos those runs' attempts left unsaved (see Step), and NOTIFYs
// Result waiters. With async, it turns synchronous_commit off for its
// transaction (see Config.AsyncCompletion and wfruntime.Completer). It returns the jobs
// it completed and the parents of the child runs among them, which the
// caller must wake in the same transaction, and, when HookRunFinished is
// installed, the jobs of the runs it completed (finished; a job completed
// whose run was cancelled meanwhile is not). One statement instead of
// River's general-purpose completion query plus BEGIN/COMMIT: completion is
// on every run's path.
// It sorts reqs (its callers build them for it) by job id: the jobs'
// primary-key scan locks them in that order anyway, and the runs then
// follow it too, so that two batches holding the same runs lock them in
// the same order and do not deadlock.
func (c *Client) completeRuns(ctx context.Context, db engine.DBTX, reqs []wfruntime.Completion, async bool) (completed, finished map[int64]bool, parents []uuid.UUID, err error) {
	slices.SortFunc(reqs, func(a, b wfruntime.Completion) int { return cmp.Compare(a.JobID, b.JobID) })
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
	p := &engine.CompleteRunsParams{JobIDs: jobIDs, RunIDs: runIDs, Outputs: outputs, Attempts: attempts, StartedAts: startedAts, Async: async, Now: c.sqlNow()}
	for _, r := range reqs {
		for _, m := range r.Memos {
			p.Memos.Add(m)
		}
	}
	rows, err := c.db.CompleteRuns(ctx, db, p)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("complete runs and their River jobs: %w", err)
	}
	completed = make(map[int64]bool, n)
	report := len(c.mw.finished) > 0
	for _, row := range rows {
		completed[row.JobID] = row.JobCompleted
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
