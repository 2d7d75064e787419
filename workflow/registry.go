package workflow

// The worker registry (see ARCHITECTURE.md): every
// started working client has a row in tributary_workers naming the workflow
// types it serves, refreshed by a heartbeat every WorkerHeartbeatInterval.
// It answers two questions:
//
//   - Does any live process work this type? Start, schedule.Create, `schedule
//     get`, the dashboard and `serve` ask it (TypeServed, Workers), so that a
//     run of a type nobody works is flagged instead of silently pending.
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

	"github.com/tributary-go/tributary/internal/engine"
)

// WorkerHeartbeatInterval is how often a started working client refreshes
// its row in the worker registry, looks for dead clients to rescue, and arms
// the timers of the schedule jobs due next.
const WorkerHeartbeatInterval = time.Second

const (
	// workerDeadAfter is how old a heartbeat must be before its client can
	// count as dead (its lock must be gone too). A live client whose
	// registry session was cut finds out at its next beat, at most
	// WorkerHeartbeatInterval later, and registers again in the same beat:
	// the margin over that is for the new connection.
	workerDeadAfter = 2500 * time.Millisecond

	// workerBeatTimeout is how long a heartbeat may take before it is
	// cancelled (see registrySession), and registryCutAfter how much longer
	// its session has to answer the cancel before it is cut. A session
	// that the server dropped without the client hearing of it is thus
	// replaced within WorkerHeartbeatInterval + workerBeatTimeout +
	// registryCutAfter (3.5 s) of its last beat.
	workerBeatTimeout = workerDeadAfter - WorkerHeartbeatInterval
	registryCutAfter  = time.Second

	// workerHungAfter is how old a heartbeat must be for its client to count
	// as dead even though its session lives on.
	workerHungAfter = time.Minute

	// workerLiveWithin is how fresh a heartbeat must be for its client to
	// count as live in Workers and TypeServed.
	workerLiveWithin = 5 * WorkerHeartbeatInterval

	// workerRestartGrace is how long after a Postgres restart a client whose
	// last beat predates it has to reconnect before it counts as dead.
	workerRestartGrace = 3 * time.Second
)

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

// registry keeps a started working client's row in the worker registry and
// rescues the jobs of dead clients (see the top of this file).
type registry struct {
	c      *Client
	types  []string
	queues []string

	stopOnce sync.Once
	stopCh   chan struct{}
	done     chan struct{}
	clean    bool // set by stop before stopCh closes

	// beat is signalled after each heartbeat pass; tests wait on it.
	beat chan struct{}

	// server is the server the heartbeats reach (orphans.go); the
	// heartbeat loop's alone.
	server serverWatch
}

func newRegistry(c *Client, queues []string) *registry {
	types := []string{} // not nil: the column is NOT NULL, and tributary serve registers no type
	for name, reg := range c.types {
		if slices.Contains(queues, reg.opts.Queue) {
			types = append(types, name)
		}
	}
	slices.Sort(types)
	queues = slices.Clone(queues)
	slices.Sort(queues)
	return &registry{c: c, types: types, queues: queues, beat: make(chan struct{}, 1)}
}

// addQueue records a queue added to the client before it starts.
func (r *registry) addQueue(queue string) {
	r.queues = append(r.queues, queue)
	slices.Sort(r.queues)
	for name, reg := range r.c.types {
		if reg.opts.Queue == queue && !slices.Contains(r.types, name) {
			r.types = append(r.types, name)
		}
	}
	slices.Sort(r.types)
}

// start registers the client (so that, once Start returns, the registry
// lists it) and starts the heartbeat.
func (r *registry) start(ctx context.Context) {
	r.stopOnce = sync.Once{}
	r.stopCh = make(chan struct{})
	r.done = make(chan struct{})
	conn, err := r.heartbeat(ctx, nil)
	if err != nil {
		r.c.logger.Warn("tributary: Could not register in the worker registry; retrying every heartbeat", slog.String("err", err.Error()))
	}
	go r.run(conn, r.stopCh, r.done)
}

// stop ends the heartbeat. When clean, it removes the client's row: the
// client has nothing left to rescue. Otherwise (River did not stop in time,
// attempts may still be running) it only closes the client's session, and
// the next live client's heartbeat rescues its jobs.
func (r *registry) stop(clean bool) {
	r.stopOnce.Do(func() {
		r.clean = clean
		close(r.stopCh)
	})
	<-r.done
}

func (r *registry) run(conn *pgx.Conn, stopCh <-chan struct{}, done chan<- struct{}) {
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
	ticker := time.NewTicker(WorkerHeartbeatInterval)
	defer ticker.Stop()
	for beat := 0; ; beat++ {
		if beat > 0 {
			var err error
			if conn, err = r.heartbeat(ctx, conn); err != nil && ctx.Err() == nil {
				r.c.logger.Warn("tributary: Worker registry heartbeat failed; retrying (other clients may rescue this client's jobs if it lasts)",
					slog.String("err", err.Error()))
			}
		}
		if conn != nil {
			if err := r.rescueDead(ctx); err != nil && ctx.Err() == nil {
				r.c.logger.Warn("tributary: Looking for dead clients failed; retrying at the next heartbeat", slog.String("err", err.Error()))
			}
			r.c.waker.ArmWaiting(ctx, armLookahead)
			if r.server.orphansDue(r.c.realNow()) {
				if err := r.rescueOrphans(ctx, r.server.changedAt); err != nil && ctx.Err() == nil {
					r.c.logger.Warn("tributary: Looking for jobs the database lost the outcome of failed; retrying at the next heartbeat", slog.String("err", err.Error()))
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
func (r *registry) sawServer(ctx context.Context, beat *engine.Beat) {
	if r.server.beat(beat.ServerStart, beat.At) {
		r.c.logger.WarnContext(ctx, "tributary: The database server changed (a restart, or a standby promoted); looking for jobs whose outcome it lost for the next 30 s",
			slog.Time("server_started_at", beat.ServerStart))
	}
}

// heartbeat refreshes the client's row on conn, its own session, or
// connects, takes its lock and registers anew when conn is nil or broken.
// It returns the connection to use next time (nil after a failure).
func (r *registry) heartbeat(ctx context.Context, conn *pgx.Conn) (*pgx.Conn, error) {
	c := r.c
	if conn != nil {
		ctxBeat, cancel := context.WithTimeout(ctx, workerBeatTimeout)
		var beat *engine.Beat
		err := c.readDatabaseClock(ctxBeat, false, func() (time.Time, error) {
			var err error
			if beat, err = c.db.Heartbeat(ctxBeat, conn, c.river.ID()); beat == nil {
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
			c.logger.Warn("tributary: This client's worker registry row is gone: another client took it for dead and rescued its running jobs; registering again",
				slog.String("client_id", c.river.ID()))
		}
		_ = conn.Close(context.Background())
		if err != nil {
			// The session died (a proxy, a pooler, a terminated backend):
			// its liveness lock went with it, so register again at once,
			// within this beat, before other clients take this one for
			// dead (workerDeadAfter).
			c.logger.Warn("tributary: Worker registry heartbeat failed; reconnecting at once",
				slog.String("err", err.Error()))
		}
	}

	ctxConn, cancel := context.WithTimeout(ctx, 10*WorkerHeartbeatInterval)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctxConn, registrySession(c.pool.Config().ConnConfig))
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	lockKey, err := c.takeLivenessLock(ctxConn, conn)
	var beat *engine.Beat
	if err == nil {
		hostname, _ := os.Hostname()
		beat, err = c.db.RegisterWorker(ctxConn, conn, &engine.RegisterWorkerParams{
			ClientID: c.river.ID(), Hostname: hostname, PID: os.Getpid(), WorkflowTypes: r.types, Queues: r.queues,
			LockKey: lockKey, MaxInputBytes: c.maxInputBytes, TenantLimits: c.typeTenantLimits(), TenantRates: c.typeTenantRates(),
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
func (c *Client) takeLivenessLock(ctx context.Context, conn *pgx.Conn) (int64, error) {
	for {
		key := rand.Int64N(1<<62) + 1
		ok, err := c.db.TryAdvisoryLock(ctx, conn, key)
		if err != nil {
			return 0, fmt.Errorf("take the liveness lock: %w", err)
		}
		if ok {
			return key, nil
		}
	}
}

// deregister removes the client's row and closes its session.
func (r *registry) deregister(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.c.db.DeregisterWorker(ctx, conn, r.c.river.ID()); err != nil {
		r.c.logger.Warn("tributary: Could not remove this client from the worker registry; its row expires",
			slog.String("err", err.Error()))
	}
	_ = conn.Close(ctx)
}

// rescueDead rescues the running Tributary jobs of dead clients, resigns a
// dead leader's leadership and removes the dead clients' rows, in one
// transaction. Jobs with attempts left become available at once (and the
// queues' producers are told); the others are discarded, as River's rescuer
// does, and RepairRuns fails their runs. Only Tributary's job kinds are
// rescued: the application's own jobs on the same River client keep River's
// rescue.
func (r *registry) rescueDead(ctx context.Context) error {
	c := r.c
	ctx, cancel := context.WithTimeout(ctx, 10*WorkerHeartbeatInterval)
	defer cancel()
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		// Claimed (locked) until the transaction ends.
		dead, err := c.db.DeadWorkersTx(ctx, tx, &engine.DeadWorkersParams{
			Except: c.river.ID(), DeadAfter: workerDeadAfter, HungAfter: workerHungAfter, RestartGrace: workerRestartGrace,
			ServerSince: r.server.since,
		})
		if err != nil || len(dead) == 0 {
			return err
		}
		ids := make([]string, len(dead))
		for i, w := range dead {
			ids[i] = w.ClientID
		}

		rescued, err := c.jobs.RescueTx(ctx, tx, ids, tributaryKinds, c.river.ID())
		if err != nil {
			return err
		}
		leader, err := c.jobs.ResignLeaderTx(ctx, tx, ids)
		if err != nil {
			return fmt.Errorf("resign a dead leader: %w", err)
		}
		if leader != "" {
			c.logger.Warn("tributary: River's leader died; resigned its leadership so that another client leads at once",
				slog.String("dead_client_id", leader))
		}
		if err := c.db.DeleteWorkersTx(ctx, tx, ids); err != nil {
			return err
		}
		for _, w := range dead {
			c.logger.Warn("tributary: A client died: its heartbeat stopped and its session is gone; its running workflow jobs are rescued",
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
const armLookahead = 5 * WorkerHeartbeatInterval
