package workflow

// The worker registry (see ARCHITECTURE.md, and the top of
// internal/wfruntime/registry.go for how death is judged): every started
// working client has a row in tributary_workers naming the workflow types it
// serves, refreshed by a heartbeat every WorkerHeartbeatInterval. Its
// heartbeat, the rescue of dead clients' jobs and of the client's own
// orphans after a failover are wfruntime.Registry's; what reads the registry
// (Workers, TypeServed, the input limits) and what ties the Registry to this
// client (newRegistry) are here.

import (
	"context"
	"fmt"
	"time"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/wfruntime"
)

// WorkerHeartbeatInterval is how often a started working client refreshes
// its row in the worker registry, looks for dead clients to rescue, and arms
// the timers of the schedule jobs due next.
const WorkerHeartbeatInterval = time.Second

// workerLiveWithin is how fresh a heartbeat must be for its client to count
// as live in Workers and TypeServed (wfruntime.LiveWithin).
const workerLiveWithin = wfruntime.LiveWithin

// Worker is a working client as the worker registry records it.
type Worker struct {
	// ClientID is the River client's ID (river.Config.ID): River UI and
	// river_job.attempted_by name clients by it.
	ClientID string
	// Hostname and PID identify the client's process.
	Hostname string
	PID      int
	// WorkflowTypes are the registered workflow types whose queue the client
	// works, sorted.
	WorkflowTypes []string
	// Queues are the River queues the client works, sorted.
	Queues []string
	// StartedAt is when the client started; HeartbeatAt its latest beat.
	StartedAt   time.Time
	HeartbeatAt time.Time
	// Live is true when the heartbeat is recent (within five heartbeat
	// intervals). A client that stopped cleanly has no row; a dead one keeps
	// its row, not live, until a live client rescues its jobs.
	Live bool
}

// Workers returns the worker registry: the working clients of the schema,
// live ones first, then by client ID.
func (c *Client) Workers(ctx context.Context) ([]*Worker, error) {
	rows, err := c.db.Workers(ctx, c.pool, workerLiveWithin)
	if err != nil {
		return nil, fmt.Errorf("workflow: read the worker registry: %w", err)
	}
	workers := make([]*Worker, len(rows))
	for i, w := range rows {
		workers[i] = &Worker{
			ClientID: w.ClientID, Hostname: w.Hostname, PID: w.PID, WorkflowTypes: w.WorkflowTypes, Queues: w.Queues,
			StartedAt: w.StartedAt, HeartbeatAt: w.HeartbeatAt, Live: w.Live,
		}
	}
	return workers, nil
}

// TypeServed reports whether a live working client (on any host) serves
// workflow type typ: it has the type registered and works the type's
// default queue (the registry records a type only with its default queue;
// a run sent to another queue needs a client that works that queue). A run
// of a type that no live client serves stays pending until one starts.
func (c *Client) TypeServed(ctx context.Context, typ string) (bool, error) {
	return c.typeServed(ctx, c.pool, typ, "")
}

// typeServed is TypeServed within db, for runs in queue (any queue when "").
func (c *Client) typeServed(ctx context.Context, db engine.DBTX, typ, queue string) (bool, error) {
	ok, err := c.db.TypeServed(ctx, db, typ, queue, workerLiveWithin)
	if err != nil {
		return false, fmt.Errorf("workflow: read the worker registry: %w", err)
	}
	return ok, nil
}

// typesServed is TypeServed for many types in one query: the result maps
// each of types to whether a live client serves it.
func (c *Client) typesServed(ctx context.Context, types []string) (map[string]bool, error) {
	served, err := c.db.TypesServed(ctx, c.pool, types, workerLiveWithin)
	if err != nil {
		return nil, fmt.Errorf("workflow: read the worker registry: %w", err)
	}
	return served, nil
}

// inputChecker reads the live workers' input limits on db and returns the
// check of an input (wfruntime.Runtime.InputChecker).
func (c *Client) inputChecker(ctx context.Context, db engine.DBTX) (func(typ string, input []byte) error, error) {
	limits, err := c.db.WorkerInputLimits(ctx, db, workerLiveWithin)
	if err != nil {
		return nil, fmt.Errorf("workflow: read the input limits of the live workers: %w", err)
	}
	return func(typ string, input []byte) error {
		// Said so that a user of the tributary command, who has no Config,
		// knows the limit is a program's setting, not a flag.
		limit, who := c.maxInputBytes, "the limit of this program's workflow client: Config.MaxInputBytes, 1 MiB unless the program sets it"
		if workers, ok := limits[typ]; ok && workers < limit {
			limit, who = workers, fmt.Sprintf("the limit of the workers that serve %q: their program's Config.MaxInputBytes", typ)
		}
		if len(input) > limit {
			return &ValidationError{Field: "input", Problem: fmt.Sprintf("is %d bytes encoded, the limit is %d (%s); store large data elsewhere and pass a reference", len(input), limit, who)}
		}
		if reg, ok := c.types[typ]; ok && reg.checkInput != nil {
			return reg.checkInput(input)
		}
		return nil
	}, nil
}

// NoWorkerError is returned, when the caller asked for it
// (StartOpts.RequireWorker, schedule.CreateParams.RequireWorker), instead of
// starting a run or creating a schedule of a workflow type that no live
// client serves. Nothing is written.
type NoWorkerError struct {
	// WorkflowType is the type nobody serves.
	WorkflowType string
}

func (e *NoWorkerError) Error() string {
	return fmt.Sprintf("workflow: no live worker serves workflow type %q (no running client registered it in the last %s); "+
		"start a client that registers it and works its queue, check the type's spelling, or do not require a worker",
		e.WorkflowType, workerLiveWithin)
}

// newRegistry is the client's wfruntime.Registry: the heartbeat and the
// rescues are there; what they need of this client (its types and their
// queues, its limits, its clock, its waker, the jobs it holds) is here.
// NewClient calls it once the River client and the waker are built.
func newRegistry(c *Client) *wfruntime.Registry {
	types := make(map[string]string, len(c.types))
	for name, reg := range c.types {
		types[name] = reg.opts.Queue
	}
	return wfruntime.NewRegistry(wfruntime.RegistryConfig{
		Logger: c.logger, Pool: c.pool, Queries: c.db, Jobs: c.jobs, ClientID: c.river.ID(),
		Types: types, Queues: c.riverQueues,
		MaxInputBytes: c.maxInputBytes, TenantLimits: c.typeTenantLimits(), TenantRates: c.typeTenantRates(),
		MeasureClock: func(ctx context.Context, read func() (time.Time, error)) error {
			return c.readDatabaseClock(ctx, false, read)
		},
		RealNow: c.realNow, ArmWaiting: c.waker.ArmWaiting, Held: &c.held, Pending: &c.pending,
		Reserved: c.driver.ReservedJobs,
	})
}
