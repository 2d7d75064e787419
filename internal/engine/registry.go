package engine

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The worker registry's statements (see internal/wfruntime/registry.go): every
// started working client has a row in tributary_workers, refreshed by its
// heartbeat on a session of its own that holds an advisory lock.
var (
	workersStmt = define(`SELECT client_id, hostname, pid, workflow_types, queues, started_at, heartbeat_at,
	heartbeat_at > now() - make_interval(secs => $1)
FROM {s}tributary_workers ORDER BY 8 DESC, client_id`)

	typeServedStmt = define(`SELECT EXISTS (SELECT 1 FROM {s}tributary_workers
	WHERE $1 = ANY(workflow_types) AND ($2 = '' OR $2 = ANY(queues)) AND heartbeat_at > now() - make_interval(secs => $3))`)

	typesServedStmt = define(`SELECT t, EXISTS (
	SELECT 1 FROM {s}tributary_workers w
	WHERE t = ANY(w.workflow_types) AND w.heartbeat_at > now() - make_interval(secs => $2))
FROM unnest($1::text[]) AS t`)

	workerInputLimitsStmt = define(`SELECT t, min(w.max_input_bytes) FROM {s}tributary_workers w, unnest(w.workflow_types) AS t
	WHERE w.heartbeat_at > now() - make_interval(secs => $1) GROUP BY t`)

	heartbeatStmt = define(`UPDATE {s}tributary_workers SET heartbeat_at = now() WHERE client_id = $1
RETURNING clock_timestamp(), pg_postmaster_start_time()`)

	databaseClockStmt = define(`SELECT clock_timestamp()`)

	registerWorkerStmt = define(`INSERT INTO {s}tributary_workers (client_id, hostname, pid, workflow_types, queues, lock_key, max_input_bytes,
	tenant_limits, tenant_rates)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (client_id) DO UPDATE SET hostname = excluded.hostname, pid = excluded.pid, workflow_types = excluded.workflow_types,
	queues = excluded.queues, lock_key = excluded.lock_key, max_input_bytes = excluded.max_input_bytes,
	tenant_limits = excluded.tenant_limits, tenant_rates = excluded.tenant_rates, heartbeat_at = now()
RETURNING clock_timestamp(), pg_postmaster_start_time()`)

	tryAdvisoryLockStmt = define(`SELECT pg_try_advisory_lock($1)`)

	deregisterWorkerStmt = define(`DELETE FROM {s}tributary_workers WHERE client_id = $1`)

	// deadWorkersStmt claims the rows of dead clients other than $1 (see
	// the top of internal/wfruntime/registry.go): a heartbeat older than $2 seconds
	// (or, for a beat from before the server's start or from before $5,
	// when the asking client first reached this server, $4 seconds after
	// the later of the two) and a liveness lock gone, or a heartbeat older
	// than $3 seconds. A promoted standby keeps the start time of its
	// postmaster, from before the promotion: $5 gives the clients that
	// beat on the old primary their grace all the same. A bigint advisory
	// lock shows in pg_locks as classid (high half) and objid (low half)
	// with objsubid 1.
	deadWorkersStmt = define(`
SELECT w.client_id, w.hostname, w.pid, w.heartbeat_at
FROM {s}tributary_workers w,
	LATERAL (SELECT greatest(pg_postmaster_start_time(), $5::timestamptz) AS since) s
WHERE w.client_id <> $1
	AND greatest(w.heartbeat_at, CASE WHEN w.heartbeat_at < s.since
		THEN s.since + make_interval(secs => $4) END) < now() - make_interval(secs => $2)
	AND (w.heartbeat_at < now() - make_interval(secs => $3) OR NOT EXISTS (
		SELECT 1 FROM pg_locks l
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
			AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND ((l.classid::int8 << 32) | l.objid::int8) = w.lock_key))
FOR UPDATE SKIP LOCKED`)

	deleteWorkersStmt = define(`DELETE FROM {s}tributary_workers WHERE client_id = ANY($1)`)
)

// Worker is a row of the worker registry.
type Worker struct {
	ClientID      string
	Hostname      string
	PID           int
	WorkflowTypes []string
	Queues        []string
	StartedAt     time.Time
	HeartbeatAt   time.Time
	Live          bool // the heartbeat is within the liveWithin asked for
}

// Workers reads the worker registry: live clients (a heartbeat within
// liveWithin) first, then by client ID.
func (q *Queries) Workers(ctx context.Context, db DBTX, liveWithin time.Duration) ([]*Worker, error) {
	rows, err := db.Query(ctx, q.sql(workersStmt), liveWithin.Seconds())
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Worker, error) {
		w := &Worker{}
		err := row.Scan(&w.ClientID, &w.Hostname, &w.PID, &w.WorkflowTypes, &w.Queues, &w.StartedAt, &w.HeartbeatAt, &w.Live)
		return w, err
	})
}

// TypeServed reports whether a client whose heartbeat is within liveWithin
// has workflow type typ registered and works queue (any queue when "").
func (q *Queries) TypeServed(ctx context.Context, db DBTX, typ, queue string, liveWithin time.Duration) (bool, error) {
	var ok bool
	err := queryRow(ctx, db, q.sql(typeServedStmt), typ, queue, liveWithin.Seconds()).Scan(&ok)
	return ok, err
}

// TypesServed is TypeServed, in any queue, for many types in one query: it
// maps each of types to whether a live client has it registered.
func (q *Queries) TypesServed(ctx context.Context, db DBTX, types []string, liveWithin time.Duration) (map[string]bool, error) {
	rows, err := db.Query(ctx, q.sql(typesServedStmt), types, liveWithin.Seconds())
	if err != nil {
		return nil, err
	}
	served := make(map[string]bool, len(types))
	var (
		typ string
		ok  bool
	)
	if _, err := pgx.ForEachRow(rows, []any{&typ, &ok}, func() error {
		served[typ] = ok
		return nil
	}); err != nil {
		return nil, err
	}
	return served, nil
}

// WorkerInputLimits maps each workflow type that a client whose heartbeat
// is within liveWithin has registered to the smallest input limit
// (Config.MaxInputBytes) among those clients.
func (q *Queries) WorkerInputLimits(ctx context.Context, db DBTX, liveWithin time.Duration) (map[string]int, error) {
	rows, err := db.Query(ctx, q.sql(workerInputLimitsStmt), liveWithin.Seconds())
	if err != nil {
		return nil, err
	}
	limits := map[string]int{}
	var (
		typ   string
		limit int
	)
	if _, err := pgx.ForEachRow(rows, []any{&typ, &limit}, func() error {
		limits[typ] = limit
		return nil
	}); err != nil {
		return nil, err
	}
	return limits, nil
}

// Beat is what a heartbeat read of the server.
type Beat struct {
	// At is the database's clock when it beat.
	At time.Time
	// ServerStart is when the server started (pg_postmaster_start_time):
	// another value than the last beat's says the server restarted, or is
	// another server (a standby promoted), and may have lost what it had
	// acknowledged.
	ServerStart time.Time
}

// Heartbeat refreshes the heartbeat of client clientID. It returns nil
// when the client's row is gone (another client took it for dead).
func (q *Queries) Heartbeat(ctx context.Context, db DBTX, clientID string) (*Beat, error) {
	var b Beat
	err := queryRow(ctx, db, q.sql(heartbeatStmt), clientID).Scan(&b.At, &b.ServerStart)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// DatabaseClock reads the database's clock (clock_timestamp(): the time
// of the read, not of the transaction's start).
func (q *Queries) DatabaseClock(ctx context.Context, db DBTX) (time.Time, error) {
	var at time.Time
	err := queryRow(ctx, db, q.sql(databaseClockStmt)).Scan(&at)
	return at, err
}

// RegisterWorkerParams are a working client's row in the worker registry.
type RegisterWorkerParams struct {
	ClientID      string
	Hostname      string
	PID           int
	WorkflowTypes []string // not nil: the column is NOT NULL
	Queues        []string
	LockKey       int64 // the key of the session advisory lock the client holds (TryAdvisoryLock)
	MaxInputBytes int
	TenantLimits  map[string]int        // DefineOpts.TenantLimit of the types that have one; not nil
	TenantRates   map[string]TenantRate // DefineOpts.TenantRate of the types that have one, by type
}

// registeredRate is a type's TenantRate in the worker registry's
// tenant_rates (migration 019): Limit per Per (a Go duration) for people,
// and the tokens a second and bucket size Tenants counts with.
type registeredRate struct {
	Limit     int     `json:"limit"`
	Per       string  `json:"per"`
	PerSecond float64 `json:"per_second"`
	Burst     float64 `json:"burst"`
}

// RegisterWorker inserts, or replaces, a client's row in the worker
// registry, with a fresh heartbeat, and returns that beat. A missing
// registry table (the migrations were not run) fails with an error
// WorkerTableMissing recognizes.
func (q *Queries) RegisterWorker(ctx context.Context, db DBTX, p *RegisterWorkerParams) (*Beat, error) {
	rates := make(map[string]registeredRate, len(p.TenantRates))
	for typ, r := range p.TenantRates {
		rates[typ] = registeredRate{Limit: r.Limit, Per: r.Per.String(), PerSecond: r.PerSecond, Burst: r.Burst}
	}
	var b Beat
	err := queryRow(ctx, db, q.sql(registerWorkerStmt),
		p.ClientID, p.Hostname, p.PID, p.WorkflowTypes, p.Queues, p.LockKey, p.MaxInputBytes, p.TenantLimits, rates).Scan(&b.At, &b.ServerStart)
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// WorkerTableMissing reports whether err says that the worker registry's
// table does not exist.
func WorkerTableMissing(err error) bool {
	return err != nil && strings.Contains(err.Error(), "tributary_workers") && strings.Contains(err.Error(), "does not exist")
}

// TryAdvisoryLock takes the session advisory lock key on db (a connection:
// the lock lasts as long as its session) if no session holds it, and
// reports whether it did.
func (q *Queries) TryAdvisoryLock(ctx context.Context, db DBTX, key int64) (bool, error) {
	var ok bool
	err := queryRow(ctx, db, q.sql(tryAdvisoryLockStmt), key).Scan(&ok)
	return ok, err
}

// DeregisterWorker removes client clientID's row from the worker registry.
func (q *Queries) DeregisterWorker(ctx context.Context, db DBTX, clientID string) error {
	_, err := db.Exec(ctx, q.sql(deregisterWorkerStmt), clientID)
	return err
}

// DeadWorkersParams say which clients of the worker registry count as
// dead.
type DeadWorkersParams struct {
	// Except is the asking client, never dead to itself.
	Except string
	// DeadAfter is how old a heartbeat must be before its client can count
	// as dead; its liveness lock must be gone too.
	DeadAfter time.Duration
	// HungAfter is how old a heartbeat must be for its client to count as
	// dead even though its session lives on.
	HungAfter time.Duration
	// RestartGrace is how long after a Postgres restart a client whose last
	// beat predates it has to reconnect before it counts as dead.
	RestartGrace time.Duration
	// ServerSince is when the asking client first reached this server
	// (the database's clock), or zero: a client whose last beat predates
	// it gets RestartGrace from then, as after a restart.
	ServerSince time.Time
}

// DeadWorker is the registry row of a client found dead.
type DeadWorker struct {
	ClientID    string
	Hostname    string
	PID         int
	HeartbeatAt time.Time
}

// DeadWorkersTx finds the clients that are dead by p and locks their rows
// until tx ends, skipping rows another transaction holds: two clients
// looking at once never claim the same dead client.
func (q *Queries) DeadWorkersTx(ctx context.Context, tx pgx.Tx, p *DeadWorkersParams) ([]*DeadWorker, error) {
	var since *time.Time
	if !p.ServerSince.IsZero() {
		since = &p.ServerSince
	}
	rows, err := tx.Query(ctx, q.sql(deadWorkersStmt), p.Except, p.DeadAfter.Seconds(), p.HungAfter.Seconds(), p.RestartGrace.Seconds(), since)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*DeadWorker, error) {
		var w DeadWorker
		err := row.Scan(&w.ClientID, &w.Hostname, &w.PID, &w.HeartbeatAt)
		return &w, err
	})
}

// DeleteWorkersTx removes the rows of clients ids from the worker
// registry.
func (q *Queries) DeleteWorkersTx(ctx context.Context, tx pgx.Tx, ids []string) error {
	_, err := tx.Exec(ctx, q.sql(deleteWorkersStmt), ids)
	return err
}
