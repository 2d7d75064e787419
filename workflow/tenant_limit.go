package workflow

// Per-tenant concurrency limits (DefineOpts.TenantLimit, SetTenantLimit).
//
// A slot is taken when an attempt of a limited run begins, after River
// fetched its job, and given back when the attempt ends, however it ends
// (completed, failed, parked in a sleep or a wait, retried), so that a run
// that sleeps or waits holds no slot. An attempt that finds every slot of
// its tenant taken, or older runs of its tenant held back, does not run:
// in the same transaction its job is completed and the run continues on a
// new job in River's pending state, which River never fetches, and the run
// is marked held (workflow_runs.held). It holds no worker while it waits
// and is not retried. Each slot given back wakes the oldest held runs, as
// many as slots are free; a woken run takes its slot when River fetches
// it. Slots are taken and given back under a transaction advisory lock of
// the (type, tenant) pair, so that racing clients never take more slots
// than the limit, and no run is held back after the slot it waited for
// was given back.
//
// A slot counts only while its job runs the attempt that took it, so a
// client killed mid-attempt frees its slots when River or the worker
// registry rescues its jobs; every heartbeat a client also looks for
// tenants with held runs and free slots (a slot freed that way gives
// nothing back) and wakes them.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/engine"
)

// admitTenant takes a slot of the attempt's tenant, or holds its run back
// and reports false: the job is then completed and must not run.
func (c *Client) admitTenant(ctx context.Context, typ string, job *river.Job[runArgs], typeLimit int) (admitted bool, err error) {
	tenant, runID := job.Args.Tenant, job.Args.RunID
	err = pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		if err := c.db.LockTenantTx(ctx, tx, typ, tenant); err != nil {
			return err
		}
		// The run's lock orders a hold against a cancellation.
		status, cancelRequested, err := c.db.LockRunTx(ctx, tx, runID)
		if err != nil {
			return fmt.Errorf("lock run: %w", err)
		}
		u, err := c.db.TenantUsageTx(ctx, tx, typ, tenant, runID, typeLimit)
		if err != nil {
			return err
		}
		if (u.Running < u.Limit && !u.OlderHeld) || cancelRequested || Status(status).Finished() {
			// A run being cancelled takes its slot for the moment its
			// attempt needs to notice.
			admitted = true
			return c.db.TakeTenantSlotTx(ctx, tx, &engine.TenantSlot{RunID: runID, Type: typ, Tenant: tenant, JobID: job.ID, Attempt: job.Attempt})
		}
		why, err := json.Marshal(map[string]any{"tributary_held": engine.HeldTenantLimit, "tributary_tenant": tenant,
			"tributary_tenant_running": u.Running, "tributary_tenant_limit": u.Limit})
		if err != nil {
			return err
		}
		next, err := c.holdTx(ctx, tx, job.JobRow, job.Args, why)
		if err != nil {
			return err
		}
		if err := c.db.HoldRunTx(ctx, tx, runID, engine.HeldTenantLimit, next); err != nil {
			return err
		}
		// Slots are free but older runs wait: they go first.
		return c.wakeHeldTx(ctx, tx, typ, tenant, u.Limit-u.Running)
	})
	if err == nil && !admitted {
		c.logger.DebugContext(ctx, "tributary: Run held back: its tenant has every slot taken",
			slog.String("run_id", runID.String()), slog.String("workflow", typ), slog.String("tenant", tenant))
	}
	return admitted, err
}

// giveBackTenantSlot gives back the slot of run runID's attempt and wakes
// the oldest held runs of its tenant for the slots now free.
func (c *Client) giveBackTenantSlot(ctx context.Context, typ, tenant string, runID uuid.UUID, typeLimit int) {
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		return c.freeTenantSlotsTx(ctx, tx, typ, tenant, runID, typeLimit)
	})
	if err != nil {
		// The slot counts no more once the attempt's job stops running;
		// the heartbeat's sweep wakes what this did not.
		c.logger.WarnContext(ctx, "tributary: Could not give back a tenant's slot; held runs of the tenant wait for the next heartbeat",
			slog.String("run_id", runID.String()), slog.String("workflow", typ), slog.String("tenant", tenant), slog.String("err", err.Error()))
	}
}

// freeTenantSlotsTx gives back runID's slot (none for uuid.Nil) and the
// slots of attempts that are over, and wakes held runs for the slots free.
func (c *Client) freeTenantSlotsTx(ctx context.Context, tx pgx.Tx, typ, tenant string, runID uuid.UUID, typeLimit int) error {
	if err := c.db.LockTenantTx(ctx, tx, typ, tenant); err != nil {
		return err
	}
	if err := c.db.GiveBackTenantSlotTx(ctx, tx, typ, tenant, runID); err != nil {
		return err
	}
	u, err := c.db.TenantUsageTx(ctx, tx, typ, tenant, uuid.Nil, typeLimit)
	if err != nil {
		return err
	}
	return c.wakeHeldTx(ctx, tx, typ, tenant, u.Limit-u.Running)
}

// wakeHeldTx makes the jobs of the n oldest held runs of typ's tenant
// available. A woken run stays held until its attempt takes a slot, so
// that a run woken twice is counted once.
func (c *Client) wakeHeldTx(ctx context.Context, tx pgx.Tx, typ, tenant string, n int) error {
	if n <= 0 {
		return nil
	}
	held, err := c.db.HeldRunsTx(ctx, tx, typ, tenant, n)
	if err != nil {
		return err
	}
	for _, h := range held {
		if err := c.makeAvailableTx(ctx, tx, h.JobID, h.Queue); err != nil {
			return err
		}
	}
	return nil
}

// sweepHeldTenants wakes the held runs of tenants with free slots, for the
// types this client limits: slots freed by attempts that never gave them
// back (a killed client) wake nothing themselves.
func (c *Client) sweepHeldTenants(ctx context.Context) error {
	limits := c.typeTenantLimits()
	if len(limits) == 0 {
		return nil
	}
	types := slices.Collect(maps.Keys(limits))
	pairs, err := c.db.HeldTenants(ctx, c.pool, types, tenantSweepMax)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
			return c.freeTenantSlotsTx(ctx, tx, p.Type, p.Tenant, uuid.Nil, limits[p.Type])
		})
		if err != nil {
			return err
		}
	}
	return nil
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

// tenantSweepMax bounds the tenants one sweep looks at.
const tenantSweepMax = 1000

// tenantSweepEvery is how many heartbeats pass between two sweeps.
const tenantSweepEvery = 5

// SetTenantLimit sets the most runs of workflow type typ and tenant tenant
// that work at once, in place of the type's DefineOpts.TenantLimit, across
// every client, at once: a limit raised wakes held runs for the new slots;
// one lowered holds back the next attempts until enough running ones have
// ended (none is stopped). maxRunning 0 removes the tenant's own limit,
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
	if err := c.db.LockTenantTx(ctx, tx, typ, tenant); err != nil {
		return err
	}
	var err error
	if maxRunning == 0 {
		err = c.db.ClearTenantLimitTx(ctx, tx, typ, tenant)
	} else {
		err = c.db.SetTenantLimitTx(ctx, tx, typ, tenant, maxRunning)
	}
	if err != nil {
		return fmt.Errorf("workflow: set the limit of tenant %q of %s: %w", tenant, typ, err)
	}
	typeLimit := 0
	if reg, ok := c.types[typ]; ok {
		typeLimit = reg.opts.TenantLimit
	}
	if maxRunning == 0 && typeLimit == 0 {
		return nil // this client does not know the type's limit; the workers' sweep wakes what the change frees
	}
	u, err := c.db.TenantUsageTx(ctx, tx, typ, tenant, uuid.Nil, typeLimit)
	if err != nil {
		return err
	}
	return c.wakeHeldTx(ctx, tx, typ, tenant, u.Limit-u.Running)
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

// Tenant is how one tenant of a workflow type stands: its runs working and
// held back, and its limit.
type Tenant struct {
	Type   string `json:"workflow_type"`
	Tenant string `json:"tenant"`
	// Running is how many of its runs are working (their River job is
	// running), Held how many are held back by its limit.
	Running int `json:"running"`
	Held    int `json:"held"`
	// Limit is the most of its runs that may work at once: its own
	// (LimitSource "tenant"), else its type's DefineOpts.TenantLimit as
	// the type's live workers register it ("type"); 0 with LimitSource ""
	// for none.
	Limit       int    `json:"limit"`
	LimitSource string `json:"limit_source,omitempty"`
}

// Why says why a held run of the tenant waits, for people: "acme has 5 of
// 5 running".
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

// Tenants lists the tenants that have runs working or held back, or a
// limit of their own (SetTenantLimit), by workflow type: those with the
// most runs held back first, then the busiest. A tenant whose runs are
// all pending (not yet fetched) and not held is not listed; nor is a
// tenant's own limit applied to a type without DefineOpts.TenantLimit,
// though it is listed. Its cost
// follows the running jobs (at most the workers), the held runs and the
// limits set, not the tables.
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
		t := &Tenant{Type: r.Type, Tenant: r.Tenant, Running: r.Running, Held: r.Held}
		switch {
		case r.TenantLimit > 0:
			t.Limit, t.LimitSource = r.TenantLimit, "tenant"
		case r.TypeLimit > 0:
			t.Limit, t.LimitSource = r.TypeLimit, "type"
		}
		tenants[i] = t
	}
	return tenants, nil
}
