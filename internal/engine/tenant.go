package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The statements of per-tenant concurrency limits (see migration 014). A
// held run counts as held while it is pending: one cancelled or finished
// meanwhile keeps its mark but waits for nothing. A
// tenant's slots of one workflow type are taken and given back under a
// transaction advisory lock of the pair (LockTenantsTx), so that two
// clients never both see the last slot free, and a run held back never
// misses the slot given back while it was being held.
var (
	// The locks of the pairs, in order, so that two transactions locking
	// some of the same pairs never wait for each other in a circle.
	lockTenantsStmt = define(`
SELECT count(pg_advisory_xact_lock(hashtextextended('tributary_tenant/' || p.t || '/' || p.n, 0)))
FROM (SELECT DISTINCT t, n FROM unnest($1::text[], $2::text[]) AS p(t, n) ORDER BY t, n) p`)

	lockRunsStmt = define(`SELECT id, status, cancel_requested_at IS NOT NULL FROM {s}workflow_runs WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`)

	// How each pair stands: a slot counts while its job runs the attempt
	// that took it, except the slots of $4 (the runs asking again).
	tenantUsagesStmt = define(`
SELECT
	(SELECT count(*) FROM {s}tributary_tenant_slots s JOIN {s}river_job j ON j.id = s.job_id
		WHERE s.workflow_type = p.t AND s.tenant = p.n AND NOT s.run_id = ANY($4::uuid[])
			AND j.state = 'running' AND j.attempt = s.attempt),
	coalesce((SELECT max_running FROM {s}tributary_tenant_limits WHERE workflow_type = p.t AND tenant = p.n), p.lim),
	(SELECT id FROM {s}workflow_runs WHERE held IS NOT NULL AND status = 'pending' AND workflow_type = p.t AND tenant = p.n
		ORDER BY id LIMIT 1)
FROM unnest($1::text[], $2::text[], $3::int[]) WITH ORDINALITY AS p(t, n, lim, i)
ORDER BY p.i`)

	// Taking slots ends the runs' holds: an UPDATE that finds a run not
	// held writes nothing.
	takeTenantSlotsStmt = define(`
WITH taken AS (
	INSERT INTO {s}tributary_tenant_slots (run_id, workflow_type, tenant, job_id, attempt)
	SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bigint[], $5::int[])
	ON CONFLICT (run_id) DO UPDATE SET job_id = excluded.job_id, attempt = excluded.attempt, taken_at = now()
)
UPDATE {s}workflow_runs SET held = NULL WHERE id = ANY($1::uuid[]) AND held IS NOT NULL`)

	// Giving back runs' slots deletes, with them, the slots of the pairs
	// whose attempts ended without giving theirs back.
	giveBackTenantSlotsStmt = define(`
DELETE FROM {s}tributary_tenant_slots s
USING unnest($1::text[], $2::text[]) AS p(t, n)
WHERE s.workflow_type = p.t AND s.tenant = p.n
	AND (s.run_id = ANY($3::uuid[]) OR NOT EXISTS (
		SELECT 1 FROM {s}river_job j WHERE j.id = s.job_id AND j.state = 'running' AND j.attempt = s.attempt))`)

	asyncCommitStmt = define(`SELECT set_config('synchronous_commit', 'off', true)`)

	holdRunStmt = define(`UPDATE {s}workflow_runs SET held = $2, status = 'pending', job_id = $3, updated_at = now() WHERE id = $1`)

	heldRunsStmt = define(`
SELECT id, job_id, queue FROM {s}workflow_runs
WHERE held IS NOT NULL AND status = 'pending' AND workflow_type = $1 AND tenant = $2
ORDER BY id
LIMIT $3`)

	// The pairs of the given types that have held runs.
	heldTenantsStmt = define(`
SELECT DISTINCT workflow_type, tenant FROM {s}workflow_runs
WHERE held IS NOT NULL AND status = 'pending' AND workflow_type = ANY($1::text[])
LIMIT $2`)

	setTenantLimitStmt = define(`
INSERT INTO {s}tributary_tenant_limits (workflow_type, tenant, max_running) VALUES ($1, $2, $3)
ON CONFLICT (workflow_type, tenant) DO UPDATE SET max_running = excluded.max_running, updated_at = now()`)

	clearTenantLimitStmt = define(`DELETE FROM {s}tributary_tenant_limits WHERE workflow_type = $1 AND tenant = $2`)

	// The tenants with runs working, held back, or a limit of their own,
	// by type: running counts the runs of the tenant whose job is running
	// (few: at most the workers) or, for a limited type, the slots taken
	// (an attempt about to be held back runs for a moment without one),
	// held those held back, and the limit is the tenant's own, else the
	// type's as its live workers register it.
	tenantsStmt = define(`
WITH type_limits AS (
	SELECT l.key AS workflow_type, max(l.value::int) AS max_running
	FROM {s}tributary_workers w, jsonb_each_text(w.tenant_limits) l
	WHERE w.heartbeat_at > now() - make_interval(secs => $3)
	GROUP BY 1
), jobs AS (
	SELECT args->>'workflow' AS workflow_type, args->>'tenant' AS tenant, count(*) AS n
	FROM {s}river_job WHERE state = 'running' AND kind LIKE 'workflow:%' AND args ? 'tenant'
	GROUP BY 1, 2
), slots AS (
	SELECT s.workflow_type, s.tenant, count(*) AS n
	FROM {s}tributary_tenant_slots s JOIN {s}river_job j ON j.id = s.job_id AND j.state = 'running' AND j.attempt = s.attempt
	GROUP BY 1, 2
), running AS (
	SELECT workflow_type, tenant, coalesce(s.n, 0) AS n FROM jobs j LEFT JOIN slots s USING (workflow_type, tenant)
	WHERE j.workflow_type IN (SELECT workflow_type FROM type_limits)
	UNION ALL
	SELECT workflow_type, tenant, j.n FROM jobs j WHERE j.workflow_type NOT IN (SELECT workflow_type FROM type_limits)
), held AS (
	SELECT workflow_type, tenant, count(*) AS n
	FROM {s}workflow_runs WHERE held IS NOT NULL AND status = 'pending'
	GROUP BY 1, 2
), ready AS (
	SELECT args->>'workflow' AS workflow_type, args->>'tenant' AS tenant, count(*) AS n
	FROM {s}river_job WHERE state = 'available' AND args ? 'tenant' AND kind LIKE 'workflow:%'
	GROUP BY 1, 2
), pairs AS (
	SELECT workflow_type, tenant FROM running
	UNION SELECT workflow_type, tenant FROM held
	UNION SELECT workflow_type, tenant FROM ready
	UNION SELECT workflow_type, tenant FROM {s}tributary_tenant_limits
)
SELECT p.workflow_type, p.tenant, coalesce(r.n, 0), coalesce(h.n, 0),
	coalesce(tl.max_running, 0), coalesce(l.max_running, 0), coalesce(rd.n, 0)
FROM pairs p
LEFT JOIN running r USING (workflow_type, tenant)
LEFT JOIN held h USING (workflow_type, tenant)
LEFT JOIN ready rd USING (workflow_type, tenant)
LEFT JOIN {s}tributary_tenant_limits l USING (workflow_type, tenant)
LEFT JOIN type_limits tl USING (workflow_type)
WHERE ($1 = '' OR p.workflow_type = $1) AND ($2 = '' OR p.tenant = $2)
ORDER BY coalesce(h.n, 0) + coalesce(rd.n, 0) DESC, coalesce(r.n, 0) DESC, p.workflow_type, p.tenant
LIMIT $4`)

	tenantLimitsStmt = define(`SELECT workflow_type, tenant, max_running, updated_at FROM {s}tributary_tenant_limits ORDER BY workflow_type, tenant`)
)

// HeldTenantLimit is workflow_runs.held of a run held back by its tenant's
// limit.
const HeldTenantLimit = "tenant_limit"

// TypeTenant is a workflow type and one of its tenants.
type TypeTenant struct {
	Type   string
	Tenant string
}

// LockTenantsTx takes the transaction advisory locks of pairs, in order:
// the slots of a pair are taken and given back under its lock.
func (q *Queries) LockTenantsTx(ctx context.Context, tx pgx.Tx, pairs []TypeTenant) error {
	types, tenants := make([]string, len(pairs)), make([]string, len(pairs))
	for i, p := range pairs {
		types[i], tenants[i] = p.Type, p.Tenant
	}
	_, err := tx.Exec(ctx, q.sql(lockTenantsStmt), types, tenants)
	return err
}

// LockedRun is a run's state as LockRunsTx read it.
type LockedRun struct {
	ID              uuid.UUID
	Status          string
	CancelRequested bool
}

// LockRunsTx locks the rows of runs ids, in order, and reads their state.
// A missing run is left out.
func (q *Queries) LockRunsTx(ctx context.Context, tx pgx.Tx, ids [][16]byte) ([]LockedRun, error) {
	rows, err := tx.Query(ctx, q.sql(lockRunsStmt), ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[LockedRun])
}

// TenantPair is a pair whose standing TenantUsagesTx reads, with the
// limit that applies where no operator set one for the tenant.
type TenantPair struct {
	TypeTenant
	TypeLimit int
}

// TenantUsage is how a workflow type's tenant stands against its limit.
type TenantUsage struct {
	// Running is how many of its runs hold a slot.
	Running int
	// Limit is the tenant's limit: an operator's, else the type's.
	Limit int
	// OldestHeld is its oldest run held back, if any.
	OldestHeld *uuid.UUID
}

// TenantUsagesTx reads how each pair stands, in order, leaving out the
// slots of runs except. Call it under the pairs' locks.
func (q *Queries) TenantUsagesTx(ctx context.Context, tx pgx.Tx, pairs []TenantPair, except [][16]byte) ([]TenantUsage, error) {
	types, tenants, limits := make([]string, len(pairs)), make([]string, len(pairs)), make([]int32, len(pairs))
	for i, p := range pairs {
		types[i], tenants[i], limits[i] = p.Type, p.Tenant, int32(p.TypeLimit)
	}
	if except == nil {
		except = [][16]byte{}
	}
	rows, err := tx.Query(ctx, q.sql(tenantUsagesStmt), types, tenants, limits, except)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[TenantUsage])
}

// TenantSlot is a slot to take: a run's attempt, on its River job.
type TenantSlot struct {
	RunID   uuid.UUID
	Type    string
	Tenant  string
	JobID   int64
	Attempt int
}

// TakeTenantSlotsTx records that the slots' attempts hold them, and that
// their runs are no longer held back. Call it under the pairs' locks.
func (q *Queries) TakeTenantSlotsTx(ctx context.Context, tx pgx.Tx, slots []TenantSlot) error {
	n := len(slots)
	ids, types, tenants, jobIDs, attempts := make([][16]byte, n), make([]string, n), make([]string, n), make([]int64, n), make([]int32, n)
	for i, s := range slots {
		ids[i], types[i], tenants[i], jobIDs[i], attempts[i] = s.RunID, s.Type, s.Tenant, s.JobID, int32(s.Attempt)
	}
	_, err := tx.Exec(ctx, q.sql(takeTenantSlotsStmt), ids, types, tenants, jobIDs, attempts)
	return err
}

// GiveBackTenantSlotsTx deletes the slots of runIDs, and the pairs' slots
// whose attempts are over. Call it under the pairs' locks.
func (q *Queries) GiveBackTenantSlotsTx(ctx context.Context, tx pgx.Tx, pairs []TypeTenant, runIDs [][16]byte) error {
	types, tenants := make([]string, len(pairs)), make([]string, len(pairs))
	for i, p := range pairs {
		types[i], tenants[i] = p.Type, p.Tenant
	}
	if runIDs == nil {
		runIDs = [][16]byte{}
	}
	_, err := tx.Exec(ctx, q.sql(giveBackTenantSlotsStmt), types, tenants, runIDs)
	return err
}

// AsyncCommitTx turns synchronous_commit off for tx: its commit does not
// wait for its WAL to reach the disk, and a crash of the server may lose
// it. For writes that a crash may lose without harm.
func (q *Queries) AsyncCommitTx(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, q.sql(asyncCommitStmt))
	return err
}

// HoldRunTx records that run id is held back for reason, parked on its
// next River job jobID; it reads as pending.
func (q *Queries) HoldRunTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, reason string, jobID int64) error {
	_, err := tx.Exec(ctx, q.sql(holdRunStmt), id, reason, jobID)
	return err
}

// HeldRun is a run held back, and the River job it is parked on.
type HeldRun struct {
	ID    uuid.UUID
	JobID int64
	Queue string
}

// HeldRunsTx returns the first n runs of typ's tenant held back, oldest
// first.
func (q *Queries) HeldRunsTx(ctx context.Context, tx pgx.Tx, typ, tenant string, n int) ([]HeldRun, error) {
	rows, err := tx.Query(ctx, q.sql(heldRunsStmt), typ, tenant, n)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[HeldRun])
}

// HeldTenants returns up to n pairs of the given types that have runs held
// back.
func (q *Queries) HeldTenants(ctx context.Context, db DBTX, types []string, n int) ([]TypeTenant, error) {
	rows, err := db.Query(ctx, q.sql(heldTenantsStmt), types, n)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[TypeTenant])
}

// SetTenantLimitTx sets the limit of typ's tenant to maxRunning.
func (q *Queries) SetTenantLimitTx(ctx context.Context, tx pgx.Tx, typ, tenant string, maxRunning int) error {
	_, err := tx.Exec(ctx, q.sql(setTenantLimitStmt), typ, tenant, maxRunning)
	return err
}

// ClearTenantLimitTx removes the limit set for typ's tenant.
func (q *Queries) ClearTenantLimitTx(ctx context.Context, tx pgx.Tx, typ, tenant string) error {
	_, err := tx.Exec(ctx, q.sql(clearTenantLimitStmt), typ, tenant)
	return err
}

// TenantLimitRow is a limit an operator set for a tenant.
type TenantLimitRow struct {
	Type       string
	Tenant     string
	MaxRunning int
	UpdatedAt  time.Time
}

// TenantLimits lists the limits set for tenants.
func (q *Queries) TenantLimits(ctx context.Context, db DBTX) ([]TenantLimitRow, error) {
	rows, err := db.Query(ctx, q.sql(tenantLimitsStmt))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[TenantLimitRow])
}

// TenantRow is how a workflow type's tenant stands.
type TenantRow struct {
	Type        string
	Tenant      string
	Running     int
	Held        int
	TypeLimit   int // the type's DefineOpts.TenantLimit as its live workers register it; 0 for none
	TenantLimit int // the tenant's own limit; 0 for none
	Ready       int // its ready jobs, not fetched yet (the fair fetch's index)
}

// TenantsParams filter Tenants.
type TenantsParams struct {
	Type       string        // "" for every type
	Tenant     string        // "" for every tenant
	LiveWithin time.Duration // how fresh a worker's heartbeat must be for its type limits to count
	Limit      int
}

// Tenants lists the tenants that have runs working or held back, or a
// limit of their own, those with the most held first.
func (q *Queries) Tenants(ctx context.Context, db DBTX, p *TenantsParams) ([]TenantRow, error) {
	rows, err := db.Query(ctx, q.sql(tenantsStmt), p.Type, p.Tenant, p.LiveWithin.Seconds(), p.Limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[TenantRow])
}
