package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/engine"
)

// waitResult waits until run id finishes and returns its output or error.
func (c *Client) waitResult(ctx context.Context, id uuid.UUID) (json.RawMessage, error) {
	ch, unsubscribe, err := c.waiter.Subscribe(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unsubscribe()
	retry := resultRetryFirst
	for {
		outcome, err := c.db.RunOutcomeByID(ctx, c.pool, id)
		if errors.Is(err, engine.ErrNotFound) {
			return nil, ErrNotFound
		}
		if engine.Transient(err) && ctx.Err() == nil {
			// Its connection was cut (a proxy, a failover): read again on
			// another, for as long as the caller waits.
			select {
			case <-time.After(retry):
				retry = min(2*retry, resultRetryMax)
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("workflow: waiting for run %s: %w (last read: %w)", id, ctx.Err(), err)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("workflow: read run %s: %w", id, err)
		}
		retry = resultRetryFirst
		status := outcome.Status
		switch Status(status) {
		case StatusCompleted:
			return outcome.Output, nil
		case StatusFailed, StatusCancelled, StatusSkipped:
			runErr, err := decodeRunError(outcome.Error)
			if err != nil {
				return nil, err
			}
			if runErr == nil {
				runErr = &RunError{Kind: status, Message: "run " + status}
			}
			return nil, runErr
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("workflow: waiting for run %s (%s): %w", id, status, ctx.Err())
		}
	}
}

// A Result whose read of its run lost its connection reads again after
// resultRetryFirst, then twice as long each time up to resultRetryMax.
const (
	resultRetryFirst = 50 * time.Millisecond
	resultRetryMax   = time.Second
)
