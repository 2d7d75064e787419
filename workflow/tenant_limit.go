package workflow

// Per-tenant concurrency limits (DefineOpts.TenantLimit, SetTenantLimit).
//
// The fetch keeps them (internal/engine/fair_limits.go): River's producers
// take a limited run's job only while its tenant has fewer jobs of the
// type running than its limit, counted at the fetch under a lock of the
// kind that racing fetches on every client take too. A run over the limit
// is not touched: its job stays ready in its place in its tenant's line,
// holds no worker, is not retried, and is fetched once a run of its tenant
// ends its attempt (completes, fails, or parks in a sleep or a wait). A
// job counts while River has it running, so a run that sleeps or waits
// counts for nothing, and a killed client's runs count until their jobs
// are rescued. Nothing is written when an attempt begins or ends.

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
)

// kindTenantLimits returns the DefineOpts.TenantLimit of the registered
// types that have one, by job kind, for the fetch.
func (c *Client) kindTenantLimits() map[string]engine.TenantLimit {
	limits := make(map[string]engine.TenantLimit)
	for name, limit := range c.typeTenantLimits() {
		limits[kindOf(name)] = engine.TenantLimit{Type: name, Max: limit}
	}
	return limits
}

// typeTenantLimits returns the DefineOpts.TenantLimit of the registered
// types that have one.
func (c *Client) typeTenantLimits() map[string]int {
	limits := make(map[string]int)
	for name, reg := range c.types {
		if reg.opts.TenantLimit > 0 {
			limits[name] = reg.opts.TenantLimit
		}
	}
	return limits
}

// markHeld sets Held of the runs held back: pending and ready, while their
// tenant has as many running as its limit (HeldTenantLimit), or else
// beyond its bucket's whole tokens in its line (HeldTenantRate). It asks
// the database only about pending runs with a tenant.
func (c *Client) markHeld(ctx context.Context, runs ...*Run) error {
	var ids []uuid.UUID
	for _, r := range runs {
		if r.Status == StatusPending && r.Tenant != "" {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	held, err := c.db.HeldRuns(ctx, c.pool, ids, workerLiveWithin)
	if err != nil {
		return fmt.Errorf("workflow: read which runs their tenant's limit or rate holds: %w", err)
	}
	for _, r := range runs {
		if reason, ok := held[r.ID]; ok {
			r.Held = reason
		}
	}
	return nil
}

// SetTenantLimit sets the most runs of workflow type typ and tenant tenant
// that work at once, in place of the type's DefineOpts.TenantLimit, across
// every client, from the next fetch: a limit raised starts held runs at
// once; one lowered holds back the next attempts until enough running ones
// have ended (none is stopped). maxRunning 0 removes the tenant's own limit,
// leaving the type's. Only types with a DefineOpts.TenantLimit are
// limited: a tenant's limit on another type is kept but applies only once
// the type has one.
func (c *Client) SetTenantLimit(ctx context.Context, typ, tenant string, maxRunning int) error {
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error { return c.SetTenantLimitTx(ctx, tx, typ, tenant, maxRunning) })
}

// SetTenantLimitTx is like SetTenantLimit, within tx.
func (c *Client) SetTenantLimitTx(ctx context.Context, tx pgx.Tx, typ, tenant string, maxRunning int) error {
	if err := validateName(typ); err != nil {
		return err
	}
	if err := CheckTenant("tenant", tenant); err != nil {
		return err
	}
	if maxRunning < 0 {
		return &ValidationError{Field: "maxRunning", Problem: fmt.Sprintf("is %d; use 1 or more, or 0 to remove the tenant's own limit", maxRunning)}
	}
	var err error
	if maxRunning == 0 {
		err = c.db.ClearTenantLimitTx(ctx, tx, typ, tenant)
	} else {
		err = c.db.SetTenantLimitTx(ctx, tx, typ, tenant, maxRunning, c.sqlNow())
	}
	if err != nil {
		return fmt.Errorf("workflow: set the limit of tenant %q of %s: %w", tenant, typ, err)
	}
	// A limit raised lets ready runs start.
	return c.notifyTenantQueuesTx(ctx, tx, typ, tenant)
}

// notifyTenantQueuesTx notifies, when tx commits, the producers of the
// queues where typ's tenant has runs ready, so that they fetch at once: a
// tenant's limit or rate raised lets those runs start (sooner).
func (c *Client) notifyTenantQueuesTx(ctx context.Context, tx pgx.Tx, typ, tenant string) error {
	queues, err := c.db.TenantReadyQueues(ctx, tx, typ, tenant)
	if err != nil {
		return fmt.Errorf("workflow: find the queues of tenant %q of %s: %w", tenant, typ, err)
	}
	for _, q := range queues {
		if err := c.jobs.NotifyQueueTx(ctx, tx, q); err != nil {
			return err
		}
	}
	return nil
}

// TenantLimit is a limit set for one tenant of a workflow type.
type TenantLimit struct {
	Type       string    `json:"workflow_type"`
	Tenant     string    `json:"tenant"`
	MaxRunning int       `json:"max_running"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// TenantLimits lists the limits set for tenants (SetTenantLimit), by type
// and tenant.
func (c *Client) TenantLimits(ctx context.Context) ([]*TenantLimit, error) {
	rows, err := c.db.TenantLimits(ctx, c.pool)
	if err != nil {
		return nil, fmt.Errorf("workflow: list tenant limits: %w", err)
	}
	limits := make([]*TenantLimit, len(rows))
	for i, r := range rows {
		limits[i] = &TenantLimit{Type: r.Type, Tenant: r.Tenant, MaxRunning: r.MaxRunning, UpdatedAt: r.UpdatedAt}
	}
	return limits, nil
}

// Tenant is how one tenant of a workflow type stands: its runs working,
// ready and held back, and its limit and rate. Held, RateLimited and Ready
// count its ready runs (their River job available, not yet fetched), each
// once.
type Tenant struct {
	Type   string `json:"workflow_type"`
	Tenant string `json:"tenant"`
	// Running is how many of its runs are working (their River job is
	// running), Held how many are held back by its limit: all of its
	// ready runs while it has as many running as its limit.
	Running int `json:"running"`
	Held    int `json:"held"`
	// RateLimited is how many of its ready runs wait for its rate, when
	// it is not at its limit: those whose place in its line (its ready
	// runs of the type in their queue, in the fetch's order: priority,
	// then the time they became due, then start order, from 1) is beyond
	// the whole tokens of its bucket as the fetch would find it now,
	// refilled at its rate (one for a tenant never fetched). Each queue's
	// line counts on its own. See tenant_rate.go.
	RateLimited int `json:"rate_limited"`
	// Ready is how many of its ready runs are neither held back nor
	// waiting for its rate: waiting for their tenant's turn or a free
	// worker.
	Ready int `json:"ready"`
	// Limit is the most of its runs that may work at once: its own
	// (LimitSource "tenant"), else its type's DefineOpts.TenantLimit as
	// the type's live workers register it ("type"); 0 with LimitSource ""
	// for none.
	Limit       int    `json:"limit"`
	LimitSource string `json:"limit_source,omitempty"`
	// Rate is the most attempts of its runs that start per period: its own
	// (RateSource "tenant", SetTenantRate), else its type's
	// DefineOpts.TenantRate as the type's live workers register it
	// ("type"); the zero Rate with RateSource "" for none.
	Rate       Rate   `json:"rate,omitzero"`
	RateSource string `json:"rate_source,omitempty"`
	// NextToken is how long until its bucket's next whole token, as the
	// database's clock read it, while RateLimited > 0; 0 otherwise.
	NextToken time.Duration `json:"next_token,omitempty"`
}

// Why says why a held run of the tenant waits, for people: "acme has 5 of
// 5 running". RateWhy says why one waits for its rate.
func (t *Tenant) Why() string {
	return fmt.Sprintf("%s has %d of %d running", t.Tenant, t.Running, t.Limit)
}

// TenantParams filter Tenants.
type TenantParams struct {
	// Type and Tenant keep one workflow type and one tenant.
	Type   string
	Tenant string
	// Limit is how many to list. Defaults to 100; at most 1000.
	Limit int
}

// Tenants lists the tenants that have runs working, ready or held back, or
// a limit or rate of their own (SetTenantLimit, SetTenantRate), by
// workflow type: those with the most runs waiting (ready, waiting for
// their rate or held back) first, then the busiest. A tenant's own limit
// or rate on a type without DefineOpts.TenantLimit or TenantRate is
// listed, though it applies to nothing. Its cost follows the running jobs
// (at most the workers), the ready runs and the limits and rates set, not
// the tables of finished work.
func (c *Client) Tenants(ctx context.Context, params *TenantParams) ([]*Tenant, error) {
	if params == nil {
		params = &TenantParams{}
	}
	limit := orDefault(params.Limit, 100)
	if limit < 1 || limit > 1000 {
		return nil, &ValidationError{Field: "TenantParams.Limit", Problem: fmt.Sprintf("is %d; use 1 to 1000", limit)}
	}
	rows, err := c.db.Tenants(ctx, c.pool, &engine.TenantsParams{Type: params.Type, Tenant: params.Tenant, LiveWithin: workerLiveWithin, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("workflow: list tenants: %w", err)
	}
	tenants := make([]*Tenant, len(rows))
	for i, r := range rows {
		t := &Tenant{Type: r.Type, Tenant: r.Tenant, Running: r.Running, Held: r.Held, RateLimited: r.RateLimited, Ready: r.Ready, NextToken: r.NextToken}
		switch {
		case r.TenantLimit > 0:
			t.Limit, t.LimitSource = r.TenantLimit, "tenant"
		case r.TypeLimit > 0:
			t.Limit, t.LimitSource = r.TypeLimit, "type"
		}
		switch {
		case r.TenantRate.Limit > 0:
			t.Rate, t.RateSource = Rate{Limit: r.TenantRate.Limit, Per: r.TenantRate.Per}, "tenant"
		case r.TypeRate.Limit > 0:
			t.Rate, t.RateSource = Rate{Limit: r.TypeRate.Limit, Per: r.TypeRate.Per}, "type"
		}
		tenants[i] = t
	}
	return tenants, nil
}
