package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The statements of per-tenant concurrency limits (migrations 014 and
// 018). The fair fetch keeps the limits (fair_limits.go); these read how
// tenants stand against them and set an operator's limits.
var (
	// typeLimitsCTE are the types' limits as their live workers register
	// them (DefineOpts.TenantLimit), $1 the seconds a heartbeat stays fresh.
	typeLimitsCTE = `type_limits AS (
	SELECT l.key AS workflow_type, max(l.value::int) AS max_running
	FROM {s}tributary_workers w, jsonb_each_text(w.tenant_limits) l
	WHERE w.heartbeat_at > now() - make_interval(secs => $1)
	GROUP BY 1
)`

	// runningCTE counts the running jobs of workflow runs with a tenant,
	// by type and tenant (few: at most the workers of every client).
	runningCTE = `running AS (
	SELECT args->>'workflow' AS workflow_type, args->>'tenant' AS tenant, count(*) AS n
	FROM {s}river_job WHERE state = 'running' AND kind LIKE 'workflow:%' AND args ? 'tenant'
	GROUP BY 1, 2
)`

	// The pending runs among $2 whose job is ready but whose tenant has as
	// many jobs of the run's type running as its limit allows.
	heldRunsStmt = define(`WITH ` + typeLimitsCTE + `
SELECT r.id FROM {s}workflow_runs r
JOIN {s}river_job j ON j.id = r.job_id
JOIN type_limits tl ON tl.workflow_type = r.workflow_type
WHERE r.id = ANY($2::uuid[]) AND r.status = 'pending' AND r.tenant IS NOT NULL AND j.state = 'available'
	AND (SELECT count(*) FROM {s}river_job x
		WHERE x.state = 'running' AND x.args ? 'tenant' AND x.kind = j.kind AND x.args->>'tenant' = r.tenant)
		>= coalesce((SELECT l.max_running FROM {s}tributary_tenant_limits l
			WHERE l.workflow_type = r.workflow_type AND l.tenant = r.tenant), tl.max_running)`)

	// The queues where typ's tenant has runs ready, for a limit raised.
	tenantReadyQueuesStmt = define(`
SELECT DISTINCT queue FROM {s}river_job
WHERE state = 'available' AND args ? 'tenant' AND kind = 'workflow:' || $1 AND args->>'tenant' = $2
LIMIT 100`)

	setTenantLimitStmt = define(`
INSERT INTO {s}tributary_tenant_limits (workflow_type, tenant, max_running) VALUES ($1, $2, $3)
ON CONFLICT (workflow_type, tenant) DO UPDATE SET max_running = excluded.max_running, updated_at = now()`)

	clearTenantLimitStmt = define(`DELETE FROM {s}tributary_tenant_limits WHERE workflow_type = $1 AND tenant = $2`)

	// The tenants with runs working or ready, or a limit of their own, by
	// type: running counts the tenant's jobs running (few: at most the
	// workers), the limit is the tenant's own, else the type's as its live
	// workers register it, and a tenant of a limited type with as many
	// running as its limit has its ready runs held.
	tenantsStmt = define(`WITH ` + typeLimitsCTE + `, ` + runningCTE + `, ready AS (
	SELECT args->>'workflow' AS workflow_type, args->>'tenant' AS tenant, count(*) AS n
	FROM {s}river_job WHERE state = 'available' AND args ? 'tenant' AND kind LIKE 'workflow:%'
	GROUP BY 1, 2
), pairs AS (
	SELECT workflow_type, tenant FROM running
	UNION SELECT workflow_type, tenant FROM ready
	UNION SELECT workflow_type, tenant FROM {s}tributary_tenant_limits
), standing AS (
	SELECT p.workflow_type, p.tenant, coalesce(r.n, 0) AS running, coalesce(rd.n, 0) AS ready,
		coalesce(tl.max_running, 0) AS type_limit, coalesce(l.max_running, 0) AS tenant_limit,
		tl.max_running IS NOT NULL AND coalesce(r.n, 0) >= coalesce(l.max_running, tl.max_running) AS at_limit
	FROM pairs p
	LEFT JOIN running r USING (workflow_type, tenant)
	LEFT JOIN ready rd USING (workflow_type, tenant)
	LEFT JOIN {s}tributary_tenant_limits l USING (workflow_type, tenant)
	LEFT JOIN type_limits tl USING (workflow_type)
	WHERE ($2 = '' OR p.workflow_type = $2) AND ($3 = '' OR p.tenant = $3)
)
SELECT workflow_type, tenant, running, CASE WHEN at_limit THEN ready ELSE 0 END,
	type_limit, tenant_limit, CASE WHEN at_limit THEN 0 ELSE ready END
FROM standing
ORDER BY ready DESC, running DESC, workflow_type, tenant
LIMIT $4`)

	// The runs held by their tenant's limit, by type: the ready runs of
	// the tenants of limited types with as many running as their limit.
	countHeldRunsStmt = define(`WITH ` + typeLimitsCTE + `, ` + runningCTE + `
SELECT r.workflow_type, count(*) FROM {s}river_job j
JOIN running r ON r.workflow_type = j.args->>'workflow' AND r.tenant = j.args->>'tenant'
JOIN type_limits tl ON tl.workflow_type = r.workflow_type
WHERE j.state = 'available' AND j.args ? 'tenant' AND j.kind = 'workflow:' || r.workflow_type
	AND r.n >= coalesce((SELECT l.max_running FROM {s}tributary_tenant_limits l
		WHERE l.workflow_type = r.workflow_type AND l.tenant = r.tenant), tl.max_running)
GROUP BY 1 ORDER BY 1`)

	tenantLimitsStmt = define(`SELECT workflow_type, tenant, max_running, updated_at FROM {s}tributary_tenant_limits ORDER BY workflow_type, tenant`)
)

// HeldTenantLimit is why a run is held: its tenant has as many runs of its
// type working as its limit allows.
const HeldTenantLimit = "tenant_limit"

// HeldRuns returns which of the runs ids are held by their tenant's limit:
// pending, their job ready, their tenant with as many jobs of their type
// running as its limit, the types' limits as workers registered them
// within liveWithin.
func (q *Queries) HeldRuns(ctx context.Context, db DBTX, ids []uuid.UUID, liveWithin time.Duration) ([]uuid.UUID, error) {
	rows, err := db.Query(ctx, q.sql(heldRunsStmt), liveWithin.Seconds(), ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

// TenantReadyQueues returns the queues where typ's tenant has runs ready.
func (q *Queries) TenantReadyQueues(ctx context.Context, db DBTX, typ, tenant string) ([]string, error) {
	rows, err := db.Query(ctx, q.sql(tenantReadyQueuesStmt), typ, tenant)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
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
	Held        int // its ready jobs while it has as many running as its limit
	TypeLimit   int // the type's DefineOpts.TenantLimit as its live workers register it; 0 for none
	TenantLimit int // the tenant's own limit; 0 for none
	Ready       int // its ready jobs, not fetched yet, when it is not at its limit
}

// TenantsParams filter Tenants.
type TenantsParams struct {
	Type       string        // "" for every type
	Tenant     string        // "" for every tenant
	LiveWithin time.Duration // how fresh a worker's heartbeat must be for its type limits to count
	Limit      int
}

// Tenants lists the tenants that have runs working or ready, or a limit of
// their own, those with the most waiting first.
func (q *Queries) Tenants(ctx context.Context, db DBTX, p *TenantsParams) ([]TenantRow, error) {
	rows, err := db.Query(ctx, q.sql(tenantsStmt), p.LiveWithin.Seconds(), p.Type, p.Tenant, p.Limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[TenantRow])
}
