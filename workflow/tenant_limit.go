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
	"bytes"
	"cmp"
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

// admitReq asks for a slot for an attempt of a limited run.
type admitReq struct {
	typ       string
	typeLimit int
	job       *river.Job[runArgs]
}

// givebackReq gives back the slot of a run's attempt.
type givebackReq struct {
	typ, tenant string
	typeLimit   int
	runID       uuid.UUID
}

// tenantFlows is how many admission and give-back batches are written at
// once, each.
const tenantFlows = 2

// admitTenant takes a slot of the attempt's tenant, or holds its run back
// and reports false: the job is then completed and must not run. Attempts
// beginning at the same moment share one transaction (flushAdmits).
func (c *Client) admitTenant(ctx context.Context, typ string, job *river.Job[runArgs], typeLimit int) (bool, error) {
	return c.batch.admits.do(ctx, &admitReq{typ: typ, typeLimit: typeLimit, job: job})
}

// flushAdmits admits a batch of attempts in one transaction of a few
// statements, whatever its size: it takes the locks of their (type,
// tenant) pairs in order and locks their runs, reads how each pair stands,
// then, pair by pair and attempt by attempt in the order the runs were
// started, takes a slot or holds the run back.
func (c *Client) flushAdmits(ctx context.Context, items []*batchItem[*admitReq, bool]) error {
	slices.SortFunc(items, func(a, b *batchItem[*admitReq, bool]) int {
		return cmp.Or(cmp.Compare(a.req.typ, b.req.typ), cmp.Compare(a.req.job.Args.Tenant, b.req.job.Args.Tenant),
			bytes.Compare(a.req.job.Args.RunID[:], b.req.job.Args.RunID[:]))
	})
	var (
		pairs  []engine.TenantPair
		starts []int // the first item of each pair
		ids    = make([][16]byte, len(items))
	)
	for i, item := range items {
		r := item.req
		ids[i] = r.job.Args.RunID
		if i == 0 || r.typ != items[i-1].req.typ || r.job.Args.Tenant != items[i-1].req.job.Args.Tenant {
			pairs = append(pairs, engine.TenantPair{TypeTenant: engine.TypeTenant{Type: r.typ, Tenant: r.job.Args.Tenant}, TypeLimit: r.typeLimit})
			starts = append(starts, i)
		}
	}
	starts = append(starts, len(items))
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		if err := c.db.LockTenantsTx(ctx, tx, typeTenants(pairs)); err != nil {
			return err
		}
		// The runs' locks order a hold against a cancellation.
		locked, err := c.db.LockRunsTx(ctx, tx, ids)
		if err != nil {
			return fmt.Errorf("lock runs: %w", err)
		}
		runs := make(map[uuid.UUID]engine.LockedRun, len(locked))
		for _, r := range locked {
			runs[r.ID] = r
		}
		usages, err := c.db.TenantUsagesTx(ctx, tx, pairs, ids)
		if err != nil {
			return err
		}
		var (
			slots []engine.TenantSlot
			wakes []int // free slots per pair, for its held runs
		)
		for p, u := range usages {
			free, oldest := u.Limit-u.Running, u.OldestHeld
			for _, item := range items[starts[p]:starts[p+1]] {
				job := item.req.job
				runID := job.Args.RunID
				run, ok := runs[runID]
				// A run being cancelled takes its slot for the moment its
				// attempt needs to notice; a missing one for the moment
				// its attempt needs to fail.
				yield := ok && !run.CancelRequested && !Status(run.Status).Finished()
				if yield && (free <= 0 || (oldest != nil && bytes.Compare(oldest[:], runID[:]) < 0)) {
					if err := c.holdTx(ctx, tx, job, pairs[p], u); err != nil {
						return err
					}
					continue
				}
				item.res = true
				free--
				slots = append(slots, engine.TenantSlot{RunID: runID, Type: item.req.typ, Tenant: job.Args.Tenant, JobID: job.ID, Attempt: job.Attempt})
			}
			wakes = append(wakes, free)
		}
		if len(slots) > 0 {
			if err := c.db.TakeTenantSlotsTx(ctx, tx, slots); err != nil {
				return err
			}
		}
		// Slots are free but older runs wait: they go first.
		for p, free := range wakes {
			if usages[p].OldestHeld != nil {
				if err := c.wakeHeldTx(ctx, tx, pairs[p].Type, pairs[p].Tenant, free); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// holdTx holds a run back: its attempt's job is completed and the run
// waits on a next job in River's pending state (parkHeldTx), its metadata
// saying why for River UI.
func (c *Client) holdTx(ctx context.Context, tx pgx.Tx, job *river.Job[runArgs], pair engine.TenantPair, u engine.TenantUsage) error {
	why, err := json.Marshal(map[string]any{"tributary_held": engine.HeldTenantLimit, "tributary_tenant": pair.Tenant,
		"tributary_tenant_running": u.Running, "tributary_tenant_limit": u.Limit})
	if err != nil {
		return err
	}
	next, err := c.parkHeldTx(ctx, tx, job.JobRow, job.Args, why)
	if err != nil {
		return err
	}
	if err := c.db.HoldRunTx(ctx, tx, job.Args.RunID, engine.HeldTenantLimit, next); err != nil {
		return err
	}
	c.logger.DebugContext(ctx, "tributary: Run held back: its tenant has every slot taken",
		slog.String("run_id", job.Args.RunID.String()), slog.String("workflow", pair.Type), slog.String("tenant", pair.Tenant))
	return nil
}

// typeTenants are the pairs of pairs.
func typeTenants(pairs []engine.TenantPair) []engine.TypeTenant {
	tt := make([]engine.TypeTenant, len(pairs))
	for i, p := range pairs {
		tt[i] = p.TypeTenant
	}
	return tt
}

// giveBackTenantSlot gives back the slot of run runID's attempt and wakes
// the oldest held runs of its tenant for the slots now free. Attempts
// ending at the same moment share one transaction (flushGivebacks).
func (c *Client) giveBackTenantSlot(ctx context.Context, typ, tenant string, runID uuid.UUID, typeLimit int) {
	_, err := c.batch.givebacks.do(ctx, &givebackReq{typ: typ, tenant: tenant, typeLimit: typeLimit, runID: runID})
	if err != nil {
		// The slot counts no more once the attempt's job stops running;
		// the heartbeat's sweep wakes what this did not.
		c.logger.WarnContext(ctx, "tributary: Could not give back a tenant's slot; held runs of the tenant wait for the next heartbeat",
			slog.String("run_id", runID.String()), slog.String("workflow", typ), slog.String("tenant", tenant), slog.String("err", err.Error()))
	}
}

// flushGivebacks gives back a batch of slots in one transaction of a few
// statements. Its commit does not wait for the disk: a give-back a server
// crash loses costs nothing, since a slot counts only while its attempt's
// job runs, and the heartbeat's sweep wakes the held runs it would have
// woken.
func (c *Client) flushGivebacks(ctx context.Context, items []*batchItem[*givebackReq, struct{}]) error {
	slices.SortFunc(items, func(a, b *batchItem[*givebackReq, struct{}]) int {
		return cmp.Or(cmp.Compare(a.req.typ, b.req.typ), cmp.Compare(a.req.tenant, b.req.tenant))
	})
	var (
		pairs  []engine.TenantPair
		runIDs = make([][16]byte, len(items))
	)
	for i, item := range items {
		r := item.req
		runIDs[i] = r.runID
		if i == 0 || r.typ != items[i-1].req.typ || r.tenant != items[i-1].req.tenant {
			pairs = append(pairs, engine.TenantPair{TypeTenant: engine.TypeTenant{Type: r.typ, Tenant: r.tenant}, TypeLimit: r.typeLimit})
		}
	}
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		if err := c.db.AsyncCommitTx(ctx, tx); err != nil {
			return err
		}
		return c.freeTenantSlotsTx(ctx, tx, pairs, runIDs)
	})
}

// freeTenantSlotsTx gives back the slots of runIDs and those of attempts
// that are over, of pairs, and wakes their held runs for the slots free.
func (c *Client) freeTenantSlotsTx(ctx context.Context, tx pgx.Tx, pairs []engine.TenantPair, runIDs [][16]byte) error {
	if err := c.db.LockTenantsTx(ctx, tx, typeTenants(pairs)); err != nil {
		return err
	}
	if err := c.db.GiveBackTenantSlotsTx(ctx, tx, typeTenants(pairs), runIDs); err != nil {
		return err
	}
	usages, err := c.db.TenantUsagesTx(ctx, tx, pairs, nil)
	if err != nil {
		return err
	}
	for i, u := range usages {
		if u.OldestHeld != nil {
			if err := c.wakeHeldTx(ctx, tx, pairs[i].Type, pairs[i].Tenant, u.Limit-u.Running); err != nil {
				return err
			}
		}
	}
	return nil
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
	held, err := c.db.HeldTenants(ctx, c.pool, types, tenantSweepMax)
	if err != nil || len(held) == 0 {
		return err
	}
	pairs := make([]engine.TenantPair, len(held))
	for i, p := range held {
		pairs[i] = engine.TenantPair{TypeTenant: p, TypeLimit: limits[p.Type]}
	}
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error { return c.freeTenantSlotsTx(ctx, tx, pairs, nil) })
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
	pair := engine.TypeTenant{Type: typ, Tenant: tenant}
	if err := c.db.LockTenantsTx(ctx, tx, []engine.TypeTenant{pair}); err != nil {
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
	// The new limit may free slots: wake held runs for them.
	return c.freeTenantSlotsTx(ctx, tx, []engine.TenantPair{{TypeTenant: pair, TypeLimit: typeLimit}}, nil)
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
	// Ready is how many of its runs are ready to work and not yet fetched:
	// waiting for their tenant's turn, its rate (DefineOpts.TenantRate) or
	// a free worker.
	Ready int `json:"ready"`
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

// Tenants lists the tenants that have runs working, ready or held back, or
// a limit of their own (SetTenantLimit), by workflow type: those with the
// most runs waiting (ready or held back) first, then the busiest. A
// tenant's own limit applied to a type without DefineOpts.TenantLimit is
// listed, though it applies to nothing. Its cost follows the running jobs
// (at most the workers), the ready and held runs and the limits set, not
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
		t := &Tenant{Type: r.Type, Tenant: r.Tenant, Running: r.Running, Held: r.Held, Ready: r.Ready}
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
