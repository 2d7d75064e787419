package workflow

// Per-tenant rates (DefineOpts.TenantRate, SetTenantRate).
//
// The fetch keeps them (internal/engine/fair_rates.go): a token bucket per
// (type, tenant) in tributary_tenant_rates, refilled at the tenant's rate
// and read, locked and taken in the transaction of the fetch that starts
// the attempts, so that every client shares one rate. The tenant's rate is
// its own when an operator set one (SetTenantRate), else its type's. A run
// over the rate is not touched: its job stays ready in its place in its
// tenant's line and is fetched in its tenant's turn once a token is there.
//
// A ready run waits for its rate (Run.Held HeldTenantRate, counted in
// Tenant.RateLimited) when its tenant is not at its limit and its place in
// its tenant's line (the tenant's ready runs of its type in its queue, in
// the fetch's order: priority, then the time it became due, then start
// order, from 1) is beyond the whole tokens of the tenant's bucket as the
// fetch would find it now; a tenant never fetched has the one token a new
// bucket starts with. Those are exactly the runs the fetch would leave out.
// Each queue's line counts on its own: a tenant whose runs of one type are
// in two queues shows the first of each line as having a token, though
// the two lines share one bucket.

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
)

// kindTenantRates returns the DefineOpts.TenantRate of the registered types
// that have one, by job kind, for the fetch.
func (c *Client) kindTenantRates() map[string]engine.TenantRate {
	rates := make(map[string]engine.TenantRate)
	for name, rate := range c.typeTenantRates() {
		rates[kindOf(name)] = rate
	}
	return rates
}

// typeTenantRates returns the DefineOpts.TenantRate of the registered types
// that have one, as the fetch keeps them.
func (c *Client) typeTenantRates() map[string]engine.TenantRate {
	rates := make(map[string]engine.TenantRate)
	for name, reg := range c.types {
		if reg.opts.TenantRate != (Rate{}) {
			rates[name] = reg.opts.TenantRate.engine()
		}
	}
	return rates
}

// engine is r as the fetch keeps it.
func (r Rate) engine() engine.TenantRate {
	perSecond, burst := r.perSecond()
	return engine.TenantRate{Limit: r.Limit, Per: r.Per, PerSecond: perSecond, Burst: burst}
}

// SetTenantRate sets the most attempts of runs of workflow type typ and
// tenant tenant that start per period, in place of the type's
// DefineOpts.TenantRate, across every client, from the next fetch: the
// tenant's bucket keeps its tokens, refills at the new rate from when it
// was last read, and holds at most the new rate's bucket (a tenth of a
// second's worth, at least 1); a fetch that read the old rate takes its
// tokens at the old one. A run already started is not stopped. The zero
// Rate removes the tenant's own rate, leaving the type's. Only types with a
// DefineOpts.TenantRate are rated: a tenant's rate on another type is kept
// but applies only once the type has one, as SetTenantLimit's limits do.
// Rate.Per is kept to the microsecond.
//
// The rate is a bound, never exceeded. A working client that left rated
// runs for want of tokens fetches again when the soonest of their next
// tokens comes, at each tenant's own rate (at most every 20 ms), so a rate
// faster than the type's is kept as closely as the type's.
//
// Bad input is a *ValidationError naming the argument (name, tenant,
// rate.Limit, rate.Per), and nothing is written.
func (c *Client) SetTenantRate(ctx context.Context, typ, tenant string, rate Rate) error {
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error { return c.SetTenantRateTx(ctx, tx, typ, tenant, rate) })
}

// SetTenantRateTx is like SetTenantRate, within tx; the caller commits or
// rolls back.
func (c *Client) SetTenantRateTx(ctx context.Context, tx pgx.Tx, typ, tenant string, rate Rate) error {
	if err := validateName(typ); err != nil {
		return err
	}
	if err := CheckTenant("tenant", tenant); err != nil {
		return err
	}
	if err := checkTenantRate(rate); err != nil {
		return err
	}
	var err error
	if rate == (Rate{}) {
		err = c.db.ClearTenantRateTx(ctx, tx, typ, tenant)
	} else {
		err = c.db.SetTenantRateTx(ctx, tx, typ, tenant, rate.engine(), c.sqlNow())
	}
	if err != nil {
		return fmt.Errorf("workflow: set the rate of tenant %q of %s: %w", tenant, typ, err)
	}
	// A rate raised lets ready runs start sooner.
	return c.notifyTenantQueuesTx(ctx, tx, typ, tenant)
}

// checkTenantRate validates the rate of SetTenantRate: the zero Rate, or
// Limit from 1 (at most what the table holds) per a Per of 1µs or more.
func checkTenantRate(r Rate) error {
	switch {
	case r == Rate{}:
		return nil
	case r.Limit < 1:
		return &ValidationError{Field: "rate.Limit", Problem: fmt.Sprintf("is %d; use 1 or more, or the zero Rate to remove the tenant's own rate", r.Limit)}
	case r.Limit > math.MaxInt32:
		return &ValidationError{Field: "rate.Limit", Problem: fmt.Sprintf("is %d; use at most %d, over a shorter period if need be", r.Limit, math.MaxInt32)}
	case r.Per <= 0:
		return &ValidationError{Field: "rate.Per", Problem: fmt.Sprintf("is %s, a rate with no period; give a positive duration such as time.Minute", r.Per)}
	case r.Per < time.Microsecond:
		return &ValidationError{Field: "rate.Per", Problem: fmt.Sprintf("is %s; give 1µs or more (a tenant's rate is kept to the microsecond)", r.Per)}
	}
	return nil
}

// TenantRate is a rate set for one tenant of a workflow type
// (SetTenantRate).
type TenantRate struct {
	Type      string    `json:"workflow_type"`
	Tenant    string    `json:"tenant"`
	Rate      Rate      `json:"rate"`
	UpdatedAt time.Time `json:"updated_at"`
}

// TenantRates lists the rates set for tenants (SetTenantRate), by type and
// tenant.
func (c *Client) TenantRates(ctx context.Context) ([]*TenantRate, error) {
	rows, err := c.db.TenantRates(ctx, c.pool)
	if err != nil {
		return nil, fmt.Errorf("workflow: list tenant rates: %w", err)
	}
	rates := make([]*TenantRate, len(rows))
	for i, r := range rows {
		rates[i] = &TenantRate{Type: r.Type, Tenant: r.Tenant, Rate: Rate{Limit: r.Limit, Per: r.Per}, UpdatedAt: r.UpdatedAt}
	}
	return rates, nil
}

// RateWhy says why a run of the tenant waits for its rate, for people:
// "acme is at its rate, 100 per 1m0s; next token in 2.3s".
func (t *Tenant) RateWhy() string {
	why := fmt.Sprintf("%s is at its rate, %s", t.Tenant, t.Rate)
	if t.NextToken > 0 {
		why += "; next token in " + roundWait(t.NextToken).String()
	}
	return why
}

// roundWait rounds a wait for people: to the millisecond under a second,
// to the tenth of a second above.
func roundWait(d time.Duration) time.Duration {
	if d < time.Second {
		return max(d.Round(time.Millisecond), time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
