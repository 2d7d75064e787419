package wfruntime

import (
	"context"
	"log/slog"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/internal/engine"
)

// Waiter lets a client's Result wait for runs to finish without polling:
// one connection per client (a Listener's own, not the pool's) LISTENs on
// engine.RunDoneChannel and wakes the waiters of each run announced there.
// It starts on first use and reconnects after errors; a reconnect wakes
// every waiter to re-read its run, so nothing is missed.
type Waiter struct {
	logger *slog.Logger
	pool   *pgxpool.Pool

	mu      sync.Mutex
	subs    map[uuid.UUID]map[chan struct{}]struct{}
	ready   chan struct{} // closed once LISTEN is active
	cancel  context.CancelFunc
	done    chan struct{}
	running bool
}

// NewWaiter is a Waiter that listens on a connection with pool's settings
// once first subscribed to, and logs to logger.
func NewWaiter(pool *pgxpool.Pool, logger *slog.Logger) *Waiter {
	return &Waiter{logger: logger, pool: pool, subs: map[uuid.UUID]map[chan struct{}]struct{}{}}
}

// Subscribe registers interest in run id and returns once LISTEN is active,
// so that a notification sent after the caller's next read of the run
// cannot be missed: the channel receives after each notification of id
// (and after a reconnect, when one may have been lost). The caller calls
// unsubscribe when done.
func (w *Waiter) Subscribe(ctx context.Context, id uuid.UUID) (<-chan struct{}, func(), error) {
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

func (w *Waiter) listen(ctx context.Context, ready, done chan struct{}) {
	defer close(done)
	readyOnce := sync.OnceFunc(func() { close(ready) })
	defer readyOnce() // never leave subscribers blocked
	l := &Listener{
		Logger:  w.logger,
		Pool:    w.pool,
		What:    "finished runs",
		Channel: FixedChannel(engine.RunDoneChannel),
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

func (w *Waiter) wakeAll() {
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

// Stop stops listening; a later Subscribe listens again.
func (w *Waiter) Stop() {
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
