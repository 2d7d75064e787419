package schedule

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// DefaultReconcileInterval is how often the reconciler looks for broken
// chains when Config.ReconcileInterval is zero.
const DefaultReconcileInterval = time.Minute

// reconcileGrace is how overdue a schedule's next slot must be before the
// reconciler re-seeds it. Re-seeding is idempotent (the slot's job is a
// unique job), so a small grace only costs a no-op insert for a slot that
// was about to fire anyway.
const reconcileGrace = 2 * time.Second

// Reconcile repairs broken chains (RECONCILER_REPAIRS_CHAIN): a live
// schedule whose next slot is overdue has lost its slot's job (deleted or
// cancelled in River UI, or lost some other way), and gets it back. The
// re-seeded job is a unique job on (schedule, slot), so reconciling a chain
// that is not broken inserts nothing, and two reconcilers cannot fire a slot
// twice. The query reads only overdue schedules, through the partial index
// on next_fire_at: its cost grows with broken chains, not with all
// schedules. It returns how many schedules it looked at.
//
// A working client runs it on start-up and every ReconcileInterval, on the
// leader, as a River periodic job.
func (c *Client) Reconcile(ctx context.Context) (int, error) {
	if err := c.bound(); err != nil {
		return 0, err
	}
	rows, err := c.wf.Pool().Query(ctx, c.q.overdue, reconcileGrace.Seconds())
	if err != nil {
		return 0, fmt.Errorf("schedule: find overdue schedules: %w", err)
	}
	type overdue struct {
		id   uuid.UUID
		next time.Time
	}
	var found []overdue
	for rows.Next() {
		var o overdue
		if err := rows.Scan(&o.id, &o.next); err != nil {
			rows.Close()
			return 0, err
		}
		found = append(found, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, o := range found {
		err := pgx.BeginFunc(ctx, c.wf.Pool(), func(tx pgx.Tx) error { return c.seedTx(ctx, tx, o.id, o.next) })
		if err != nil {
			return 0, fmt.Errorf("schedule: re-seed %s: %w", o.id, err)
		}
	}
	if len(found) > 0 {
		c.logger.InfoContext(ctx, "tributary: Reconciled overdue schedules", slog.Int("count", len(found)))
	}
	return len(found), nil
}

// reconcileArgs is the periodic job that runs Reconcile.
type reconcileArgs struct{}

func (reconcileArgs) Kind() string { return "tributary:schedule_reconcile" }

type reconcileWorker struct {
	river.WorkerDefaults[reconcileArgs]
	c *Client
}

func (w *reconcileWorker) Work(ctx context.Context, _ *river.Job[reconcileArgs]) error {
	_, err := w.c.Reconcile(ctx)
	return err
}

func (c *Client) addReconciler(config *river.Config, interval time.Duration) error {
	if err := river.AddWorkerSafely(config.Workers, &reconcileWorker{c: c}); err != nil {
		return err
	}
	if config.LeaderElectionDisabled {
		return nil // periodic jobs run on the leader; this client never leads
	}
	config.PeriodicJobs = append(slices.Clip(config.PeriodicJobs), river.NewPeriodicJob(
		river.PeriodicInterval(interval),
		func() (river.JobArgs, *river.InsertOpts) {
			return reconcileArgs{}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: interval}}
		},
		&river.PeriodicJobOpts{ID: "tributary:schedule_reconcile", RunOnStart: true},
	))
	return nil
}
