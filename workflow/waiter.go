package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/wfruntime"
)

// waiter lets Result wait for runs to finish without polling: one connection
// per client (a listener's own, not the pool's) LISTENs on engine.RunDoneChannel
// and wakes the waiters of each run announced there. It starts on first use
// and reconnects after errors; a reconnect wakes every waiter to re-read its
// run, so nothing is missed.
type waiter struct {
	logger *slog.Logger
	pool   *pgxpool.Pool

	mu      sync.Mutex
	subs    map[uuid.UUID]map[chan struct{}]struct{}
	ready   chan struct{} // closed once LISTEN is active
	cancel  context.CancelFunc
	done    chan struct{}
	running bool
}

func newWaiter(pool *pgxpool.Pool, logger *slog.Logger) *waiter {
	return &waiter{logger: logger, pool: pool, subs: map[uuid.UUID]map[chan struct{}]struct{}{}}
}

// waitResult waits until run id finishes and returns its output or error.
func (c *Client) waitResult(ctx context.Context, id uuid.UUID) (json.RawMessage, error) {
	ch, unsubscribe, err := c.waiter.subscribe(ctx, id)
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

// subscribe registers interest in id and returns once LISTEN is active, so
// a notification sent after the caller's next read cannot be missed.
func (w *waiter) subscribe(ctx context.Context, id uuid.UUID) (<-chan struct{}, func(), error) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	if w.subs[id] == nil {
		w.subs[id] = map[chan struct{}]struct{}{}
	}
	w.subs[id][ch] = struct{}{}
	if !w.running {
		w.running = true
		w.ready = make(chan struct{})
		w.done = make(chan struct{})
		lctx, cancel := context.WithCancel(context.Background())
		w.cancel = cancel
		go w.listen(lctx, w.ready, w.done)
	}
	ready := w.ready
	w.mu.Unlock()

	unsubscribe := func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.subs[id], ch)
		if len(w.subs[id]) == 0 {
			delete(w.subs, id)
		}
	}
	select {
	case <-ready:
		return ch, unsubscribe, nil
	case <-ctx.Done():
		unsubscribe()
		return nil, nil, ctx.Err()
	}
}

func (w *waiter) listen(ctx context.Context, ready, done chan struct{}) {
	defer close(done)
	readyOnce := sync.OnceFunc(func() { close(ready) })
	defer readyOnce() // never leave subscribers blocked
	l := &wfruntime.Listener{
		Logger:  w.logger,
		Pool:    w.pool,
		What:    "finished runs",
		Channel: wfruntime.FixedChannel(engine.RunDoneChannel),
		Listening: func() {
			w.wakeAll() // anything that finished while (re)connecting
			readyOnce()
		},
		Notify: func(payload string) {
			id, err := uuid.Parse(payload)
			if err != nil {
				return
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			for ch := range w.subs[id] {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		},
	}
	l.Run(ctx)
}

func (w *waiter) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, chans := range w.subs {
		for ch := range chans {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

func (w *waiter) stop() {
	w.mu.Lock()
	if !w.running {
		w.mu.Unlock()
		return
	}
	w.running = false
	cancel, done := w.cancel, w.done
	w.mu.Unlock()
	cancel()
	<-done
}
