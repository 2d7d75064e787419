package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

const (
	fetchCooldown     = 2 * time.Millisecond  // as River's riverbench
	fetchPollInterval = 20 * time.Millisecond // as River's riverbench

	// stallTimeout fails a case when no item completes for this long.
	stallTimeout = time.Minute

	// stopTimeout bounds stopping a case's client.
	stopTimeout = time.Minute
)

// runCase runs c once on a schema of its own and returns its measurement.
// The schema is dropped before runCase returns, also when the case fails;
// the returned Round names it even then.
func runCase(ctx context.Context, admin *pgxpool.Pool, c benchCase, config *Config) (_ *Round, err error) {
	s, err := newScratch(ctx, admin, config)
	if err != nil {
		return nil, err
	}
	round := &Round{Schema: s.schema}
	defer func() { err = errors.Join(err, s.drop(ctx, admin)) }()

	r, err := c.prepare(ctx, s, config)
	if err != nil {
		return round, err
	}
	if round.Elapsed, err = measure(ctx, r, config.Items); err != nil {
		return round, err
	}

	items, steps, err := r.completed(ctx)
	switch {
	case err != nil:
		return round, fmt.Errorf("counting what completed: %w", err)
	case items != config.Items:
		return round, fmt.Errorf("%d items completed, want %d", items, config.Items)
	case steps != c.steps*config.Items:
		return round, fmt.Errorf("%d steps completed, want %d", steps, c.steps*config.Items)
	}
	round.Completed = items
	round.Rate = float64(items) / round.Elapsed.Seconds()
	return round, nil
}

// measure starts r, whose n items are inserted, and returns the time until
// River reported n jobs of r's kind completed. It stops r before returning,
// also when it fails.
func measure(ctx context.Context, r *runner, n int) (_ time.Duration, err error) {
	events, cancelSub := r.river.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: n + 1000, // River drops events that overflow the channel
		Kinds: []river.EventKind{
			river.EventKindJobCompleted, river.EventKindJobFailed,
			river.EventKindJobCancelled, river.EventKindJobSnoozed,
		},
	})
	defer cancelSub()

	began := time.Now()
	if err := r.start(ctx); err != nil {
		return 0, fmt.Errorf("starting the client: %w", err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
		defer cancel()
		if stopErr := r.stop(stopCtx); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the client: %w", stopErr))
		}
	}()

	fed := make(chan error, 1)
	if r.feed != nil {
		feedCtx, cancelFeed := context.WithCancel(ctx)
		defer cancelFeed()
		go func() { fed <- r.feed(feedCtx) }()
	} else {
		fed <- nil
	}
	waitCtx, cancelWait := context.WithCancelCause(ctx)
	defer cancelWait(nil)
	go func() {
		// A feed that fails leaves items never inserted: stop waiting.
		if err := <-fed; err != nil {
			cancelWait(fmt.Errorf("inserting the items: %w", err))
		}
	}()
	if err := waitCompleted(waitCtx, events, r.kind, n); err != nil {
		if cause := context.Cause(waitCtx); cause != nil && ctx.Err() == nil {
			return 0, cause
		}
		return 0, err
	}
	return time.Since(began), nil
}

// waitCompleted reads events until n jobs of kind completed. Other kinds
// (the workflow client's own maintenance jobs) are ignored. A job of kind
// that ends otherwise, no completion for stallTimeout, or the end of ctx is
// an error.
func waitCompleted(ctx context.Context, events <-chan *river.Event, kind string, n int) error {
	stall := time.NewTimer(stallTimeout)
	defer stall.Stop()
	for completed := 0; completed < n; {
		select {
		case ev, ok := <-events:
			if !ok {
				return errors.New("River closed the event subscription")
			}
			if ev.Job.Kind != kind {
				continue
			}
			if ev.Kind != river.EventKindJobCompleted {
				return fmt.Errorf("job %d (%s) ended %s%s", ev.Job.ID, ev.Job.Kind, ev.Kind, lastError(ev))
			}
			completed++
			stall.Reset(stallTimeout)
		case <-stall.C:
			return fmt.Errorf("no item completed for %s; %d of %d did", stallTimeout, completed, n)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// lastError is ": " and the last error of ev's job, or "" when it has none.
func lastError(ev *river.Event) string {
	if len(ev.Job.Errors) == 0 {
		return ""
	}
	return ": " + ev.Job.Errors[len(ev.Job.Errors)-1].Error
}
