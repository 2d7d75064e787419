package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// The three writes every run makes on its hot path go through batchers (see
// batcher): starting an attempt, storing a step's memo, and completing the
// run with its River job. Each request still waits for its own commit.
const (
	batchFlows = 1   // batches of one kind in flight at once
	batchMax   = 500 // largest batch

	// batchPoolConns is the size of the client's own pool for batched
	// writes: one connection per batcher and flow.
	batchPoolConns = 3 * batchFlows
)

type batchers struct {
	begins    *batcher[uuid.UUID, *attemptState]
	completes *batcher[completeReq, struct{}]
	memos     *batcher[memoReq, struct{}]
}

func newBatchers(c *Client) *batchers {
	return &batchers{
		begins:    newBatcher(batchFlows, batchMax, c.flushBegins),
		completes: newBatcher(batchFlows, batchMax, c.flushCompletes),
		memos:     newBatcher(batchFlows, batchMax, c.flushMemos),
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

// flushBegins loads the runs that attempts start on, with all their memos,
// in one query. A run that is not runnable (finished, cancelled) gets a nil
// state.
func (c *Client) flushBegins(ctx context.Context, items []*batchItem[uuid.UUID, *attemptState]) error {
	ids := make([]uuid.UUID, 0, len(items))
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
}

// writeMemo stores m for runID and returns once it is committed.
func (c *Client) writeMemo(ctx context.Context, runID uuid.UUID, m *memo, startedAt time.Time) error {
	_, err := c.batch.memos.do(ctx, memoReq{at: time.Now().UTC(), memo: m, runID: runID, startedAt: startedAt})
	return err
}

func (c *Client) flushMemos(ctx context.Context, items []*batchItem[memoReq, struct{}]) error {
	n := len(items)
	var (
		runIDs     = make([]uuid.UUID, 0, n)
		names      = make([]string, 0, n)
		kinds      = make([]string, 0, n)
		statuses   = make([]string, 0, n)
		types      = make([]string, 0, n)
		outputs    = make([]string, 0, n)
		startedAts = make([]time.Time, 0, n)
		at         = make([]time.Time, 0, n)
		seen       = make(map[[2]string]bool, n)
	)
	for _, item := range items {
		r := item.req
		// Two attempts of one run racing on one step (a rescued job) may meet
		// in a batch; Postgres refuses to upsert a row twice in a statement.
		key := [2]string{r.runID.String(), r.memo.Name}
		if seen[key] {
			continue
		}
		seen[key] = true
		runIDs = append(runIDs, r.runID)
		names = append(names, r.memo.Name)
		kinds = append(kinds, string(r.memo.Kind))
		statuses = append(statuses, string(r.memo.Status))
		types = append(types, r.memo.ResultType)
		output := string(r.memo.Output)
		if output == "" {
			output = "null"
		}
		outputs = append(outputs, output)
		startedAts = append(startedAts, r.startedAt)
		at = append(at, r.at)
	}
	if _, err := c.writePool().Exec(ctx, c.q.memoUpsert, runIDs, names, kinds, statuses, types, outputs, startedAts, at); err != nil {
		return fmt.Errorf("store %d step memos: %w", len(runIDs), err)
	}
	return nil
}

// completeReq completes a run with its output, and its River job.
type completeReq struct {
	attempt   int
	hasParent bool
	job       *river.Job[runArgs]
	output    []byte
	startedAt *time.Time
}

// flushCompletes completes runs and their River jobs atomically, in one
// statement (SQL completeRuns): it makes the state change river.JobCompleteTx
// makes (state completed, finalized_at set, only if the job is still
// running: River's "if running" rule) for every job of the batch, completes
// the runs whose job it completed, and NOTIFYs Result waiters. A batch that
// holds a child run also wakes the parents in the same transaction. One
// statement instead of River's general-purpose completion query plus
// BEGIN/COMMIT: completion is on every run's hot path.
func (c *Client) flushCompletes(ctx context.Context, items []*batchItem[completeReq, struct{}]) error {
	n := len(items)
	var (
		jobIDs     = make([]int64, 0, n)
		runIDs     = make([]uuid.UUID, 0, n)
		outputs    = make([]string, 0, n)
		attempts   = make([]int32, 0, n)
		startedAts = make([]*time.Time, 0, n)
		byJob      = make(map[int64]*batchItem[completeReq, struct{}], n)
		hasParent  bool
	)
	for _, item := range items {
		r := item.req
		jobIDs = append(jobIDs, r.job.ID)
		runIDs = append(runIDs, r.job.Args.RunID)
		outputs = append(outputs, string(r.output))
		attempts = append(attempts, int32(r.attempt)) //nolint:gosec // attempts are small
		startedAts = append(startedAts, r.startedAt)
		byJob[r.job.ID] = item
		hasParent = hasParent || r.hasParent
	}
	complete := func(db dbtx) ([]uuid.UUID, error) {
		rows, err := db.Query(ctx, c.q.completeRuns, jobIDs, runIDs, outputs, attempts, startedAts, c.asyncCompletion)
		if err != nil {
			return nil, fmt.Errorf("complete runs and their River jobs: %w", err)
		}
		defer rows.Close()
		var parents []uuid.UUID
		for rows.Next() {
			var (
				jobID     int64
				completed bool
				parentID  *uuid.UUID
			)
			if err := rows.Scan(&jobID, &completed, &parentID, nil, nil); err != nil {
				return nil, err
			}
			if !completed {
				byJob[jobID].err = errJobNotRunning // rescued or cancelled meanwhile: leave the run be
			}
			if parentID != nil {
				parents = append(parents, *parentID)
			}
		}
		return parents, rows.Err()
	}
	if !hasParent {
		_, err := complete(c.writePool())
		return err
	}
	return pgx.BeginFunc(ctx, c.writePool(), func(tx pgx.Tx) error {
		parents, err := complete(tx)
		if err != nil {
			return err
		}
		for _, parent := range parents {
			if err := c.wakeRunTx(ctx, tx, parent); err != nil {
				return fmt.Errorf("wake parent run %s: %w", parent, err)
			}
		}
		return nil
	})
}
