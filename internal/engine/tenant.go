package engine

import (
	"context"
	"fmt"
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
	SELECT substr(kind, length('workflow:') + 1) AS workflow_type, args->>'tenant' AS tenant, count(*) AS n
	FROM {s}river_job WHERE state = 'running' AND kind LIKE 'workflow:%' AND args ? 'tenant'
	GROUP BY 1, 2
)`

	// The pending runs among $2 whose job is ready, held back by their
	// tenant's limit (it has as many jobs of the run's type running as its
	// limit), else waiting for its rate (at least as many of its tenant's
	// line go before it as its bucket holds whole tokens; whole is NULL
	// for a type without a rate, and greatest, which skips NULLs, is kept
	// off it), with the reason.
	heldRunsStmt = define(`WITH ` + typeLimitsCTE + `, ` + typeRatesCTE + `
SELECT r.id, CASE WHEN x.at_limit THEN '` + HeldTenantLimit + `' ELSE '` + HeldTenantRate + `' END
FROM {s}workflow_runs r
JOIN {s}river_job j ON j.id = r.job_id
LEFT JOIN type_limits tl ON tl.workflow_type = r.workflow_type
LEFT JOIN type_rates tr ON tr.workflow_type = r.workflow_type
LEFT JOIN {s}tributary_tenant_rate_overrides o ON o.workflow_type = r.workflow_type AND o.tenant = r.tenant
LEFT JOIN {s}tributary_tenant_rates b ON b.job_kind = j.kind AND b.tenant = r.tenant
CROSS JOIN LATERAL (SELECT
	tl.max_running IS NOT NULL AND (SELECT count(*) FROM {s}river_job x
		WHERE x.state = 'running' AND x.args ? 'tenant' AND x.kind = j.kind AND x.args->>'tenant' = r.tenant)
		>= coalesce((SELECT l.max_running FROM {s}tributary_tenant_limits l
			WHERE l.workflow_type = r.workflow_type AND l.tenant = r.tenant), tl.max_running) AS at_limit,
	floor(` + rateTokensSQL + `)::bigint AS whole) x
WHERE r.id = ANY($2::uuid[]) AND r.status = 'pending' AND r.tenant IS NOT NULL AND j.state = 'available'
	AND (x.at_limit OR (x.whole IS NOT NULL AND (SELECT count(*) FROM (
		SELECT 1 FROM {s}river_job a
		WHERE a.state = 'available' AND a.args ? 'tenant' AND a.queue = j.queue AND a.args->>'tenant' = r.tenant
			AND (a.priority, a.scheduled_at, a.id) < (j.priority, j.scheduled_at, j.id) AND a.kind = j.kind
		LIMIT greatest(x.whole, 0)) before) >= x.whole))`)

	// The queues where typ's tenant has runs ready, for a limit raised.
	tenantReadyQueuesStmt = define(`
SELECT DISTINCT queue FROM {s}river_job
WHERE state = 'available' AND args ? 'tenant' AND kind = 'workflow:' || $1 AND args->>'tenant' = $2
LIMIT 100`)

	setTenantLimitStmt = define(`
INSERT INTO {s}tributary_tenant_limits (workflow_type, tenant, max_running, updated_at) VALUES ($1, $2, $3, coalesce($4::timestamptz, now()))
ON CONFLICT (workflow_type, tenant) DO UPDATE SET max_running = excluded.max_running, updated_at = excluded.updated_at`)

	clearTenantLimitStmt = define(`DELETE FROM {s}tributary_tenant_limits WHERE workflow_type = $1 AND tenant = $2`)

	// The tenants with runs working or ready, or a limit or rate of their
	// own, by type: running counts the tenant's jobs running (few: at most
	// the workers); the limit is the tenant's own, else the type's as its
	// live workers register it, and a tenant of a limited type with as
	// many running as its limit has its ready runs held; the rate likewise,
	// and of the other ready runs, those of each queue's line beyond the
	// bucket's whole tokens wait for it (rate_limited). next_token is the
	// seconds until the bucket's next whole token, while runs wait for it.
	tenantsStmt = define(`WITH ` + typeLimitsCTE + `, ` + typeRatesCTE + `, ` + runningCTE + `, ready AS (
	SELECT substr(kind, length('workflow:') + 1) AS workflow_type, args->>'tenant' AS tenant, queue, count(*) AS n
	FROM {s}river_job WHERE state = 'available' AND args ? 'tenant' AND kind LIKE 'workflow:%'
	GROUP BY 1, 2, 3
), ready_pairs AS (
	SELECT workflow_type, tenant, sum(n)::bigint AS n FROM ready GROUP BY 1, 2
), pairs AS (
	SELECT workflow_type, tenant FROM running
	UNION SELECT workflow_type, tenant FROM ready_pairs
	UNION SELECT workflow_type, tenant FROM {s}tributary_tenant_limits
	UNION SELECT workflow_type, tenant FROM {s}tributary_tenant_rate_overrides
), standing AS (
	SELECT p.workflow_type, p.tenant, coalesce(r.n, 0) AS running,
		coalesce(rd.n, 0) AS ready,
		coalesce(tl.max_running, 0) AS type_limit, coalesce(l.max_running, 0) AS tenant_limit,
		tl.max_running IS NOT NULL AND coalesce(r.n, 0) >= coalesce(l.max_running, tl.max_running) AS at_limit,
		coalesce(tr.rate_limit, 0) AS type_rate_limit, coalesce(tr.per, '') AS type_rate_per,
		coalesce(o.rate_limit, 0) AS tenant_rate_limit, o.per AS tenant_rate_per,
		` + rateTokensSQL + ` AS tokens,
		coalesce(o.per_second, tr.per_second) AS per_second
	FROM pairs p
	LEFT JOIN running r USING (workflow_type, tenant)
	LEFT JOIN ready_pairs rd USING (workflow_type, tenant)
	LEFT JOIN {s}tributary_tenant_limits l USING (workflow_type, tenant)
	LEFT JOIN type_limits tl USING (workflow_type)
	LEFT JOIN type_rates tr USING (workflow_type)
	LEFT JOIN {s}tributary_tenant_rate_overrides o USING (workflow_type, tenant)
	LEFT JOIN {s}tributary_tenant_rates b ON b.job_kind = 'workflow:' || p.workflow_type AND b.tenant = p.tenant
	WHERE ($2 = '' OR p.workflow_type = $2) AND ($3 = '' OR p.tenant = $3)
), waits AS (
	SELECT s.workflow_type, s.tenant, sum(greatest(0, q.n - greatest(floor(s.tokens), 0)))::bigint AS n
	FROM standing s JOIN ready q USING (workflow_type, tenant)
	WHERE NOT s.at_limit AND s.tokens IS NOT NULL
	GROUP BY 1, 2
), judged AS (
	SELECT s.*, coalesce(w.n, 0) AS rate_limited FROM standing s LEFT JOIN waits w USING (workflow_type, tenant)
)
SELECT workflow_type, tenant, running, CASE WHEN at_limit THEN ready ELSE 0 END,
	type_limit, tenant_limit, CASE WHEN at_limit THEN 0 ELSE ready - rate_limited END, rate_limited,
	type_rate_limit, type_rate_per, tenant_rate_limit, tenant_rate_per,
	CASE WHEN rate_limited > 0 THEN (greatest(floor(tokens), 0) + 1 - tokens) / per_second ELSE 0 END
FROM judged
ORDER BY judged.ready DESC, running DESC, workflow_type, tenant
LIMIT $4`)

	// The runs held back by their tenant's limit (the ready runs of the
	// tenants of limited types with as many running as their limit), and
	// those waiting for their tenant's rate (of the other ready runs of
	// rated types, those of each queue's line beyond the whole tokens), by
	// type.
	countHeldRunsStmt = define(`WITH ` + typeLimitsCTE + `, ` + typeRatesCTE + `, ` + runningCTE + `, at_limit AS (
	SELECT r.workflow_type, r.tenant FROM running r JOIN type_limits tl USING (workflow_type)
	WHERE r.n >= coalesce((SELECT l.max_running FROM {s}tributary_tenant_limits l
		WHERE l.workflow_type = r.workflow_type AND l.tenant = r.tenant), tl.max_running)
), held AS (
	SELECT a.workflow_type, count(*) AS n FROM at_limit a
	JOIN {s}river_job j ON j.kind = 'workflow:' || a.workflow_type AND j.args->>'tenant' = a.tenant
	WHERE j.state = 'available' AND j.args ? 'tenant'
	GROUP BY 1
), rated_ready AS (
	SELECT tr.workflow_type, j.args->>'tenant' AS tenant, j.queue, count(*) AS n
	FROM type_rates tr JOIN {s}river_job j ON j.kind = 'workflow:' || tr.workflow_type
	WHERE j.state = 'available' AND j.args ? 'tenant'
		AND NOT EXISTS (SELECT 1 FROM at_limit a WHERE a.workflow_type = tr.workflow_type AND a.tenant = j.args->>'tenant')
	GROUP BY 1, 2, 3
), rate_limited AS (
	SELECT q.workflow_type, sum(greatest(0, q.n - greatest(floor(` + rateTokensSQL + `), 0)))::bigint AS n
	FROM rated_ready q
	JOIN type_rates tr USING (workflow_type)
	LEFT JOIN {s}tributary_tenant_rate_overrides o USING (workflow_type, tenant)
	LEFT JOIN {s}tributary_tenant_rates b ON b.job_kind = 'workflow:' || q.workflow_type AND b.tenant = q.tenant
	GROUP BY 1
)
SELECT workflow_type, '` + HeldTenantLimit + `', n FROM held
UNION ALL
SELECT workflow_type, '` + HeldTenantRate + `', n FROM rate_limited WHERE n > 0
ORDER BY 1, 2`)

	tenantLimitsStmt = define(`SELECT workflow_type, tenant, max_running, updated_at FROM {s}tributary_tenant_limits ORDER BY workflow_type, tenant`)
)

// HeldTenantLimit is why a run is held: its tenant has as many runs of its
// type working as its limit allows.
const HeldTenantLimit = "tenant_limit"

// HeldTenantRate is why a ready run waits for its tenant's rate: at least
// as many of its tenant's line go before it as the tenant's bucket holds
// whole tokens.
const HeldTenantRate = "tenant_rate"

// HeldRuns returns which of the runs ids are held back, and why
// (HeldTenantLimit, HeldTenantRate): pending, their job ready, and their
// tenant with as many jobs of their type running as its limit, or else
// their place in their tenant's line beyond its bucket's whole tokens (see
// the top of this file); the types' limits and rates as workers
// registered them within liveWithin.
func (q *Queries) HeldRuns(ctx context.Context, db DBTX, ids []uuid.UUID, liveWithin time.Duration) (map[uuid.UUID]string, error) {
	rows, err := db.Query(ctx, q.sql(heldRunsStmt), liveWithin.Seconds(), ids)
	if err != nil {
		return nil, err
	}
	held := map[uuid.UUID]string{}
	var (
		id     uuid.UUID
		reason string
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &reason}, func() error {
		held[id] = reason
		return nil
	}); err != nil {
		return nil, err
	}
	return held, nil
}

// TenantReadyQueues returns the queues where typ's tenant has runs ready.
func (q *Queries) TenantReadyQueues(ctx context.Context, db DBTX, typ, tenant string) ([]string, error) {
	rows, err := db.Query(ctx, q.sql(tenantReadyQueuesStmt), typ, tenant)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// SetTenantLimitTx sets the limit of typ's tenant to maxRunning, updated at
// now (nil: the database's now()).
func (q *Queries) SetTenantLimitTx(ctx context.Context, tx pgx.Tx, typ, tenant string, maxRunning int, now *time.Time) error {
	_, err := tx.Exec(ctx, q.sql(setTenantLimitStmt), typ, tenant, maxRunning, now)
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

// TenantRow is how a workflow type's tenant stands. Held, RateLimited and
// Ready count its ready jobs, each once.
type TenantRow struct {
	Type        string
	Tenant      string
	Running     int
	Held        int // its ready jobs while it has as many running as its limit
	TypeLimit   int // the type's DefineOpts.TenantLimit as its live workers register it; 0 for none
	TenantLimit int // the tenant's own limit; 0 for none
	Ready       int // its ready jobs, not fetched yet, neither held nor waiting for its rate
	RateLimited int // its ready jobs waiting for its rate, when it is not at its limit
	// TypeRate is the type's DefineOpts.TenantRate as its live workers
	// register it, TenantRate the tenant's own; zero for none.
	TypeRate   TenantRate
	TenantRate TenantRate
	// NextToken is how long until its bucket's next whole token, while
	// RateLimited > 0; 0 otherwise.
	NextToken time.Duration
}

// TenantsParams filter Tenants.
type TenantsParams struct {
	Type       string        // "" for every type
	Tenant     string        // "" for every tenant
	LiveWithin time.Duration // how fresh a worker's heartbeat must be for its type limits and rates to count
	Limit      int
}

// Tenants lists the tenants that have runs working or ready, or a limit
// or rate of their own, those with the most waiting first.
func (q *Queries) Tenants(ctx context.Context, db DBTX, p *TenantsParams) ([]TenantRow, error) {
	rows, err := db.Query(ctx, q.sql(tenantsStmt), p.LiveWithin.Seconds(), p.Type, p.Tenant, p.Limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (TenantRow, error) {
		var (
			t          TenantRow
			typePer    string
			tenantPer  *time.Duration
			nextTokenS float64
		)
		err := row.Scan(&t.Type, &t.Tenant, &t.Running, &t.Held, &t.TypeLimit, &t.TenantLimit, &t.Ready, &t.RateLimited,
			&t.TypeRate.Limit, &typePer, &t.TenantRate.Limit, &tenantPer, &nextTokenS)
		if err != nil {
			return t, err
		}
		if typePer != "" {
			if t.TypeRate.Per, err = time.ParseDuration(typePer); err != nil {
				return t, fmt.Errorf("the rate of %s a worker registered: %w", t.Type, err)
			}
		}
		if tenantPer != nil {
			t.TenantRate.Per = *tenantPer
		}
		t.NextToken = time.Duration(nextTokenS * float64(time.Second))
		return t, nil
	})
}
