package workflow

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/wfruntime"
	"github.com/tributary-go/tributary/jobs"
)

// Recommended River settings that Tributary applies to the River client it
// builds when Config.River leaves them zero. River's defaults (100 ms fetch
// cooldown) cap a queue of 20 workers at about 200 jobs per second; workflows
// that sleep, wait and replay are short jobs, so Tributary fetches sooner.
const (
	// DefaultFetchCooldown is the shortest gap between two fetches of a
	// queue. River's own benchmark uses the same value.
	DefaultFetchCooldown = 2 * time.Millisecond

	// DefaultFetchPollInterval is how often an idle queue polls when no
	// LISTEN/NOTIFY wake-up arrived. New runs, signals and child results wake
	// workers through notifications, so the poll is only a safety net.
	DefaultFetchPollInterval = 1 * time.Second

	// DefaultMaxInputBytes bounds the encoded input of a run and the payload
	// of a signal.
	DefaultMaxInputBytes = 1 << 20
)

// Config configures a Client.
type Config struct {
	// Clock is the time the engine, and a schedule client bound to it,
	// decides and records by: a Sleep's wake time and a WaitSignal
	// timeout's deadline, the times of runs, steps, errors, signals and
	// cancellations (created, started, finished, updated, paused, revoked,
	// consumed), retention and repair cutoffs, and a schedule's first slot,
	// whether a slot fired late, when a slot's firing pass may start,
	// resume and trigger times. Tests set it to replay a stretch of the
	// calendar (DST days, say) through real firing, or to a virtual clock.
	//
	// With a Clock set, the engine's SQL takes the clock's time as its now
	// (coalesce($n, now()), as River's SQL does), and River follows it too:
	// unless River.Test.Time is set, it becomes a rivertype.TimeGenerator
	// of this clock, so River's inserts (created_at, scheduled_at), its
	// fetch (a job is due when its scheduled_at is not after the clock),
	// its scheduler and its completer (finalized_at) and its leader
	// elections use it. A job scheduled past the clock's now waits until
	// the clock gets there: the client's exact timers only wake what the
	// clock has reached, and River's scheduler, on the leader every few
	// seconds of real time, wakes the rest. Real time still runs timers,
	// batching deadlines, retry backoffs, River's job timeouts and the
	// worker registry's heartbeats (a client's liveness is the database's
	// now(), so a clock that jumps never makes live clients look dead), and
	// River's maintenance services that read the machine's clock
	// themselves (its rescuer, job and queue cleaners, reindexer) keep it.
	//
	// Defaults to the database's clock. In SQL the database's now()
	// decides what a statement records or compares (the now parameter is
	// NULL, which costs nothing), as River's own statements do, so that
	// application servers whose clocks drift agree on when a slot is due
	// and when a sleep ends. In Go the client reads it as this machine's
	// clock corrected by its offset from Postgres's clock_timestamp(),
	// measured when the client starts and at every heartbeat of a working
	// client (to within half a round trip): a wake time or a slot decided
	// in Go is the database's instant, and the exact timers that wake jobs
	// are set by it. An offset over a second is logged as a warning.
	Clock func() time.Time

	// localClock replaces time.Now under the database's clock, for tests
	// that skew a client's machine clock (export_test.go).
	localClock func() time.Time

	// Maintenance configures the River periodic jobs that keep a working
	// client's runs healthy: their repair and their retention (see package
	// jobs for what each does, its defaults and limits). NewClient refuses
	// a value out of its limits.
	//
	// Defaults to jobs' defaults.
	Maintenance *jobs.Config

	// Logger receives the engine's logs. River's client gets it too unless
	// River.Logger is set.
	//
	// Defaults to a logger that discards everything.
	Logger *slog.Logger

	// Middleware observe and wrap the engine's work: starting runs,
	// attempts, steps, signals, and the runs started and finished (see
	// Middleware for the interfaces it looks for). The first listed wraps
	// the others. tributaryotel.NewMiddleware is one: OpenTelemetry spans
	// and metrics. With none, the engine's hot paths call nothing for
	// them.
	//
	// Defaults to none.
	Middleware []Middleware

	// MaxInputBytes bounds a run's encoded input and a signal's payload; a
	// larger one is refused with a *ValidationError before anything is
	// written.
	//
	// Defaults to DefaultMaxInputBytes (1 MiB).
	MaxInputBytes int

	// River configures the River client that Tributary builds and runs the
	// workflows on. This is how an application already on River adds
	// Tributary: it passes its own river.Config here, with its workers,
	// queues, middleware, hooks, error handler and retry policy, and uses
	// River() for its own jobs, in place of the client river.NewClient
	// built. NewClient builds the River client on a driver of its own
	// (riverpgxv5's, with a pilot that completes a run and its River job in
	// one transaction when River's completer writes the job), and changes
	// only this in a copy of the configuration:
	//
	//   - Workers (made when nil) gets one worker per workflow in
	//     Workflows, next to the application's, and, on a working client,
	//     the maintenance jobs' (package jobs) with their periodic jobs;
	//     schedule.New adds the slot-firing worker, the schedule queue and
	//     the reconciler.
	//   - SkipUnknownJobCheck is on: a client starts runs of workflow types
	//     that other processes work.
	//   - FetchOnlyKnownKinds is on: a client never takes a job whose kind
	//     it has no worker for, which would fail it and use up an attempt
	//     of a run that another process would have run.
	//   - FetchCooldown and FetchPollInterval, when zero, are
	//     DefaultFetchCooldown and DefaultFetchPollInterval.
	//   - Schema and Logger, when unset, are this Config's.
	//
	// Queues nil makes an insert-only client: it starts and reads runs but
	// does not work them. RescueStuckJobsAfter keeps River's default (an
	// hour): a client that dies is found by the worker registry's heartbeat
	// (see Workers) and its workflow jobs are rescued within seconds, while
	// a live client's long step is never taken from under it.
	//
	// A plain River client of the application (another process, an older
	// deployment) that works the same queues without FetchOnlyKnownKinds
	// fetches workflow jobs and fails them as unknown kinds, each failure
	// using up an attempt of the run. Give such clients
	// FetchOnlyKnownKinds: true (and LeaderElectionDisabled: true, so that
	// their rescuer leaves workflow jobs alone), or keep them off the
	// workflows' queues. Tributary cannot refuse it from here; the next
	// attempt, on a Tributary client, logs an error naming the offending
	// client and queue.
	//
	// Defaults to an insert-only River configuration.
	River *river.Config

	// Schema is the Postgres schema of Tributary's tables, which must be the
	// schema of River's tables too (River.Schema is set to it).
	//
	// Defaults to "", the connection's search_path.
	Schema string

	// AsyncCompletion lets the transaction that completes runs commit
	// asynchronously (synchronous_commit = off for that transaction only),
	// so that it does not wait for a WAL flush. Workers do not wait for
	// their runs' completion anyway (see the package docs); what this
	// saves is the flush in each completion batch, which matters where a
	// flush is slow (network disks). The completions are made durable
	// later, off every run's path, by River's completer: at most one flush
	// per batch of its own, none when the WAL is flushed already.
	// Atomicity is unchanged: a run and its River job complete together
	// or not at all, and memos are always written synchronously.
	//
	// Result may then return a run's output before its completion is
	// durable, and a crash of Postgres (not of the application) can take
	// the last completions back: those not yet flushed, up to three times
	// wal_writer_delay (600 ms) old by Postgres's documentation. The client
	// that committed them holds each until it is durable, and once Postgres
	// is back its River completer (which retries until the database
	// answers) completes those runs again, with the output that Result
	// returned and the same memos: no step runs again, and no run fails.
	// Only if the client is gone too (it stopped during the outage, or a
	// machine that ran both lost power) are those completions lost: their
	// jobs are running again after recovery, River rescues them
	// (RescueStuckJobsAfter), and each run replays from its memos. The
	// memo of its last step was stored with the completion and is lost
	// with it, so that step runs again, and a run whose last step, or code
	// after it, is not deterministic may then complete with another output
	// than the one Result returned. Postgres never makes a later commit
	// durable without the earlier ones, so nothing that followed a lost
	// completion (a parent's next step, a queued slot's run) survives the
	// crash either.
	//
	// Defaults to false: a completion is durable when the run reads
	// completed, and Result never returns an output that a crash can take
	// back.
	AsyncCompletion bool

	// CompletedRunRetention is how long completed and skipped runs are
	// kept after they finish, FailedRunRetention how long failed and
	// cancelled ones are; then the leader's retention job deletes them with
	// their steps and signals (see DeleteExpiredRuns). A negative value
	// keeps them forever. Unfinished runs are never deleted. Both apply
	// where this client leads River's maintenance, so give every working
	// client the same values.
	//
	// Default to DefaultCompletedRunRetention (a day) and
	// DefaultFailedRunRetention (a week), as River's job cleaner.
	CompletedRunRetention time.Duration
	FailedRunRetention    time.Duration

	// Workflows are the workflow types this client runs and can start by
	// name. Each becomes one River worker, job kind "workflow:<name>".
	// Starting a typed Definition does not require it to be listed here.
	//
	// Defaults to none.
	Workflows []Registrable
}

// Client starts, reads, signals and cancels workflow runs, and runs the
// workflows registered in its Config on a River client. It is safe for
// concurrent use.
type Client struct {
	door // Tributary's own packages' way in (hooks.go)

	logger *slog.Logger
	clock  func() time.Time // Config.Clock, or dbClock.now
	// realNow is the database's time by this process's reading, for what
	// runs by real time whatever the clock (the registry's orphan rescue):
	// dbClock.now, or time.Now under an injected Config.Clock.
	realNow         func() time.Time
	dbClock         *dbClock           // nil under an injected Config.Clock
	held            wfruntime.HeldJobs // the Tributary jobs being worked, for the orphan rescue (wfruntime.Registry)
	mw              *middlewares
	maxInputBytes   int
	asyncCompletion bool
	// completedRetention and failedRetention are Config's retentions,
	// defaults applied.
	completedRetention time.Duration
	failedRetention    time.Duration
	pool               *pgxpool.Pool
	db                 *engine.Queries // Tributary's SQL; see internal/engine
	jobs               *engine.Jobs    // River's job state; see internal/engine
	driver             *engine.Driver  // River's driver, with the engine's pilot (fair turns, tenant limits and rates)
	maintenance        *jobs.Config
	river              *river.Client[pgx.Tx]
	schema             string
	types              map[string]*registration
	waiter             *wfruntime.Waiter
	waker              *wfruntime.Waker
	repairer           *wfruntime.Repairer  // RepairRuns and the announced repairs
	completer          *wfruntime.Completer // the runs' completions: the batch's and River's completer's
	registry           *wfruntime.Registry  // the worker registry's heartbeat and rescues; nil unless the client works runs
	batch              *batchers
	batchPool          atomic.Pointer[pgxpool.Pool] // batched writes while started; see newBatchPool
	startGroups        startGroups                  // Start and StartByName written together (start_group.go)
	pending            wfruntime.Pending            // runs completing without their worker waiting; see wfruntime.Completer
	mocks              stepMocks                    // steps a test replaced (package tributarytest)
	foreign            wfruntime.ForeignFetches     // plain River clients that failed workflow jobs

	testFailCompletions atomic.Bool // tests: every completion batch fails, leaving the runs to River's completer
	testFailPilot       atomic.Bool // tests: River's completer fails to complete workflow jobs
	testIgnoreRepairs   atomic.Bool // tests: the announced repairs are dropped, leaving them to RepairRuns

	works bool // River queues are configured: Start starts River

	// armQueues are the queues whose waiting jobs a started working client
	// times (see wfruntime.Waker.Start): the schedule machinery's, when it works it.
	armQueues []string

	startStopMu sync.Mutex
	started     bool

	// What Bind needs of the River configuration: the workers bundle
	// River was given, whether this client takes part in leader elections,
	// the queues it works, and the names of the bindings made (wfruntime.Binding).
	riverWorkers   *river.Workers
	leaderElection bool
	riverQueues    []string
	bindings       []string
	bindingConns   []bindingPool // the bindings' own pools (wfruntime.Binding.Conns)
}

// NewClient validates config, registers the workflows on the River workers
// bundle and builds the River client. It does not touch the database; call
// Start to begin working runs (or nothing, for an insert-only client).
func NewClient(pool *pgxpool.Pool, config *Config) (*Client, error) {
	if pool == nil {
		return nil, &ValidationError{Field: "pool", Problem: "is nil; pass the *pgxpool.Pool of your database"}
	}
	if config == nil {
		config = &Config{}
	}
	logger := config.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	maxInput := orDefault(config.MaxInputBytes, DefaultMaxInputBytes)
	if config.Maintenance != nil {
		if err := config.Maintenance.Validate(); err != nil {
			return nil, &ValidationError{Field: "Config.Maintenance", Problem: err.Error()}
		}
	}
	if maxInput < 0 {
		return nil, &ValidationError{Field: "Config.MaxInputBytes", Problem: "is negative; leave it 0 for the 1 MiB default"}
	}

	mw, err := newMiddlewares(config.Middleware)
	if err != nil {
		return nil, err
	}

	riverConfig := &river.Config{}
	if config.River != nil {
		riverConfig = config.River.WithDefaults()
		// WithDefaults fills FetchCooldown and FetchPollInterval with River's
		// own defaults; only override what the caller left unset.
		if config.River.FetchCooldown == 0 {
			riverConfig.FetchCooldown = DefaultFetchCooldown
		}
		if config.River.FetchPollInterval == 0 {
			riverConfig.FetchPollInterval = DefaultFetchPollInterval
		}
	} else {
		riverConfig.FetchCooldown = DefaultFetchCooldown
		riverConfig.FetchPollInterval = DefaultFetchPollInterval
	}
	if riverConfig.Schema == "" {
		riverConfig.Schema = config.Schema
	}
	if riverConfig.Schema != config.Schema {
		return nil, &ValidationError{Field: "Config.Schema", Problem: fmt.Sprintf("is %q but River.Schema is %q; Tributary's tables live beside River's, so leave River.Schema empty or equal", config.Schema, riverConfig.Schema)}
	}
	// WithDefaults gave River a logger of its own; use the client's unless
	// the caller chose one for River.
	if config.River == nil || config.River.Logger == nil {
		riverConfig.Logger = logger
	}
	if riverConfig.Workers == nil && (len(config.Workflows) > 0 || len(riverConfig.Queues) > 0) {
		riverConfig.Workers = river.NewWorkers()
	}

	// A client starts runs of workflow types that other processes work (a
	// schedule's slot fires in whichever process holds its job, a CLI
	// triggers runs): River must not refuse jobs of kinds this client has
	// no worker for.
	riverConfig.SkipUnknownJobCheck = true
	// And it must not take jobs of kinds it cannot work: River would fail
	// them, using up the attempts of runs that another process would have
	// run. (River's rescuer, on the leader, still discards a stuck job whose
	// kind the leader does not know; RepairRuns then gives the run a new job
	// with the attempts that remain.)
	riverConfig.FetchOnlyKnownKinds = true

	clock, realNow := config.Clock, time.Now
	var dbc *dbClock
	if clock == nil {
		dbc = &dbClock{local: config.localClock, logger: logger}
		if dbc.local == nil {
			dbc.local = time.Now
		}
		clock, realNow = dbc.now, dbc.now
	}
	db := engine.NewQueries(config.Schema)
	c := &Client{
		clock:              clock,
		realNow:            realNow,
		dbClock:            dbc,
		logger:             logger,
		mw:                 mw,
		maxInputBytes:      maxInput,
		asyncCompletion:    config.AsyncCompletion,
		completedRetention: orDefault(config.CompletedRunRetention, DefaultCompletedRunRetention),
		failedRetention:    orDefault(config.FailedRunRetention, DefaultFailedRunRetention),
		pool:               pool,
		db:                 db,
		maintenance:        config.Maintenance.WithDefaults(),
		schema:             config.Schema,
		types:              make(map[string]*registration, len(config.Workflows)),
		works:              len(riverConfig.Queues) > 0,
	}
	c.door = wfruntime.NewDoor((*hooks)(c))
	c.jobs = engine.NewJobs(db).WithClock(clockTime{c})
	c.pending.Limit = maxPendingCompletions
	for _, def := range config.Workflows {
		if def == nil {
			return nil, &ValidationError{Field: "Config.Workflows", Problem: "contains a nil definition"}
		}
		reg := def.definition()
		if reg.err != nil {
			return nil, reg.err
		}
		if _, dup := c.types[reg.name]; dup {
			return nil, &ValidationError{Field: "Config.Workflows", Problem: fmt.Sprintf("workflow %q is listed twice; list each workflow once", reg.name)}
		}
		c.types[reg.name] = reg
		if err := addWorker(riverConfig.Workers, c, reg); err != nil {
			return nil, fmt.Errorf("workflow: register %q on River workers: %w", reg.name, err)
		}
	}

	// River runs periodic jobs on the leader only; a client that never leads
	// leaves the repair to one that does.
	if c.works {
		err := jobs.Add(riverConfig,
			jobs.Job{Kind: jobs.KindRepairRuns, Interval: c.maintenance.RepairInterval, Run: c.RepairRuns, Logger: logger},
			jobs.Job{Kind: jobs.KindRunRetention, Interval: c.maintenance.RetentionInterval, Run: c.DeleteExpiredRuns, Logger: logger},
		)
		if err != nil {
			return nil, fmt.Errorf("workflow: register the maintenance jobs: %w", err)
		}
	}

	// The jobs a working client holds, for the orphan rescue
	// (internal/wfruntime/orphans.go).
	riverConfig.Middleware = append(slices.Clip(riverConfig.Middleware), c.held.Middleware())
	c.riverWorkers = riverConfig.Workers
	c.leaderElection = !riverConfig.LeaderElectionDisabled
	c.riverQueues = slices.Collect(maps.Keys(riverConfig.Queues))

	c.completer = newCompleter(c)
	driver := engine.NewDriver(pool, c.completer)
	driver.SetLogger(logger)
	if rates := c.kindTenantRates(); len(rates) > 0 {
		driver.SetTenantRates(rates)
	}
	if limits := c.kindTenantLimits(); len(limits) > 0 {
		driver.SetTenantLimits(limits)
	}
	c.driver = driver
	// River's own scheduling follows an injected clock (see Config.Clock).
	if config.Clock != nil && riverConfig.Test.Time == nil {
		riverConfig.Test.Time = clockTime{c}
	}
	rc, err := river.NewClient[pgx.Tx](driver, riverConfig)
	if err != nil {
		return nil, fmt.Errorf("workflow: build River client: %w", err)
	}
	c.river = rc
	c.batch = newBatchers(c)
	c.waiter = wfruntime.NewWaiter(pool, logger)
	c.repairer = newRepairer(c)
	c.waker = wfruntime.NewWaker(wfruntime.WakerConfig{
		Logger: logger, Pool: pool, Queries: db, Jobs: c.jobs, Schema: config.Schema,
		Now: c.now, RealClock: dbc != nil, Works: c.works,
		MakeAvailableTx: c.makeAvailableTx, RepairRunsOf: c.repairer.RepairOf, IgnoreRepairs: c.testIgnoreRepairs.Load,
	})
	if c.works {
		c.registry = newRegistry(c)
	}
	return c, nil
}

// now is the client's time (Config.Clock).
func (c *Client) now() time.Time { return c.clock() }

// River returns the River client the workflows run on, for the application's
// own jobs and for River UI.
func (c *Client) River() *river.Client[pgx.Tx] { return c.river }

// Types returns the names of the registered workflow types, sorted.
func (c *Client) Types() []string {
	names := make([]string, 0, len(c.types))
	for name := range c.types {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Start starts the engine's write batchers and, when River queues are
// configured, the River client that works runs. The client works until Stop:
// unlike River's Start, cancelling ctx afterwards does not stop it (River
// would stop hard, cancelling the attempts in progress), so a signal
// context can be passed here and Stop called for a graceful shutdown.
func (c *Client) Start(ctx context.Context) error {
	c.startStopMu.Lock()
	defer c.startStopMu.Unlock()
	if c.started {
		return nil
	}
	if c.works {
		bp, err := newBatchPool(c.pool)
		if err != nil {
			return err
		}
		c.batchPool.Store(bp)
		if err := c.openBindingPools(); err != nil {
			c.batchPool.Swap(nil).Close()
			return err
		}
	}
	if c.dbClock != nil {
		err := c.readDatabaseClock(ctx, true, func() (time.Time, error) { return c.db.DatabaseClock(ctx, c.pool) })
		if err != nil {
			c.logger.WarnContext(ctx, "tributary: Could not read the database's clock; using this machine's until the next heartbeat",
				slog.String("err", err.Error()))
		}
	}
	c.batch.start()
	c.waker.Start(c.armQueues)
	if c.works {
		// Registered before River fetches a job: a client killed at any
		// instant after its first fetch is in the registry, so the next
		// live client's heartbeat sees it dead and rescues its jobs at
		// once. Registered after, a client killed in between left its jobs
		// to River's rescuer, an hour later.
		c.registry.Start(ctx)
		if err := c.river.Start(context.WithoutCancel(ctx)); err != nil {
			c.registry.Stop(true)
			c.batch.stop()
			c.closeBindingPools()
			c.batchPool.Swap(nil).Close()
			return fmt.Errorf("workflow: start River client: %w", err)
		}
	}
	c.started = true
	return nil
}

// Stop stops working new runs, waits for attempts in progress to finish (up
// to ctx's deadline), then stops the write batchers and the result waiter.
func (c *Client) Stop(ctx context.Context) error {
	c.startStopMu.Lock()
	defer c.startStopMu.Unlock()
	var err error
	if c.started {
		if c.works {
			err = c.river.Stop(ctx)
			c.registry.Stop(err == nil) // after River: its jobs are finished or handed back
		}
		c.waker.Stop()
		c.batch.stop()
		c.pending.Clear() // what is left stays running until River rescues it
		if bp := c.batchPool.Swap(nil); bp != nil {
			bp.Close()
		}
		c.closeBindingPools()
		c.started = false
	}
	c.waiter.Stop()
	return err
}

// writePool is the pool for batched writes: the batch pool while the client
// is started, else the user's pool; its reads keep nothing of the pool once
// done (engine.Pool).
func (c *Client) writePool() engine.Pool {
	if bp := c.batchPool.Load(); bp != nil {
		return engine.Pool{Pool: bp}
	}
	return engine.Pool{Pool: c.pool}
}

// newBatchPool opens the client's own small pool for its batched writes. It
// has the user's pool's settings plus engine.BatchPoolSettings:
// plan_cache_mode=force_generic_plan, since a batch's queries take arrays
// whose lengths vary, which otherwise makes Postgres re-plan them on almost
// every call, and planning cost more than executing. And
// enable_seqscan=off: a connection makes each generic plan once and keeps
// it, so a plan made while a table was small (a new schema, a quiet queue)
// would scan the whole table on every later call however large it grew; at
// 100,000 slots due together, the completion statement read all of
// river_job for each batch. Every batched statement looks its rows up by
// primary key, so an index path is always there; the setting makes the
// planner take it whatever the tables' size when it plans.
// Connections are opened on first use; Close closes them.
func newBatchPool(pool *pgxpool.Pool) (*pgxpool.Pool, error) {
	config := pool.Config().Copy()
	config.MaxConns = batchPoolConns
	config.MinConns = 0
	if config.ConnConfig.RuntimeParams == nil {
		config.ConnConfig.RuntimeParams = map[string]string{}
	}
	maps.Copy(config.ConnConfig.RuntimeParams, engine.BatchPoolSettings)
	bp, err := pgxpool.NewWithConfig(context.Background(), config)
	if err != nil {
		return nil, fmt.Errorf("workflow: open the batch pool: %w", err)
	}
	return bp, nil
}
