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

const fairRatesCTEs = `rates AS (
    SELECT * FROM unnest($9::text[], $10::float8[], $11::float8[]) AS r(kind, per_second, burst)
),
buckets AS (
    INSERT INTO {s}tributary_tenant_rates AS b (job_kind, tenant, tokens, at)
    SELECT DISTINCT k.kind, k.tenant, least(r.burst, 1), now()
    FROM keyed k JOIN rates r ON r.kind = k.kind
    ON CONFLICT (job_kind, tenant) DO UPDATE SET at = b.at
    RETURNING b.job_kind, b.tenant, b.tokens, b.at
),
allowance AS (
    SELECT b.job_kind AS kind, b.tenant,
        floor(least(r.burst, b.tokens + extract(epoch FROM now() - b.at) * r.per_second)) AS n
    FROM buckets b JOIN rates r ON r.kind = b.job_kind
),
`

// takeTokensSQL takes the tokens of the attempts a rated fair fetch
// started: per pair ($1 kinds, $2 tenants, $3 attempts started) the bucket
// is refilled at $4 tokens a second up to $5 as of now (the transaction's
// time, as in the fetch), less what was started.
const takeTokensSQL = `UPDATE {s}tributary_tenant_rates b
SET tokens = least(t.burst, b.tokens + extract(epoch FROM now() - b.at) * t.per_second) - t.taken, at = now()
FROM unnest($1::text[], $2::text[], $3::float8[], $4::float8[], $5::float8[]) AS t(kind, tenant, taken, per_second, burst)
WHERE b.job_kind = t.kind AND b.tenant = t.tenant`

// takeTokensTx takes, in tx, the tokens of the rated attempts a fair fetch
// started: taken counts them by (kind, tenant).
func (p *pilot) takeTokensTx(ctx context.Context, tx pgx.Tx, texts fairTexts, taken map[[2]string]float64) error {
	if len(taken) == 0 {
		return nil
	}
	var kinds, tenants []string
	var counts, perSecond, burst []float64
	for pair, n := range taken {
		r := p.rates.byKind[pair[0]]
		kinds, tenants = append(kinds, pair[0]), append(tenants, pair[1])
		counts, perSecond, burst = append(counts, n), append(perSecond, r.PerSecond), append(burst, r.Burst)
	}
	if _, err := tx.Exec(ctx, texts.takeTokens, kinds, tenants, counts, perSecond, burst); err != nil {
		return fmt.Errorf("take the rate tokens of %d tenants: %w", len(taken), err)
	}
	return nil
}

// TenantRate is the rate of the attempts of one job kind for each tenant
// (workflow.DefineOpts.TenantRate): PerSecond tokens a second, in a bucket
// of Burst.
type TenantRate struct {
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
		if p.rates.every == 0 || time.Duration(float64(time.Second)/r.PerSecond) < p.rates.every {
			p.rates.every = time.Duration(float64(time.Second) / r.PerSecond)
		}
	}
	p.rates.every = max(p.rates.every, minRateFetchWait)
}

// pilotRates are the tenant rates of a pilot, as the fetch passes them.
type pilotRates struct {
	byKind    map[string]TenantRate
	kinds     []string
	perSecond []float64
	burst     []float64
	every     time.Duration // the time a token takes at the fastest rate, at least minRateFetchWait
}

// minRateFetchWait bounds how often a pilot wakes its queues' producers
// for rated tenants' tokens.
const minRateFetchWait = 20 * time.Millisecond
