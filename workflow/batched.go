package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

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
	begins    *wfruntime.Batcher[uuid.UUID, *engine.AttemptRun]
	completes *wfruntime.Batcher[wfruntime.Completion, struct{}]
	memos     *wfruntime.Batcher[wfruntime.MemoWrite, struct{}]
}

// newBatchers lays out c's batches; what they write is wfruntime's
// (StepBatches, Completer.Flush), on c's batch pool.
func newBatchers(c *Client) *batchers {
	steps := &wfruntime.StepBatches{Queries: c.db, WritePool: c.writePool}
	return &batchers{
		begins:    wfruntime.NewBatcher(beginFlows, batchMax, 0, steps.FlushBegins),
		completes: wfruntime.NewBatcher(completeFlows, batchMax, completionSpacing, c.completer.Flush),
		memos:     wfruntime.NewBatcher(memoFlows, batchMax, 0, steps.FlushMemos),
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

// loadAttempt reads what an attempt of run runID starts from, the run and
// all its memos, in the begin batch (wfruntime.StepBatches.FlushBegins),
// and decodes it: nil when the run is not runnable (finished, cancelled).
func (c *Client) loadAttempt(ctx context.Context, runID uuid.UUID) (*attemptState, error) {
	r, err := c.batch.begins.Do(ctx, runID)
	if err != nil || r == nil {
		return nil, err
	}
	st := &attemptState{typ: r.Type, input: r.Input, scheduleID: r.ScheduleID, fireAt: r.FireAt, parentID: r.ParentID, metadata: r.Metadata}
	if err := json.Unmarshal(r.Memos, &st.memos); err != nil {
		return nil, fmt.Errorf("decode step memos of run %s: %w", r.ID, err)
	}
	return st, nil
}

// writeMemo stores m for runID and returns once it is committed. fresh says
// the attempt found no record of the step when it started.
func (c *Client) writeMemo(ctx context.Context, runID uuid.UUID, m *memo, startedAt time.Time, fresh bool) error {
	_, err := c.batch.memos.Do(ctx, wfruntime.MemoWrite{Row: m.row(runID, startedAt, c.now().UTC()), Fresh: fresh})
	return err
}

// row is m as the step record of run runID, started at startedAt and
// finished at at, that the memo batch stores.
func (m *memo) row(runID uuid.UUID, startedAt, at time.Time) *engine.Memo {
	return &engine.Memo{
		RunID: runID, Name: m.Name, Kind: string(m.Kind), Status: string(m.Status),
		ResultType: m.ResultType, Output: m.Output, StartedAt: startedAt, FinishedAt: at, Seq: m.Seq,
	}
}
