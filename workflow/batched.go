package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
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
		completes: wfruntime.NewBatcher(completeFlows, batchMax, completionSpacing, c.completer.Flush),
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
