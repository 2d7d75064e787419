package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
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
	job       *river.Job[runArgs]
	output    []byte
	startedAt *time.Time
}

// flushCompletes completes runs and their River jobs in one transaction:
// one call of River's JobSetStateIfRunningMany for all the jobs (the call
// river.JobCompleteTx makes for one), then one statement that completes the
// runs whose job was still running and NOTIFYs Result waiters of each, then
// the wake-up of waiting parents.
func (c *Client) flushCompletes(ctx context.Context, items []*batchItem[completeReq, struct{}]) error {
	return pgx.BeginFunc(ctx, c.writePool(), func(tx pgx.Tx) error {
		ids := make([]uuid.UUID, 0, len(items))
		outputs := make([]string, 0, len(items))
		attempts := make([]int32, 0, len(items))
		startedAts := make([]*time.Time, 0, len(items))
		params := &riverdriver.JobSetStateIfRunningManyParams{Schema: c.schema}
		now := time.Now().UTC()
		params.Now = &now
		byJob := make(map[int64]*batchItem[completeReq, struct{}], len(items))
		for _, item := range items {
			p := riverdriver.JobSetStateCompleted(item.req.job.ID, now, nil)
			params.ID = append(params.ID, p.ID)
			params.Attempt = append(params.Attempt, p.Attempt)
			params.ErrData = append(params.ErrData, p.ErrData)
			params.FinalizedAt = append(params.FinalizedAt, p.FinalizedAt)
			params.MetadataDoMerge = append(params.MetadataDoMerge, false)
			params.MetadataUpdates = append(params.MetadataUpdates, nil)
			params.ScheduledAt = append(params.ScheduledAt, p.ScheduledAt)
			params.State = append(params.State, p.State)
			byJob[p.ID] = item
		}
		jobs, err := c.river.Driver().UnwrapExecutor(tx).JobSetStateIfRunningMany(ctx, params)
		if err != nil {
			return fmt.Errorf("complete River jobs: %w", err)
		}
		for _, job := range jobs {
			if item := byJob[job.ID]; item != nil && job.State == rivertype.JobStateCompleted {
				ids = append(ids, item.req.job.Args.RunID)
				outputs = append(outputs, string(item.req.output))
				attempts = append(attempts, int32(item.req.attempt)) //nolint:gosec // attempts are small
				startedAts = append(startedAts, item.req.startedAt)
				delete(byJob, job.ID)
			}
		}
		for _, item := range byJob {
			item.err = errJobNotRunning
		}
		if len(ids) == 0 {
			return nil
		}
		rows, err := tx.Query(ctx, c.q.completeRuns, ids, outputs, attempts, startedAts)
		if err != nil {
			return fmt.Errorf("mark runs completed: %w", err)
		}
		var parents []uuid.UUID
		for rows.Next() {
			var parentID *uuid.UUID
			if err := rows.Scan(&parentID, nil); err != nil {
				rows.Close()
				return err
			}
			if parentID != nil {
				parents = append(parents, *parentID)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
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
