package workflow

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/wfruntime"
)

// door is the Client's wfruntime.Door: Tributary's other packages reach the
// client's runtime, a hooks, through wfruntime.Of(c). Embedded through this
// unexported alias, it adds nothing to Client's API (see package wfruntime
// for the design).
type door = wfruntime.Door

// hooks is a Client seen as a wfruntime.Runtime.
type hooks Client

var _ wfruntime.Runtime = (*hooks)(nil)

func (h *hooks) client() *Client { return (*Client)(h) }

func (h *hooks) Pool() *pgxpool.Pool { return h.client().pool }

func (h *hooks) Queries() *engine.Queries { return h.client().db }

func (h *hooks) Bind(b *wfruntime.Binding) error { return h.client().bind(b) }

func (h *hooks) Now() time.Time { return h.client().now() }

func (h *hooks) SQLNow() *time.Time { return h.client().sqlNow() }

func (h *hooks) StartScheduledTx(ctx context.Context, tx pgx.Tx, s *wfruntime.ScheduledStart) (*wfruntime.Started, error) {
	return h.client().startScheduledTx(ctx, tx, s)
}

func (h *hooks) StartScheduledManyTx(ctx context.Context, tx pgx.Tx, starts []*wfruntime.ScheduledStart) ([]wfruntime.Started, error) {
	return h.client().startScheduledManyTx(ctx, tx, starts)
}

func (h *hooks) WakeAtTx(ctx context.Context, tx pgx.Tx, w *wfruntime.Wake) error {
	return h.client().wakeAtTx(ctx, tx, w)
}

func (h *hooks) CancelScheduleRunsTx(ctx context.Context, tx pgx.Tx, s *wfruntime.ScheduleRuns) (int, error) {
	return h.client().cancelScheduleRunsTx(ctx, tx, s)
}

// bind adds b to the River client before Start (River reads its workers
// bundle without a lock once started). A client that does not work jobs
// has nothing to add: it only inserts.
func (c *Client) bind(b *wfruntime.Binding) error {
	c.startStopMu.Lock()
	defer c.startStopMu.Unlock()
	if c.started {
		return fmt.Errorf("the workflow client is started already; create the %s client before calling the workflow client's Start", b.Name)
	}
	if slices.Contains(c.bindings, b.Name) {
		return fmt.Errorf("this workflow client has a %s client already; make one %s client per workflow client and share it", b.Name, b.Name)
	}
	if !c.works {
		c.bindings = append(c.bindings, b.Name)
		return nil
	}
	if b.Register != nil {
		if err := b.Register(c.riverWorkers); err != nil {
			return fmt.Errorf("register the %s workers: %w", b.Name, err)
		}
	}
	if b.Queue != "" {
		if !slices.Contains(c.riverQueues, b.Queue) {
			if err := c.river.Queues().Add(b.Queue, river.QueueConfig{MaxWorkers: b.QueueWorkers}); err != nil {
				return fmt.Errorf("add River queue %q: %w", b.Queue, err)
			}
			c.riverQueues = append(c.riverQueues, b.Queue)
			c.registry.AddQueue(b.Queue)
		}
		c.armQueues = append(c.armQueues, b.Queue)
	}
	if c.leaderElection {
		for _, job := range b.PeriodicJobs {
			if _, err := c.river.PeriodicJobs().AddSafely(job); err != nil {
				return fmt.Errorf("add the %s periodic job: %w", b.Name, err)
			}
		}
	}
	if b.Conns > 0 {
		c.bindingConns = append(c.bindingConns, bindingPool{name: b.Name, conns: b.Conns})
	}
	c.bindings = append(c.bindings, b.Name)
	return nil
}

// bindingPool is the pool of its own that a binding asked for
// (wfruntime.Binding.Conns): open while the client is started.
type bindingPool struct {
	name  string
	conns int
	pool  atomic.Pointer[pgxpool.Pool]
}

// openBindingPools opens the bindings' pools; their connections are opened
// as they are first needed.
func (c *Client) openBindingPools() error {
	for i := range c.bindingConns {
		bp := &c.bindingConns[i]
		config := c.pool.Config().Copy()
		config.MaxConns, config.MinConns = int32(bp.conns), 0
		pool, err := pgxpool.NewWithConfig(context.Background(), config)
		if err != nil {
			c.closeBindingPools()
			return fmt.Errorf("workflow: open the %s pool: %w", bp.name, err)
		}
		bp.pool.Store(pool)
	}
	return nil
}

// closeBindingPools closes the bindings' pools.
func (c *Client) closeBindingPools() {
	for i := range c.bindingConns {
		if pool := c.bindingConns[i].pool.Swap(nil); pool != nil {
			pool.Close()
		}
	}
}

func (h *hooks) BindingPool(name string) *pgxpool.Pool {
	c := h.client()
	for i := range c.bindingConns {
		if bp := &c.bindingConns[i]; bp.name == name {
			if pool := bp.pool.Load(); pool != nil {
				return pool
			}
		}
	}
	return c.pool
}

func (h *hooks) InputChecker(ctx context.Context, db engine.DBTX) (func(typ string, input []byte) error, error) {
	return h.client().inputChecker(ctx, db)
}

func (h *hooks) TypeServed(ctx context.Context, db engine.DBTX, typ string) (bool, error) {
	return h.client().typeServed(ctx, db, typ, "")
}

func (h *hooks) TypesServed(ctx context.Context, types []string) (map[string]bool, error) {
	return h.client().typesServed(ctx, types)
}

func (h *hooks) ValidateTypeName(name string) error { return validateName(name) }

func (h *hooks) Until(at time.Time) time.Duration {
	c := h.client()
	if c.dbClock == nil {
		return 0
	}
	return at.Sub(c.dbClock.now())
}

func (h *hooks) MockStep(typ, step string, fn any) { h.client().mocks.set(typ, step, fn) }

func (h *hooks) ReplayHistory(ctx context.Context, run any) error {
	r, ok := run.(*Run)
	if !ok {
		return fmt.Errorf("workflow: replay a %T; want a *workflow.Run", run)
	}
	return h.client().replayHistory(ctx, r)
}
