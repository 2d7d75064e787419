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
// transaction advisory lock of the pair (LockTenantTx), so that two
// clients never both see the last slot free, and a run held back never
// misses the slot given back while it was being held.
var (
	lockTenantStmt = define(`SELECT pg_advisory_xact_lock(hashtextextended('tributary_tenant/' || $1::text || '/' || $2::text, 0))`)

	// A slot counts while its job runs the attempt that took it.
	tenantUsageStmt = define(`
SELECT
	(SELECT count(*) FROM {s}tributary_tenant_slots s JOIN {s}river_job j ON j.id = s.job_id
		WHERE s.workflow_type = $1 AND s.tenant = $2 AND s.run_id <> $3 AND j.state = 'running' AND j.attempt = s.attempt),
	coalesce((SELECT max_running FROM {s}tributary_tenant_limits WHERE workflow_type = $1 AND tenant = $2), $4::int),
	EXISTS (SELECT 1 FROM {s}workflow_runs WHERE held IS NOT NULL AND status = 'pending' AND workflow_type = $1 AND tenant = $2 AND id < $3),
	(SELECT count(*) FROM {s}workflow_runs WHERE held IS NOT NULL AND status = 'pending' AND workflow_type = $1 AND tenant = $2)`)

	// Taking a slot ends a hold: an UPDATE that finds the run not held
	// writes nothing.
	takeTenantSlotStmt = define(`
WITH taken AS (
	INSERT INTO {s}tributary_tenant_slots (run_id, workflow_type, tenant, job_id, attempt)
	VALUES ($1, $2, $3, $4, $5)
	ON CONFLICT (run_id) DO UPDATE SET job_id = excluded.job_id, attempt = excluded.attempt, taken_at = now()
)
UPDATE {s}workflow_runs SET held = NULL WHERE id = $1 AND held IS NOT NULL`)

	// Giving back a run's slot deletes, with it, the slots of the pair
	// whose attempts ended without giving theirs back.
	giveBackTenantSlotStmt = define(`
DELETE FROM {s}tributary_tenant_slots s
WHERE s.workflow_type = $1 AND s.tenant = $2
	AND (s.run_id = $3 OR NOT EXISTS (
		SELECT 1 FROM {s}river_job j WHERE j.id = s.job_id AND j.state = 'running' AND j.attempt = s.attempt))`)

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
	// (few: at most the workers), held those held back, and the limit is
	// the tenant's own, else the type's as its live workers register it.
	tenantsStmt = define(`
WITH running AS (
	SELECT args->>'workflow' AS workflow_type, args->>'tenant' AS tenant, count(*) AS n
	FROM {s}river_job WHERE state = 'running' AND kind LIKE 'workflow:%' AND args ? 'tenant'
	GROUP BY 1, 2
), held AS (
	SELECT workflow_type, tenant, count(*) AS n
	FROM {s}workflow_runs WHERE held IS NOT NULL AND status = 'pending'
	GROUP BY 1, 2
), type_limits AS (
	SELECT l.key AS workflow_type, max(l.value::int) AS max_running
	FROM {s}tributary_workers w, jsonb_each_text(w.tenant_limits) l
	WHERE w.heartbeat_at > now() - make_interval(secs => $3)
	GROUP BY 1
), pairs AS (
	SELECT workflow_type, tenant FROM running
	UNION SELECT workflow_type, tenant FROM held
	UNION SELECT workflow_type, tenant FROM {s}tributary_tenant_limits
)
SELECT p.workflow_type, p.tenant, coalesce(r.n, 0), coalesce(h.n, 0),
	coalesce(tl.max_running, 0), coalesce(l.max_running, 0)
FROM pairs p
LEFT JOIN running r USING (workflow_type, tenant)
LEFT JOIN held h USING (workflow_type, tenant)
LEFT JOIN {s}tributary_tenant_limits l USING (workflow_type, tenant)
LEFT JOIN type_limits tl USING (workflow_type)
WHERE ($1 = '' OR p.workflow_type = $1) AND ($2 = '' OR p.tenant = $2)
ORDER BY coalesce(h.n, 0) DESC, coalesce(r.n, 0) DESC, p.workflow_type, p.tenant
LIMIT $4`)

	tenantLimitsStmt = define(`SELECT workflow_type, tenant, max_running, updated_at FROM {s}tributary_tenant_limits ORDER BY workflow_type, tenant`)
)

// HeldTenantLimit is workflow_runs.held of a run held back by its tenant's
// limit.
const HeldTenantLimit = "tenant_limit"

// LockTenantTx takes the transaction advisory lock of a workflow type's
// tenant: the slots of the pair are taken and given back under it.
func (q *Queries) LockTenantTx(ctx context.Context, tx pgx.Tx, typ, tenant string) error {
	_, err := tx.Exec(ctx, q.sql(lockTenantStmt), typ, tenant)
	return err
}

// TenantUsage is how a workflow type's tenant stands against its limit.
type TenantUsage struct {
	// Running is how many of its runs hold a slot (runID's aside).
	Running int
	// Limit is the tenant's limit: an operator's, else the type's.
	Limit int
	// OlderHeld is true when a run started before runID is held back.
	OlderHeld bool
	// Held is how many of its runs are held back.
	Held int
}

// TenantUsageTx reads how tenant of typ stands, counting the slots of other
// runs than runID (uuid.Nil for none); typeLimit is the limit where no
// operator set one for the tenant. Call it under LockTenantTx.
func (q *Queries) TenantUsageTx(ctx context.Context, tx pgx.Tx, typ, tenant string, runID uuid.UUID, typeLimit int) (*TenantUsage, error) {
	var u TenantUsage
	err := tx.QueryRow(ctx, q.sql(tenantUsageStmt), typ, tenant, runID, typeLimit).Scan(&u.Running, &u.Limit, &u.OlderHeld, &u.Held)
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// TenantSlot is a slot to take: a run's attempt, on its River job.
type TenantSlot struct {
	RunID   uuid.UUID
	Type    string
	Tenant  string
	JobID   int64
	Attempt int
}

// TakeTenantSlotTx records that s's attempt holds a slot, and that its run
// is no longer held back. Call it under LockTenantTx.
func (q *Queries) TakeTenantSlotTx(ctx context.Context, tx pgx.Tx, s *TenantSlot) error {
	_, err := tx.Exec(ctx, q.sql(takeTenantSlotStmt), s.RunID, s.Type, s.Tenant, s.JobID, s.Attempt)
	return err
}

// GiveBackTenantSlotTx deletes runID's slot, and the pair's slots whose
// attempts are over. Call it under LockTenantTx.
func (q *Queries) GiveBackTenantSlotTx(ctx context.Context, tx pgx.Tx, typ, tenant string, runID uuid.UUID) error {
	_, err := tx.Exec(ctx, q.sql(giveBackTenantSlotStmt), typ, tenant, runID)
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

// TypeTenant is a workflow type and one of its tenants.
type TypeTenant struct {
	Type   string
	Tenant string
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
