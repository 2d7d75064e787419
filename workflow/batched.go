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
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/engine"
)

// The three writes every run makes on its hot path go through batchers (see
// batcher): starting an attempt, storing a step's memo, and completing the
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
	// already free, see pilot.go), so under load completions wait up to this
	// long to share a statement: a statement that writes river_job costs the
	// server a fixed amount (River's CHECK constraints and five indexes to
	// set up), which 3-step benchmark runs paid every 5 or 6 runs without a
	// spacing. A completion after a quiet spell goes at once.
	completionSpacing = 10 * time.Millisecond

	// batchPoolConns is the size of the client's own pool for batched
	// writes: one connection per batcher flow, and one for River's
	// completer when it completes runs (see pilot.go).
	batchPoolConns = beginFlows + memoFlows + completeFlows + 1
)

type batchers struct {
	begins    *batcher[uuid.UUID, *attemptState]
	completes *batcher[completeReq, struct{}]
	memos     *batcher[memoReq, struct{}]
}

func newBatchers(c *Client) *batchers {
	return &batchers{
		begins:    newBatcher(beginFlows, batchMax, 0, c.flushBegins),
		completes: newBatcher(completeFlows, batchMax, completionSpacing, c.flushCompletes),
		memos:     newBatcher(memoFlows, batchMax, 0, c.flushMemos),
	}
}

func (b *batchers) start() {
	b.begins.start()
	b.completes.start()
	b.memos.start()
}

func (b *batchers) stop() {
	b.begins.stop()
	b.completes.stop()
	b.memos.stop()
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

// The batches pass run ids as [16]byte, not uuid.UUID: pgx encodes a
// uuid.UUID through its driver.Valuer (a string, parsed back), which cost
// more than the rest of a memo batch's encoding; a [16]byte goes as 16
// binary bytes.

// flushBegins loads the runs that attempts start on, with all their memos,
// in one query. A run that is not runnable (finished, cancelled) gets a nil
// state.
func (c *Client) flushBegins(ctx context.Context, items []*batchItem[uuid.UUID, *attemptState]) error {
	ids := make([][16]byte, 0, len(items)) // binary: see the note above flushBegins
	for _, item := range items {
		ids = append(ids, item.req)
	}
	rows, err := c.writePool().Query(ctx, c.q.beginAttempts, ids)
	if err != nil {
		return fmt.Errorf("begin attempts: %w", err)
	}
	defer rows.Close()
	states := make(map[uuid.UUID]*attemptState, len(ids))
	for rows.Next() {
		var (
			id        uuid.UUID
			st        attemptState
			memosJSON []byte
		)
		if err := rows.Scan(&id, &st.typ, &st.input, &st.scheduleID, &st.fireAt, &st.parentID, &st.metadata, &memosJSON); err != nil {
			return err
		}
		if err := json.Unmarshal(memosJSON, &st.memos); err != nil {
			return fmt.Errorf("decode step memos of run %s: %w", id, err)
		}
		states[id] = &st
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, item := range items {
		item.res = states[item.req]
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
	_, err := c.batch.memos.do(ctx, memoReq{at: c.now().UTC(), memo: m, runID: runID, startedAt: startedAt, fresh: fresh})
	return err
}

func (c *Client) flushMemos(ctx context.Context, items []*batchItem[memoReq, struct{}]) error {
	n := len(items)
	var (
		fresh = true
		memos = memoArrays{n: n}
	)
	for _, item := range items {
		if memos.add(item.req) {
			fresh = fresh && item.req.fresh
		}
	}
	args := memos.args()
	// A batch of first writes is a plain insert: an upsert pays for a
	// speculative insertion (an extra index probe and WAL record per row).
	// Should a step's record exist all the same (another attempt of the run
	// wrote it meanwhile), the insert fails whole and the upsert settles it.
	if fresh {
		_, err := c.writePool().Exec(ctx, c.q.memoInsert, args...)
		if err == nil {
			return nil
		}
		if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != uniqueViolation {
			return fmt.Errorf("store %d step memos: %w", len(memos.runIDs), err)
		}
	}
	if _, err := c.writePool().Exec(ctx, c.q.memoUpsert, args...); err != nil {
		return fmt.Errorf("store %d step memos: %w", len(memos.runIDs), err)
	}
	return nil
}

// memoArrays are step records as the columns of an unnest: the parameters
// of memoInsert and memoUpsert, and of completeRuns's memos.
type memoArrays struct {
	n          int                  // capacity hint
	seen       map[memoKey]struct{} // the steps added
	runIDs     [][16]byte           // binary: see the note above flushBegins
	names      []string
	kinds      []string
	statuses   []string
	types      []string
	outputs    []string
	startedAts []time.Time
	at         []time.Time
	seqs       []int32 // -1: no position (see memo.Seq)
}

// add adds r unless a record of the same step of the same run is in a
// already, and says whether it did. Two attempts of one run racing on one
// step (a rescued job) may meet in a batch, and Postgres refuses to upsert
// a row twice in a statement.
func (a *memoArrays) add(r memoReq) bool {
	key := memoKey{r.runID, r.memo.Name}
	if _, dup := a.seen[key]; dup {
		return false
	}
	if a.runIDs == nil {
		a.seen = make(map[memoKey]struct{}, a.n)
		a.runIDs = make([][16]byte, 0, a.n)
		a.names = make([]string, 0, a.n)
		a.kinds = make([]string, 0, a.n)
		a.statuses = make([]string, 0, a.n)
		a.types = make([]string, 0, a.n)
		a.outputs = make([]string, 0, a.n)
		a.startedAts = make([]time.Time, 0, a.n)
		a.at = make([]time.Time, 0, a.n)
		a.seqs = make([]int32, 0, a.n)
	}
	a.runIDs = append(a.runIDs, r.runID)
	a.names = append(a.names, r.memo.Name)
	a.kinds = append(a.kinds, string(r.memo.Kind))
	a.statuses = append(a.statuses, string(r.memo.Status))
	a.types = append(a.types, r.memo.ResultType)
	output := string(r.memo.Output)
	if output == "" {
		output = "null"
	}
	a.outputs = append(a.outputs, output)
	a.startedAts = append(a.startedAts, r.startedAt)
	a.at = append(a.at, r.at)
	seq := int32(-1)
	if r.memo.Seq != nil {
		seq = int32(*r.memo.Seq)
	}
	a.seqs = append(a.seqs, seq)
	a.seen[key] = struct{}{}
	return true
}

func (a *memoArrays) args() []any {
	return []any{a.runIDs, a.names, a.kinds, a.statuses, a.types, a.outputs, a.startedAts, a.at, a.seqs}
}

// memoKey is a step of a run.
type memoKey struct {
	run  uuid.UUID
	name string
}

// uniqueViolation is Postgres's SQLSTATE for a duplicate key.
const uniqueViolation = "23505"

// deadlockDetected is Postgres's SQLSTATE for a transaction it aborted to
// break a deadlock.
const deadlockDetected = "40P01"

// retryDeadlock runs fn, and runs it again, up to twice more, while
// Postgres aborts it to break a deadlock. The two writers of a run's
// completion (see pilot.go) lock the same jobs in their own orders: the
// engine's batch its jobs in one statement, River's completer its batch in
// two (the runs pending completion, then the rest), so under a burst of
// completions they can wait on each other in a cycle. Postgres aborts one
// after deadlock_timeout; the other has committed by the time it is run
// again, which then finds those jobs completed and leaves them.
func retryDeadlock(fn func() error) error {
	err := fn()
	for range 2 {
		if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != deadlockDetected {
			return err
		}
		err = fn()
	}
	return err
}

// completeReq completes a run with its output, and its River job.
type completeReq struct {
	attempt   int
	hasParent bool
	job       *river.Job[runArgs]
	memos     []memoReq // step memos stored with the completion (see Step)
	output    []byte
	startedAt *time.Time
}

// flushCompletes completes runs and their River jobs atomically (see
// completeRuns), in one transaction shared by the runs completing at the
// same moment. A run whose attempt did not wait for it (see pilot.go) is
// forgotten once its batch commits durably; when the batch fails, River's
// completer completes it instead. With AsyncCompletion, a batch of such runs
// commits without waiting for the WAL flush, and they stay pending until
// River's completer has made sure the completion is durable; a batch holding
// a completion its worker waits for (not pending) commits synchronously.
func (c *Client) flushCompletes(ctx context.Context, items []*batchItem[completeReq, struct{}]) error {
	if c.testFailCompletions.Load() {
		return errors.New("completion batch failed by the test")
	}
	reqs := make([]completeReq, len(items))
	hasParent := false
	for i, item := range items {
		reqs[i] = item.req
		hasParent = hasParent || item.req.hasParent
	}
	async := c.asyncCompletion && c.pending.holdAll(reqs)
	var completed, finished map[int64]bool
	err := retryDeadlock(func() error {
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
				slog.String("run_id", reqs[0].job.Args.RunID.String()), slog.String("err", err.Error()))
		}
		return err
	}
	c.reportCompleted(ctx, reqs, finished)
	var committed, ended []completeReq
	for _, item := range items {
		if completed[item.req.job.ID] {
			committed = append(committed, item.req)
		} else {
			item.err = engine.ErrJobNotRunning // rescued or cancelled meanwhile: leave the run be
			ended = append(ended, item.req)
		}
	}
	if !async {
		c.pending.done(reqs)
		return nil
	}
	// Committed, visible, not yet durable: River's completer forgets these
	// once they are (see pilot.go). The WAL position read now lies past the
	// commit; an error leaves it unknown, and River's completer flushes.
	var lsn int64
	if err := c.writePool().QueryRow(ctx, "SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint").Scan(&lsn); err != nil {
		lsn = 0 // unknown
	}
	c.pending.committed(committed, lsn)
	c.pending.done(ended)
	return nil
}

// completeRunsTx completes runs and their River jobs (see completeRuns) and
// wakes the parents of child runs it completes, in tx. It returns the jobs it
// completed, and those of the runs it completed (see completeRuns).
func (c *Client) completeRunsTx(ctx context.Context, tx pgx.Tx, reqs []completeReq, async bool) (completed, finished map[int64]bool, err error) {
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
func (c *Client) reportCompleted(ctx context.Context, reqs []completeReq, finished map[int64]bool) {
	if len(finished) == 0 {
		return
	}
	for _, req := range reqs {
		if finished[req.job.ID] {
			c.mw.runFinished(ctx, req.job.Args.RunID, req.job.Args.Workflow, StatusCompleted)
		}
	}
}

// completeRuns completes runs and their River jobs in one statement (SQL
// completeRuns): it makes the state change river.JobCompleteTx makes (state
// completed, finalized_at set, only if the job is still running: River's
// "if running" rule) for every job, completes the runs whose job it
// completed, stores the memos those runs' attempts left unsaved (see Step;
// under the run's row lock from the update, which stands in for the
// key-share lock the other statements that write steps take), and NOTIFYs
// Result waiters. With async, it turns synchronous_commit off for its
// transaction (see Config.AsyncCompletion and pilot.go). It returns the jobs
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
func (c *Client) completeRuns(ctx context.Context, db dbtx, reqs []completeReq, async bool) (completed, finished map[int64]bool, parents []uuid.UUID, err error) {
	slices.SortFunc(reqs, func(a, b completeReq) int { return cmp.Compare(a.job.ID, b.job.ID) })
	n := len(reqs)
	var (
		jobIDs     = make([]int64, 0, n)
		runIDs     = make([][16]byte, 0, n) // binary: see the note above flushBegins
		outputs    = make([]string, 0, n)
		attempts   = make([]int32, 0, n)
		startedAts = make([]*time.Time, 0, n)
	)
	for _, r := range reqs {
		jobIDs = append(jobIDs, r.job.ID)
		runIDs = append(runIDs, r.job.Args.RunID)
		outputs = append(outputs, string(r.output))
		attempts = append(attempts, int32(r.attempt)) //nolint:gosec // attempts are small
		startedAts = append(startedAts, r.startedAt)
	}
	var memos memoArrays
	for _, r := range reqs {
		for _, m := range r.memos {
			memos.add(m)
		}
	}
	args := append([]any{jobIDs, runIDs, outputs, attempts, startedAts, async}, memos.args()...)
	rows, err := db.Query(ctx, c.q.completeRuns, args...)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("complete runs and their River jobs: %w", err)
	}
	defer rows.Close()
	completed = make(map[int64]bool, n)
	report := len(c.mw.finished) > 0
	for rows.Next() {
		var (
			jobID    int64
			done     bool
			runDone  bool
			parentID *uuid.UUID
		)
		if err := rows.Scan(&jobID, &done, &runDone, &parentID, nil, nil); err != nil {
			return nil, nil, nil, err
		}
		completed[jobID] = done
		if runDone && report {
			if finished == nil {
				finished = make(map[int64]bool, n)
			}
			finished[jobID] = true
		}
		if parentID != nil {
			parents = append(parents, *parentID)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("complete runs and their River jobs: %w", err)
	}
	return completed, finished, parents, nil
}
