package schedule

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/tributary-go/tributary/jobs"
)

// DefaultReconcileInterval is how often the reconciler looks for broken
// chains when Config.ReconcileInterval is zero.
const DefaultReconcileInterval = jobs.DefaultReconcileInterval

// reconcileGrace is how overdue a schedule's next slot must be before the
// reconciler takes its chain for broken: a slot due this moment is its
// instant's fire job's to fire.
const reconcileGrace = 2 * time.Second

// Reconcile repairs broken chains (RECONCILER_REPAIRS_CHAIN): a live
// schedule whose next slot is overdue has lost its instant's fire job
// (deleted or cancelled in River UI, discarded, or lost some other way).
// Reconcile fires such slots itself, with the same firing pass as a fire
// job, so the slot fires once whoever gets to it first (SLOT_IS_UNIQUE). The
// query that finds them reads only overdue schedules, through the partial
// index on next_fire_at: its cost grows with broken chains, not with all
// schedules. It returns how many slots it fired or recorded as skipped.
//
// A slot found this way is held against its catch-up window as follows. If
// this client's previous repair pass ran less than two reconcile intervals
// ago, the system was up when the slot came due, so the chain broke under
// it, and the slot counts as found at the later of its time and that pass
// (it runs, however long the chain took to be noticed). Otherwise (the
// start-up pass, or the first after downtime or a database outage) its
// lateness counts from its time, as after downtime: slots older than the
// window are recorded as missed (SKIP_MISSED_BY_DEFAULT).
//
// It also repairs the prepared slots (prepare.go) that a client of an
// earlier version passed over (repairPassedOver).
//
// A working client runs it on start-up and every ReconcileInterval, on the
// leader, as a River periodic job.
func (c *Client) Reconcile(ctx context.Context) (int, error) {
	now := c.now()
	c.repairMu.Lock()
	previous := c.lastRepair
	c.repairMu.Unlock()

	overdue, err := c.q.AnyDue(ctx, c.rt.Pool(), now.Add(-reconcileGrace), nil)
	if err != nil {
		return 0, fmt.Errorf("schedule: find overdue schedules: %w", err)
	}
	n := 0
	if overdue {
		foundAt := now
		if !previous.IsZero() && now.Sub(previous) < 2*c.interval {
			foundAt = previous
		}
		stats, err := c.firePass(ctx, &pass{bound: now, foundAt: foundAt})
		c.metrics.record(ctx, stats)
		if err != nil {
			return 0, fmt.Errorf("schedule: fire overdue schedules: %w", err)
		}
		n = stats.Slots()
		c.logger.InfoContext(ctx, "tributary: Repaired broken schedule chains", slog.Int("slots", n),
			slog.Int("started", stats.Started), slog.Any("skipped", stats.Skipped))
	}
	c.repairMu.Lock()
	c.lastRepair = now
	c.repairMu.Unlock()
	if err := c.repairPassedOver(ctx, now); err != nil {
		return n, err
	}
	if err := c.warnUnserved(ctx); err != nil {
		c.logger.WarnContext(ctx, "tributary: Could not check which schedules' workflow types have a live worker", slog.String("err", err.Error()))
	}
	return n, nil
}

// warnUnserved logs a warning for each workflow type that live schedules
// start and no live worker serves (the worker registry): their runs stay
// pending, and an operator reading the logs of `tributary serve` (or of any
// working client, on the leader) learns why.
func (c *Client) warnUnserved(ctx context.Context) error {
	counts, err := c.q.LiveScheduleTypes(ctx, c.rt.Pool())
	if err != nil {
		return fmt.Errorf("schedule: read the workflow types of live schedules: %w", err)
	}
	if len(counts) == 0 {
		return nil
	}
	served, err := c.rt.TypesServed(ctx, slices.Collect(maps.Keys(counts)))
	if err != nil {
		return err
	}
	for _, typ := range slices.Sorted(maps.Keys(counts)) {
		if !served[typ] {
			c.logger.WarnContext(ctx, "tributary: Live schedules start a workflow type that no live worker serves; their runs stay pending until a client that registers it starts",
				slog.String("workflow", typ), slog.Int("schedules", counts[typ]))
		}
	}
	return nil
}

// reconcileJob is the maintenance job that runs Reconcile on River's
// leader every c.interval, and once when a client starts leading, in Queue.
func (c *Client) reconcileJob() jobs.Job {
	return jobs.Job{Kind: jobs.KindScheduleReconcile, Interval: c.interval, Queue: Queue, Run: c.Reconcile, Logger: c.logger}
}
