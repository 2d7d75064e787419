package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/tributary-go/tributary/internal/wfhook"
)

// fireArgs is the River job of one slot of one schedule. It is a unique job
// on (schedule, slot), and the slot's run is unique on the same pair
// (SLOT_IS_UNIQUE): two clients, a retried transaction or a re-seed produce
// one run per slot.
type fireArgs struct {
	FireAt     time.Time `json:"fire_at" river:"unique"`
	ScheduleID uuid.UUID `json:"schedule_id" river:"unique"`
	// CatchUp marks the slot the "latest" catch-up policy jumped to: it
	// runs however late it is found.
	CatchUp bool `json:"catch_up,omitempty"`
}

func (fireArgs) Kind() string { return "tributary:schedule_fire" }

// seedTx inserts the fire job of schedule id's slot at, within tx, and asks
// the workflow clients to wake it at the exact time (River's scheduler alone
// would be up to five seconds late): this one if it works, else those that
// do, told when tx commits.
func (c *Client) seedTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, at time.Time) error {
	return c.seedSlotTx(ctx, tx, fireArgs{FireAt: at.UTC(), ScheduleID: id})
}

func (c *Client) seedSlotTx(ctx context.Context, tx pgx.Tx, args fireArgs) error {
	at := args.FireAt
	res, err := c.wf.River().InsertTx(ctx, tx, args, &river.InsertOpts{
		ScheduledAt: at,
		UniqueOpts:  river.UniqueOpts{ByArgs: true},
	})
	if err != nil {
		return fmt.Errorf("schedule: insert the job of slot %s: %w", at.Format(time.RFC3339), err)
	}
	if res.UniqueSkippedAsDuplicate {
		return nil
	}
	return c.wf.WakeAtTx(ctx, tx, &wfhook.Wake{At: at, JobID: res.Job.ID, Queue: res.Job.Queue})
}

// fireWorker fires slots. Firing a slot is one transaction
// (PRODUCER_ENQUEUES_NEXT, TRANSACTIONAL_EDGES): it starts the slot's run
// (or records it as skipped), inserts the next slot's fire job, advances the
// schedule's next_fire_at, and completes its own job.
type fireWorker struct {
	river.WorkerDefaults[fireArgs]
	c *Client
}

func (w *fireWorker) Work(ctx context.Context, job *river.Job[fireArgs]) error {
	c := w.c
	return pgx.BeginFunc(ctx, c.wf.Pool(), func(tx pgx.Tx) error {
		s, err := c.lockToStart(ctx, tx, job.Args.ScheduleID, "")
		if errors.Is(err, ErrNotFound) {
			return complete(ctx, tx, job) // deleted: the chain ends
		}
		if err != nil {
			return err
		}
		if s.Paused || s.NextFireAt == nil || !s.NextFireAt.Equal(job.Args.FireAt) {
			// Paused, or a stale job from before an update or resume: the
			// schedule's chain is elsewhere.
			return complete(ctx, tx, job)
		}
		spec, err := s.Spec()
		if err != nil {
			return fmt.Errorf("schedule %s: %w", s.ID, err)
		}

		fireAt, now := job.Args.FireAt, c.now()
		meta := slotMetadata(spec, fireAt)
		var (
			skip    string
			startAt time.Time
		)
		d := decideSlot(spec, s.CatchUpWindow, s.CatchUp, fireAt, now, job.Args.CatchUp)
		if d.missed {
			skip = SkipReasonMissed
		} else if skip, startAt, err = c.admit(ctx, tx, s, s.Overlap, meta); err != nil {
			return err
		}
		started, err := c.wf.StartScheduledTx(ctx, tx, &wfhook.ScheduledStart{
			FireAt: fireAt, Input: s.Input, MaxAttempts: s.MaxAttempts, Metadata: meta, Priority: s.Priority,
			Queue: s.Queue, ScheduleID: s.ID, Skip: skip, StartAt: startAt, Timeout: s.Timeout, Type: s.Workflow,
		})
		if err != nil {
			return fmt.Errorf("schedule %s: fire slot %s: %w", s.ID, fireAt.Format(time.RFC3339), err)
		}

		after, catchUp := d.after, d.nextIsCatchUp
		var next *time.Time
		if occ, ok := spec.Next(after); ok && (s.EndAt == nil || occ.At.Before(*s.EndAt)) {
			next = &occ.At
		}
		ran := 0
		if skip == "" && !started.Existing {
			ran = 1
		}
		if _, err := tx.Exec(ctx, c.q.advance, s.ID, next, fireAt, ran); err != nil {
			return fmt.Errorf("schedule %s: advance: %w", s.ID, err)
		}
		if next != nil {
			if err := c.seedSlotTx(ctx, tx, fireArgs{FireAt: next.UTC(), ScheduleID: s.ID, CatchUp: catchUp}); err != nil {
				return err
			}
		}
		if skip != "" {
			c.logger.InfoContext(ctx, "tributary: Skipped schedule slot", slog.String("schedule_id", s.ID.String()),
				slog.Time("fire_at", fireAt), slog.String("reason", skip))
		}
		return complete(ctx, tx, job)
	})
}

func complete(ctx context.Context, tx pgx.Tx, job *river.Job[fireArgs]) error {
	_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
	return err
}

// slotMetadata explains a slot in its run's metadata, so the ledger explains
// itself: the nominal wall time in the schedule's zone, the zone, and the
// note when the DST rule moved or merged the slot.
func slotMetadata(spec *Spec, fireAt time.Time) map[string]any {
	meta := map[string]any{"schedule_zone": spec.Zone(), "schedule_fire_at": fireAt.In(spec.Location()).Format(time.RFC3339)}
	if occ, ok := spec.Next(fireAt.Add(-time.Second)); ok && occ.At.Equal(fireAt) {
		meta["schedule_nominal"] = occ.Nominal
		if occ.Note != "" {
			meta["schedule_dst_note"] = occ.Note
		}
	}
	return meta
}

// latestDue reports whether fireAt is the most recent slot at or before now.
func latestDue(spec *Spec, fireAt, now time.Time) bool {
	occ, ok := spec.Next(fireAt)
	return !ok || occ.At.After(now)
}

// latestSlot is the most recent slot after from and at or before now. It
// searches windows that grow from a minute to ten years back from now, so
// that a frequent schedule after a long outage costs a few steps, not one
// per missed slot.
func latestSlot(spec *Spec, from, now time.Time) (time.Time, bool) {
	for span := time.Minute; span <= 10*366*24*time.Hour; span *= 8 {
		start := now.Add(-span)
		if start.Before(from) {
			start = from
		}
		var (
			latest time.Time
			found  bool
		)
		for at := start; ; {
			occ, ok := spec.Next(at)
			if !ok || occ.At.After(now) {
				break
			}
			latest, found, at = occ.At, true, occ.At
		}
		if found || !start.After(from) {
			return latest, found
		}
	}
	return time.Time{}, false
}

// checkGrant checks the schedule's execution grant at fire time: the skip
// reason when it does not allow the run (GRANT_NOT_SESSION), else "" with
// the grant's subject added to the run's metadata.
func (c *Client) checkGrant(ctx context.Context, tx pgx.Tx, s *Schedule, now time.Time, meta map[string]any) (string, error) {
	if s.GrantID == nil {
		return "", nil
	}
	g, err := scanGrant(tx.QueryRow(ctx, c.q.grantGet, *s.GrantID))
	if errors.Is(err, ErrGrantNotFound) {
		return SkipReasonGrantRevoked, nil
	}
	if err != nil {
		return "", err
	}
	if reason := g.check(s.Workflow, now); reason != "" {
		return reason, nil
	}
	meta["grant_subject"] = g.Subject
	meta["grant_id"] = g.ID.String()
	return "", nil
}

// slotDecision is what firing a slot decides about time, before grants and
// overlap: whether the slot was missed, and where the chain goes next.
type slotDecision struct {
	// missed: the slot is found later than the catch-up window and is
	// recorded as skipped.
	missed bool
	// after: the next slot is the first one after this.
	after time.Time
	// nextIsCatchUp: the next slot is the one the "latest" policy jumped
	// to; it runs however late.
	nextIsCatchUp bool
}

// decideSlot applies the catch-up rules to a slot due at fireAt and found
// at now. caughtUp marks a slot the latest policy jumped to. A missed slot
// moves the chain to the next future slot (downtime never mass-fires), or,
// under CatchUpLatest, to the most recent missed slot; otherwise the chain
// goes slot by slot, so a catch-up window fires each slot it covers once,
// oldest first. Firing and Simulate share it.
func decideSlot(spec *Spec, window time.Duration, policy CatchUpPolicy, fireAt, now time.Time, caughtUp bool) slotDecision {
	d := slotDecision{after: fireAt}
	if caughtUp {
		d.after = now // the chain goes on from now, not from the slot caught up
	}
	late := now.Sub(fireAt) > window
	if !late || caughtUp || (policy == CatchUpLatest && latestDue(spec, fireAt, now)) {
		return d
	}
	d.missed, d.after = true, now
	if policy == CatchUpLatest {
		if latest, ok := latestSlot(spec, fireAt, now); ok && latest.After(fireAt) {
			d.after, d.nextIsCatchUp = latest.Add(-time.Second), true
		}
	}
	return d
}
