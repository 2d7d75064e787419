package workflow

import (
	"context"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/wfruntime"
)

// A worker frees its River slot as soon as the workflow function returns,
// and the run completes with its job by whichever of two writers gets there
// first: the engine's completion batch (wfruntime.Completer.Flush) or
// River's own completer, through River's pilot. wfruntime.Completer says
// how, and what Config.AsyncCompletion changes.

// maxPendingCompletions bounds the runs whose attempts have ended but whose
// completion has not committed yet (with AsyncCompletion: is not durable
// yet). When it is reached, a worker waits for its own completion, as it
// did before, which slows fetching down to what the database commits
// (wfruntime.Pending.Limit).
const maxPendingCompletions = 2 * batchMax

// newCompleter is the engine's Completer of c (see internal/engine): River's
// completer completes a workflow run together with its job.
func newCompleter(c *Client) *wfruntime.Completer {
	return wfruntime.NewCompleter(wfruntime.CompleterConfig{
		Logger: c.logger, Pool: c.pool, Queries: c.db, Jobs: c.jobs,
		WritePool: c.writePool, Pending: &c.pending, Async: c.asyncCompletion,
		ClientID:   func() string { return c.river.ID() },
		KindPrefix: workflowKindPrefix, SQLNow: c.sqlNow, WakeRunTx: c.wakeRunTx, RunCompleted: runCompleted(c.mw),
		FailBatch: c.testFailCompletions.Load, FailPilot: c.testFailPilot.Load,
	})
}

// runCompleted reports a completed run to m's HookRunFinished; nil when
// none is installed, so that the completion statement does not say which
// runs it completed.
func runCompleted(m *middlewares) func(ctx context.Context, runID uuid.UUID, typ string) {
	if len(m.finished) == 0 {
		return nil
	}
	return func(ctx context.Context, runID uuid.UUID, typ string) {
		m.runFinished(ctx, runID, typ, StatusCompleted)
	}
}
