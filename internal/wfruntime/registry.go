package wfruntime

// The worker registry (see ARCHITECTURE.md): every
// started working client has a row in tributary_workers naming the workflow
// types it serves, refreshed by a heartbeat every HeartbeatInterval.
// It answers two questions:
//
//   - Does any live process work this type? Start, schedule.Create, `schedule
//     get`, the dashboard and `serve` ask it (workflow.Client.TypeServed,
//     Workers), so that a run of a type nobody works is flagged instead of
//     silently pending.
//   - Did a client die? Each heartbeat also looks for rows whose client has
//     stopped beating and whose Postgres session is gone, and rescues the
//     River jobs that client was working (its workflow attempts, its schedule
//     firing pass) at once, instead of after River's RescueStuckJobsAfter
//     (an hour by default). If the dead client led River's maintenance, the
//     heartbeat resigns its leadership, so that another client leads within
//     milliseconds instead of when the dead leader's term expires.
//
// Death is judged by two signs together, so that a live client is never
// rescued from under it, however long its steps:
//
//   - its heartbeat is older than workerDeadAfter, and
//   - the session advisory lock it holds on a connection of its own is gone:
//     Postgres releases it the moment the process dies and its socket
//     closes. A process that is merely slow (a GC pause, a busy machine)
//     keeps its lock. The one exception is a client whose heartbeat is older
//     than workerHungAfter: its process is alive but has not beaten for a
//     minute, and its jobs are rescued too.
//
// After a Postgres restart every session is new and every lock gone; a
// client whose last beat predates the restart is given workerRestartGrace
// to reconnect before it counts as dead.
//
// The lock needs a real session: behind a transaction-mode connection pooler
// (PgBouncer's pool_mode=transaction), point the client's pool at Postgres
// itself, or death is only found after workerHungAfter.

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/internal/engine"
)

// HeartbeatInterval is how often a started working client refreshes its row
// in the worker registry, looks for dead clients to rescue, and arms the
// timers of the schedule jobs due next. It is
// workflow.WorkerHeartbeatInterval, which package workflow spells out so
// that go doc shows its value (a test keeps the two equal).
const HeartbeatInterval = time.Second

// LiveWithin is how fresh a heartbeat must be for its client to count as
// live: in workflow.Client.Workers and TypeServed, in the input limits and
// tenant limits read from the registry, and in workflow.NoWorkerError.
const LiveWithin = 5 * HeartbeatInterval

const (
	// workerDeadAfter is how old a heartbeat must be before its client can
	// count as dead (its lock must be gone too). A live client whose
	// registry session was cut finds out at its next beat, at most
	// HeartbeatInterval later, and registers again in the same beat: the
	// margin over that is for the new connection.
	workerDeadAfter = 2500 * time.Millisecond

	// workerBeatTimeout is how long a heartbeat may take before it is
	// cancelled (see registrySession), and registryCutAfter how much longer
	// its session has to answer the cancel before it is cut. A session
	// that the server dropped without the client hearing of it is thus
	// replaced within HeartbeatInterval + workerBeatTimeout +
	// registryCutAfter (3.5 s) of its last beat.
	workerBeatTimeout = workerDeadAfter - HeartbeatInterval
	registryCutAfter  = time.Second

	// workerHungAfter is how old a heartbeat must be for its client to count
	// as dead even though its session lives on.
	workerHungAfter = time.Minute

	// workerRestartGrace is how long after a Postgres restart a client whose
	// last beat predates it has to reconnect before it counts as dead.
	workerRestartGrace = 3 * time.Second
)

// Registry keeps a started working client's row in the worker registry and
// rescues the jobs of dead clients (see the top of this file), and, after
// the server changed, its own orphaned jobs (orphans.go).
type Registry struct {
	c      RegistryConfig
	types  []string
	queues []string

	stopOnce sync.Once
	stopCh   chan struct{}
	done     chan struct{}
	clean    bool // set by Stop before stopCh closes

	// beat is signalled after each heartbeat pass (Beats).
	beat chan struct{}

	// server is the server the heartbeats reach (orphans.go); the
	// heartbeat loop's alone.
	server serverWatch
}

// RegistryConfig is what a Registry needs of its workflow client: what its
// row records, and the parts of a heartbeat bound to the client (its clock,
// its waker, the jobs it holds) as fields and functions.
type RegistryConfig struct {
	Logger  *slog.Logger
	Pool    *pgxpool.Pool
	Queries *engine.Queries
	Jobs    *engine.Jobs

	// ClientID is the River client's ID (river.Config.ID), the key of the
	// client's row.
	ClientID string

	// Types are the client's registered workflow types, each with its
	// default queue (workflow.DefineOpts.Queue): the row names a type as
	// served when the client works its queue.
	Types map[string]string
	// Queues are the River queues the client works; AddQueue adds the
	// ones bound later, before Start.
	Queues []string

	// MaxInputBytes, TenantLimits and TenantRates are what the row records
	// of the client's limits, for the clients that read them from the
	// registry: workflow.Config.MaxInputBytes, and the
	// workflow.DefineOpts.TenantLimit and TenantRate of the types that
	// have one (TenantLimits not nil: the column is NOT NULL).
	MaxInputBytes int
	TenantLimits  map[string]int
	TenantRates   map[string]engine.TenantRate

	// MeasureClock runs read, a statement that returns the database's
	// clock (zero when it returned none), and, under the database's
	// clock, sets this process's offset from it (workflow's
	// readDatabaseClock): every heartbeat measures the offset again.
	MeasureClock func(ctx context.Context, read func() (time.Time, error)) error
	// RealNow is the database's time by this process's reading, real time
	// under an injected workflow.Config.Clock: the orphan rescue's window
	// runs by it.
	RealNow func() time.Time
	// ArmWaiting arms the timers of the waiting jobs scheduled within
	// lookahead (Waker.ArmWaiting); every heartbeat calls it.
	ArmWaiting func(ctx context.Context, lookahead time.Duration)

	// Held are the Tributary jobs the client is working now, Pending
	// those whose run completes without its worker waiting, and Reserved
	// (nil for none) returns those its producers started ahead of their
	// next fetch (engine.Driver.ReservedJobs): the orphan rescue never
	// takes one of them.
	Held     *HeldJobs
	Pending  *Pending
	Reserved func() []int64
}

// NewRegistry is the Registry of c's client. It touches no database until
// Start.
func NewRegistry(c RegistryConfig) *Registry {
	r := &Registry{c: c, types: []string{}, beat: make(chan struct{}, 1)} // types not nil: the column is NOT NULL, and tributary serve registers no type
	r.queues = slices.Clone(c.Queues)
	slices.Sort(r.queues)
	for name, queue := range c.Types {
		if slices.Contains(r.queues, queue) {
			r.types = append(r.types, name)
		}
	}
	slices.Sort(r.types)
	return r
}

// AddQueue records a queue added to the client before it starts, and the
// types it serves by working it.
func (r *Registry) AddQueue(queue string) {
	r.queues = append(r.queues, queue)
	slices.Sort(r.queues)
	for name, q := range r.c.Types {
		if q == queue && !slices.Contains(r.types, name) {
			r.types = append(r.types, name)
		}
	}
	slices.Sort(r.types)
}

// Beats is signalled after each heartbeat pass (capacity 1: a pass nobody
// waited for is dropped); tests wait on it.
func (r *Registry) Beats() <-chan struct{} { return r.beat }

// Start registers the client (so that, once Start returns, the registry
// lists it) and starts the heartbeat. A registration that fails is logged
// and tried again at every heartbeat.
func (r *Registry) Start(ctx context.Context) {
	r.stopOnce = sync.Once{}
	r.stopCh = make(chan struct{})
	r.done = make(chan struct{})
	conn, err := r.heartbeat(ctx, nil)
	if err != nil {
		r.c.Logger.Warn("tributary: Could not register in the worker registry; retrying every heartbeat", slog.String("err", err.Error()))
	}
	go r.run(conn, r.stopCh, r.done)
}

// Stop ends the heartbeat and returns once it has. When clean, it removes
// the client's row: the client has nothing left to rescue. Otherwise (River
// did not stop in time, attempts may still be running) it only closes the
// client's session, and the next live client's heartbeat rescues its jobs.
func (r *Registry) Stop(clean bool) {
	r.stopOnce.Do(func() {
		r.clean = clean
		close(r.stopCh)
	})
	<-r.done
}

func (r *Registry) run(conn *pgx.Conn, stopCh <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stopCh
		cancel()
	}()

	defer func() {
		if conn == nil {
			return
		}
		if r.clean {
			r.deregister(conn)
			return
		}
		_ = conn.Close(context.Background())
	}()
	ticker := time.NewTicker(HeartbeatInterval)
	defer ticker.Stop()
	for beat := 0; ; beat++ {
		if beat > 0 {
			var err error
			if conn, err = r.heartbeat(ctx, conn); err != nil && ctx.Err() == nil {
				r.c.Logger.Warn("tributary: Worker registry heartbeat failed; retrying (other clients may rescue this client's jobs if it lasts)",
					slog.String("err", err.Error()))
			}
		}
		if conn != nil {
			if err := r.rescueDead(ctx); err != nil && ctx.Err() == nil {
				r.c.Logger.Warn("tributary: Looking for dead clients failed; retrying at the next heartbeat", slog.String("err", err.Error()))
			}
			r.c.ArmWaiting(ctx, armLookahead)
			if r.server.orphansDue(r.c.RealNow()) {
				if err := r.rescueOrphans(ctx, r.server.changedAt); err != nil && ctx.Err() == nil {
					r.c.Logger.Warn("tributary: Looking for jobs the database lost the outcome of failed; retrying at the next heartbeat", slog.String("err", err.Error()))
				}
			}
		}
		select {
		case r.beat <- struct{}{}:
		default:
		}
		select {
		case <-ticker.C:
		case <-stopCh:
			return
		}
	}
}

// sawServer records the server a heartbeat reached, and warns when it is
// another one than the last heartbeat's.
func (r *Registry) sawServer(ctx context.Context, beat *engine.Beat) {
	if r.server.beat(beat.ServerStart, beat.At) {
		r.c.Logger.WarnContext(ctx, "tributary: The database server changed (a restart, or a standby promoted); looking for jobs whose outcome it lost for the next 30 s",
			slog.Time("server_started_at", beat.ServerStart))
	}
}

// heartbeat refreshes the client's row on conn, its own session, or
// connects, takes its lock and registers anew when conn is nil or broken.
// It returns the connection to use next time (nil after a failure).
func (r *Registry) heartbeat(ctx context.Context, conn *pgx.Conn) (*pgx.Conn, error) {
	c := &r.c
	if conn != nil {
		ctxBeat, cancel := context.WithTimeout(ctx, workerBeatTimeout)
		var beat *engine.Beat
		err := c.MeasureClock(ctxBeat, func() (time.Time, error) {
			var err error
			if beat, err = c.Queries.Heartbeat(ctxBeat, conn, c.ClientID); beat == nil {
				return time.Time{}, err
			}
			return beat.At, err
		})
		cancel()
		if err == nil && beat != nil {
			r.sawServer(ctx, beat)
			return conn, nil
		}
		if err != nil && !conn.IsClosed() {
			// The server answered the cancel (registrySession): the
			// database is slow, not gone, and the session keeps its
			// lock, which tells other clients that this one lives.
			return conn, fmt.Errorf("heartbeat cancelled after %s; the session lives on: %w", workerBeatTimeout, err)
		}
		if err == nil && beat == nil {
			c.Logger.Warn("tributary: This client's worker registry row is gone: another client took it for dead and rescued its running jobs; registering again",
				slog.String("client_id", c.ClientID))
		}
		_ = conn.Close(context.Background())
		if err != nil {
			// The session died (a proxy, a pooler, a terminated backend):
			// its liveness lock went with it, so register again at once,
			// within this beat, before other clients take this one for
			// dead (workerDeadAfter).
			c.Logger.Warn("tributary: Worker registry heartbeat failed; reconnecting at once",
				slog.String("err", err.Error()))
		}
	}

	ctxConn, cancel := context.WithTimeout(ctx, 10*HeartbeatInterval)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctxConn, registrySession(c.Pool.Config().ConnConfig))
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	lockKey, err := r.takeLivenessLock(ctxConn, conn)
	var beat *engine.Beat
	if err == nil {
		hostname, _ := os.Hostname()
		beat, err = c.Queries.RegisterWorker(ctxConn, conn, &engine.RegisterWorkerParams{
			ClientID: c.ClientID, Hostname: hostname, PID: os.Getpid(), WorkflowTypes: r.types, Queues: r.queues,
			LockKey: lockKey, MaxInputBytes: c.MaxInputBytes, TenantLimits: c.TenantLimits, TenantRates: c.TenantRates,
		})
	}
	if err != nil {
		_ = conn.Close(context.Background())
		if engine.WorkerTableMissing(err) {
			return nil, fmt.Errorf("register: %w (run `tributary migrate up`)", err)
		}
		return nil, fmt.Errorf("register: %w", err)
	}
	// A new session is often a new server (a failover): note it before this
	// beat looks for dead clients (see DeadWorkersParams.ServerSince).
	r.sawServer(ctx, beat)
	return conn, nil
}

// registrySession is the configuration of the registry's session: the
// pool's, except that a statement that overruns its context is cancelled
// on the server (a cancel request) instead of having its connection cut,
// which pgx does by default. A heartbeat slowed by a busy database then
// costs nothing: the session, and the liveness lock it holds, live on, so
// that no other client takes this one for dead. Only a session that does
// not answer within registryCutAfter more (a server gone silent) is cut,
// and registered again on a new one.
func registrySession(pool *pgx.ConnConfig) *pgx.ConnConfig {
	config := pool.Copy()
	config.BuildContextWatcherHandler = func(conn *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: conn, DeadlineDelay: registryCutAfter}
	}
	return config
}

// takeLivenessLock takes a session advisory lock with a random positive key
// on conn and returns the key.
func (r *Registry) takeLivenessLock(ctx context.Context, conn *pgx.Conn) (int64, error) {
	for {
		key := rand.Int64N(1<<62) + 1
		ok, err := r.c.Queries.TryAdvisoryLock(ctx, conn, key)
		if err != nil {
			return 0, fmt.Errorf("take the liveness lock: %w", err)
		}
		if ok {
			return key, nil
		}
	}
}

// deregister removes the client's row and closes its session.
func (r *Registry) deregister(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.c.Queries.DeregisterWorker(ctx, conn, r.c.ClientID); err != nil {
		r.c.Logger.Warn("tributary: Could not remove this client from the worker registry; its row expires",
			slog.String("err", err.Error()))
	}
	_ = conn.Close(ctx)
}

// rescueDead rescues the running Tributary jobs of dead clients, resigns a
// dead leader's leadership and removes the dead clients' rows, in one
// transaction. Jobs with attempts left become available at once (and the
// queues' producers are told); the others are discarded, as River's rescuer
// does, and workflow.Client.RepairRuns fails their runs. Only Tributary's
// job kinds are rescued: the application's own jobs on the same River
// client keep River's rescue.
func (r *Registry) rescueDead(ctx context.Context) error {
	c := &r.c
	ctx, cancel := context.WithTimeout(ctx, 10*HeartbeatInterval)
	defer cancel()
	return pgx.BeginFunc(ctx, c.Pool, func(tx pgx.Tx) error {
		// Claimed (locked) until the transaction ends.
		dead, err := c.Queries.DeadWorkersTx(ctx, tx, &engine.DeadWorkersParams{
			Except: c.ClientID, DeadAfter: workerDeadAfter, HungAfter: workerHungAfter, RestartGrace: workerRestartGrace,
			ServerSince: r.server.since,
		})
		if err != nil || len(dead) == 0 {
			return err
		}
		ids := make([]string, len(dead))
		for i, w := range dead {
			ids[i] = w.ClientID
		}

		rescued, err := c.Jobs.RescueTx(ctx, tx, ids, tributaryKinds, c.ClientID)
		if err != nil {
			return err
		}
		leader, err := c.Jobs.ResignLeaderTx(ctx, tx, ids)
		if err != nil {
			return fmt.Errorf("resign a dead leader: %w", err)
		}
		if leader != "" {
			c.Logger.Warn("tributary: River's leader died; resigned its leadership so that another client leads at once",
				slog.String("dead_client_id", leader))
		}
		if err := c.Queries.DeleteWorkersTx(ctx, tx, ids); err != nil {
			return err
		}
		for _, w := range dead {
			c.Logger.Warn("tributary: A client died: its heartbeat stopped and its session is gone; its running workflow jobs are rescued",
				slog.String("dead_client_id", w.ClientID), slog.String("host", w.Hostname), slog.Int("pid", w.PID),
				slog.Time("last_heartbeat", w.HeartbeatAt), slog.Int("rescued_jobs", rescued.ByClient[w.ClientID]))
		}
		return nil
	})
}

// tributaryKinds are the River job kinds of Tributary's jobs, as LIKE
// patterns: the workflows' and the schedule machinery's. Only those are
// rescued from a dead client; the application's own jobs on the same River
// client keep River's rescue.
var tributaryKinds = []string{"workflow:%", "tributary:%"}

// armLookahead is how far ahead each heartbeat arms the timers of waiting
// schedule jobs: every live client times the next instants, not only the
// client that queued them, so the death of that client does not delay them.
const armLookahead = 5 * HeartbeatInterval
