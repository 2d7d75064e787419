package workflow

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
)

// Handle refers to a run that was started, typed by the workflow's output.
type Handle[Out any] struct {
	// ID is the run's id (a UUIDv7, so ids sort by start time).
	ID uuid.UUID

	// Existing is true when StartOpts.IdempotencyKey matched a run started
	// earlier, or when StartOpts.Debounce joined the start to the run of an
	// open window: no new run was started and ID is that run's.
	Existing bool

	client *Client
}

// Handle returns the handle of run id of this workflow type, started
// elsewhere (by a schedule's Trigger, another process, an operator), so that
// its typed Result can be awaited. It does not check that the run exists.
func (d *Definition[In, Out]) Handle(c *Client, id uuid.UUID) *Handle[Out] {
	return &Handle[Out]{ID: id, client: c}
}

// Result waits until run id finishes and returns its output as JSON, or its
// error as a *RunError, like Handle.Result: on a Postgres notification,
// across processes, without polling; ctx bounds the wait. Returns
// ErrNotFound for an unknown run.
func (c *Client) Result(ctx context.Context, id uuid.UUID) (json.RawMessage, error) {
	return c.waitResult(ctx, id)
}

// Get reads the run's current state.
func (h *Handle[Out]) Get(ctx context.Context) (*Run, error) { return h.client.GetRun(ctx, h.ID) }

// Result waits until the run finishes and returns its output, or its error
// as a *RunError (errors.Is(err, ErrCancelled) for a cancelled run). It waits
// on a Postgres notification, so it works across processes and does not
// poll; ctx bounds the wait.
func (h *Handle[Out]) Result(ctx context.Context) (Out, error) {
	var out Out
	raw, err := h.client.waitResult(ctx, h.ID)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("workflow: decode output of run %s into %s: %w", h.ID, typeName[Out](), err)
	}
	return out, nil
}
