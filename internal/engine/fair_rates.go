package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Tenant rates at the fetch: see fair_fetch.go's overview. The rates ride
// on the fair fetch (fairFetchRatedSQL, with fairRatesCTEs); the fetch's
// transaction then takes the tokens of the attempts it started
// (takeTokensTx).
//
// A tenant's rate is its own when an operator set one
// (tributary_tenant_rate_overrides, migration 019; workflow's
// Client.SetTenantRate), else its kind's (SetTenantRates: its type's
// DefineOpts.TenantRate). The fetch looks the tenant's own up as it reads
// the tenant's bucket, and only for the kinds it has a rate for: a
// tenant's rate on a kind without one applies to nothing, as a tenant's
// limit on a kind without a limit does.
//
// The fetch refills each bucket it reads to now, at the tenant's rate, in
// the statement that creates or locks it, and stores that rate on the
// bucket; the take, later in the same transaction (the same now()), only
// subtracts. The tokens are thus counted at the rate the fetch read, even
// when an operator changes it between the two statements.

// fairRatesCTEs: rates are the kinds' rates ($9 kinds, $10 tokens a
// second, $11 bucket sizes); pair_rates each rated (kind, tenant) pair
// among the candidates with its rate, the tenant's own or else the
// kind's (the overrides are looked up by the kind's workflow type, the
// kind less its "workflow:", so that their primary key serves); buckets
// creates, or locks and refills to now, the bucket of each
// pair (a new bucket holds one token, so that a tenant's first second
// starts no more than the rate and one); allowance is each pair's whole
// tokens.
const fairRatesCTEs = `rates AS (
    SELECT * FROM unnest($9::text[], $10::float8[], $11::float8[]) AS r(kind, per_second, burst)
),
pair_rates AS (
    SELECT p.kind, p.tenant, coalesce(o.per_second, r.per_second) AS per_second, coalesce(o.burst, r.burst) AS burst
    FROM (SELECT DISTINCT kind, tenant FROM keyed) p
    JOIN rates r ON r.kind = p.kind
    LEFT JOIN {s}tributary_tenant_rate_overrides o ON o.workflow_type = substr(p.kind, length('workflow:') + 1) AND o.tenant = p.tenant
),
buckets AS (
    INSERT INTO {s}tributary_tenant_rates AS b (job_kind, tenant, tokens, at, per_second, burst)
    SELECT kind, tenant, least(burst, 1), now(), per_second, burst FROM pair_rates
    ON CONFLICT (job_kind, tenant) DO UPDATE
    SET tokens = least(excluded.burst, b.tokens + extract(epoch FROM now() - b.at) * excluded.per_second),
        at = now(), per_second = excluded.per_second, burst = excluded.burst
    RETURNING b.job_kind, b.tenant, b.tokens, b.per_second
),
allowance AS (
    SELECT job_kind AS kind, tenant, floor(tokens) AS n FROM buckets
),
`

// fairNextToken is, for a rated fair fetch, the seconds until the soonest
// next token among the pairs it left candidates of out for want of tokens
// (NULL for none): the take subtracts whole tokens, so a bucket's next
// whole token comes when its fraction has grown to one, at its own rate
// (the tenant's, when an operator set one).
const fairNextToken = `(SELECT min((floor(b.tokens) + 1 - b.tokens) / b.per_second) FROM buckets b
    WHERE EXISTS (SELECT 1 FROM keyed k WHERE k.kind = b.job_kind AND k.tenant = b.tenant AND k.kind_rank > floor(b.tokens)))`

// takeTokensSQL takes the tokens of the attempts a rated fair fetch
// started: per pair ($1 kinds, $2 tenants, $3 attempts started), what was
// started comes off its bucket, which the fetch refilled to now earlier
// in the same transaction (fairRatesCTEs's buckets).
const takeTokensSQL = `UPDATE {s}tributary_tenant_rates b
SET tokens = b.tokens - t.taken
FROM unnest($1::text[], $2::text[], $3::float8[]) AS t(kind, tenant, taken)
WHERE b.job_kind = t.kind AND b.tenant = t.tenant`

// takeTokensTx takes, in tx, the tokens of the rated attempts a fair fetch
// started: taken counts them by (kind, tenant).
func (p *pilot) takeTokensTx(ctx context.Context, tx pgx.Tx, texts fairTexts, taken map[[2]string]float64) error {
	if len(taken) == 0 {
		return nil
	}
	kinds, tenants, counts := make([]string, 0, len(taken)), make([]string, 0, len(taken)), make([]float64, 0, len(taken))
	for pair, n := range taken {
		kinds, tenants, counts = append(kinds, pair[0]), append(tenants, pair[1]), append(counts, n)
	}
	if _, err := tx.Exec(ctx, texts.takeTokens, kinds, tenants, counts); err != nil {
		return fmt.Errorf("take the rate tokens of %d tenants: %w", len(taken), err)
	}
	return nil
}

// TenantRate is the rate of the attempts of one job kind for each tenant
// (workflow.DefineOpts.TenantRate), or of one tenant (an operator's):
// Limit per Per, which the fetch keeps as PerSecond tokens a second, in a
// bucket of Burst. The fetch reads PerSecond and Burst; Limit and Per are
// the rate as given, for people (the worker registry, Tenants).
type TenantRate struct {
	Limit     int
	Per       time.Duration
	PerSecond float64
	Burst     float64
}

// SetTenantRates gives the driver the tenant rates of job kinds, before
// River's client is built on it.
func (d *Driver) SetTenantRates(rates map[string]TenantRate) {
	p := d.pilot
	p.rates = pilotRates{byKind: rates}
	for kind, r := range rates {
		p.rates.kinds = append(p.rates.kinds, kind)
		p.rates.perSecond = append(p.rates.perSecond, r.PerSecond)
		p.rates.burst = append(p.rates.burst, r.Burst)
	}
}

// pilotRates are the tenant rates of a pilot, as the fetch passes them.
type pilotRates struct {
	byKind    map[string]TenantRate
	kinds     []string
	perSecond []float64
	burst     []float64
}

// minRateFetchWait bounds how often a pilot wakes its queues' producers
// for rated tenants' tokens. A fetch that left rated runs out for want of
// tokens fetches again when the soonest of their next tokens comes
// (fairNextToken), at each tenant's own rate where an operator set one,
// and not sooner than this.
const minRateFetchWait = 20 * time.Millisecond

// The statements of an operator's rates for tenants (migration 019), and
// what Tenants and HeldRuns (tenant.go) read of the rates.
var (
	setTenantRateStmt = define(`
INSERT INTO {s}tributary_tenant_rate_overrides (workflow_type, tenant, rate_limit, per, per_second, burst, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, coalesce($7::timestamptz, now()))
ON CONFLICT (workflow_type, tenant) DO UPDATE SET rate_limit = excluded.rate_limit, per = excluded.per,
	per_second = excluded.per_second, burst = excluded.burst, updated_at = excluded.updated_at`)

	clearTenantRateStmt = define(`DELETE FROM {s}tributary_tenant_rate_overrides WHERE workflow_type = $1 AND tenant = $2`)

	tenantRatesStmt = define(`SELECT workflow_type, tenant, rate_limit, per, updated_at
FROM {s}tributary_tenant_rate_overrides ORDER BY workflow_type, tenant`)

	// typeRatesCTE are the types' rates as their live workers register
	// them (DefineOpts.TenantRate), $1 the seconds a heartbeat stays
	// fresh; of two workers that disagree (a deploy under way), the faster
	// rate.
	typeRatesCTE = `type_rates AS (
	SELECT DISTINCT ON (r.key) r.key AS workflow_type, (r.value->>'limit')::int AS rate_limit, r.value->>'per' AS per,
		(r.value->>'per_second')::float8 AS per_second, (r.value->>'burst')::float8 AS burst
	FROM {s}tributary_workers w, jsonb_each(w.tenant_rates) r
	WHERE w.heartbeat_at > now() - make_interval(secs => $1)
	ORDER BY r.key, (r.value->>'per_second')::float8 DESC
)`
)

// rateTokensSQL are the tokens of a (type, tenant) pair's bucket as the
// fetch would find them now: refilled since it was last read at the
// tenant's rate, its own (o, a row of tributary_tenant_rate_overrides)
// else its type's (tr, of typeRatesCTE), up to its bucket's size; the one
// token a new bucket starts with when the pair has none yet (b, its row of
// tributary_tenant_rates). NULL when the type has no rate: the tenant's
// own then applies to nothing. o and b are outer-joined.
const rateTokensSQL = `CASE WHEN tr.per_second IS NULL THEN NULL
		WHEN b.tokens IS NULL THEN least(coalesce(o.burst, tr.burst), 1)
		ELSE least(coalesce(o.burst, tr.burst), b.tokens + extract(epoch FROM now() - b.at) * coalesce(o.per_second, tr.per_second)) END`

// SetTenantRateTx sets the rate of typ's tenant to rate, updated at now
// (nil: the database's now()).
func (q *Queries) SetTenantRateTx(ctx context.Context, tx pgx.Tx, typ, tenant string, rate TenantRate, now *time.Time) error {
	_, err := tx.Exec(ctx, q.sql(setTenantRateStmt), typ, tenant, rate.Limit, rate.Per, rate.PerSecond, rate.Burst, now)
	return err
}

// ClearTenantRateTx removes the rate set for typ's tenant.
func (q *Queries) ClearTenantRateTx(ctx context.Context, tx pgx.Tx, typ, tenant string) error {
	_, err := tx.Exec(ctx, q.sql(clearTenantRateStmt), typ, tenant)
	return err
}

// TenantRateRow is a rate an operator set for a tenant: Limit per Per.
type TenantRateRow struct {
	Type      string
	Tenant    string
	Limit     int
	Per       time.Duration
	UpdatedAt time.Time
}

// TenantRates lists the rates set for tenants, by type and tenant.
func (q *Queries) TenantRates(ctx context.Context, db DBTX) ([]TenantRateRow, error) {
	rows, err := db.Query(ctx, q.sql(tenantRatesStmt))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[TenantRateRow])
}
