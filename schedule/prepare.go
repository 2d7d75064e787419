package schedule

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/wfruntime"
)

// Prepared slots.
//
// A schedule's next slot is prepared ahead of its time: its run's row and
// its River job are inserted when the schedule is created, updated or
// resumed (in that transaction, for a slot due within prepareOnChange),
// and, for the slot after one that fired, by a job a little after the
// firing (prepareArgs), once its burst has been started. The job
// waits in River's pending state, which River never moves by itself
// (engine/slot_prepared.go). At the slot, the firing pass decides the slot
// exactly as it decides any, at its time (pause, end, catch-up window,
// grant, overlap policy, calendars): when the decision is the prepared run,
// it only makes that job available, and River's fetch starts it; when it
// is anything else (a skip, a run held by overlap queue), the prepared run
// is dropped in the same transaction and the slot recorded as if it had
// never been prepared. Update, Pause, Resume and Delete drop the prepared
// slot in their transaction (Update and Resume prepare the new one).
//
// So what a slot does is decided at its time, as before; what moves ahead
// is the writing of the run and its job, which in a burst of slots due
// together (every user's 08:00) was most of the firing's cost. Listings,
// History and the overview's counts leave a prepared run out; GetRun
// shows it as pending, dated at its slot, and River UI its job as pending,
// scheduled at the slot.
//
// Nothing depends on a slot being prepared: one that is not (the preparing
// transaction failed, the process died before it, or the slot is caught up
// or comes before its preparation could run) is started at its time as
// before. The decision span's trace context, which did not exist when the
// run was prepared, is added to the run as its job is made available. A
// change of the working clients' workflow type defaults made after the
// run was prepared (a run policy that differs from the decision's) drops
// the prepared run, and the slot is started anew with it.

// prepareTx prepares the next slot of each of schedules, within tx: those
// not paused whose next slot is after now (and, when within is above 0,
// before now plus within) and is not a caught-up one, and whose slot would
// start (not skipped by its rule, not refused by its grant now). A slot
// that has its run, prepared or not, is left alone. It returns how many
// slots it prepared.
func (c *Client) prepareTx(ctx context.Context, tx pgx.Tx, within time.Duration, schedules ...*Schedule) (int, error) {
	now := c.now()
	var (
		todo   []*Schedule
		grants []uuid.UUID
	)
	for _, s := range schedules {
		if s == nil || s.Paused || s.NextFireAt == nil || s.nextCatchUp || !s.NextFireAt.After(now) ||
			(within > 0 && s.NextFireAt.After(now.Add(within))) {
			continue
		}
		todo = append(todo, s)
		if s.GrantID != nil {
			grants = append(grants, *s.GrantID)
		}
	}
	if len(todo) == 0 {
		return 0, nil
	}
	if err := c.loadCalendarsTx(ctx, tx, todo...); err != nil {
		return 0, err
	}
	byID := map[uuid.UUID]*Grant{}
	if len(grants) > 0 {
		var err error
		if byID, err = c.grantsByID(ctx, tx, grants); err != nil {
			return 0, err
		}
	}
	starts := make([]*wfruntime.ScheduledStart, 0, len(todo))
	for _, s := range todo {
		spec, err := c.spec(s)
		if err != nil {
			continue // the firing pass says why, at the slot
		}
		fireAt := *s.NextFireAt
		meta, skipped := slotMetadata(spec, fireAt)
		if skipped != "" {
			continue
		}
		if s.GrantID != nil && byID[*s.GrantID].admit(s.Workflow, now, &meta) != "" {
			continue
		}
		starts = append(starts, &wfruntime.ScheduledStart{
			FireAt: fireAt, Input: s.Input, MaxAttempts: s.MaxAttempts, Retry: s.retryJSON, Metadata: meta, Priority: s.Priority,
			Queue: s.Queue, ScheduleID: s.ID, Timeout: s.Timeout, Type: s.Workflow, Tenant: s.RunTenant(), Prepare: true,
		})
	}
	if len(starts) == 0 {
		return 0, nil
	}
	started, err := c.rt.StartScheduledManyTx(ctx, tx, starts)
	if err != nil {
		return 0, fmt.Errorf("schedule: prepare the next slots of %d schedules: %w", len(starts), err)
	}
	n := 0
	for _, st := range started {
		if !st.Existing && st.Skip == "" {
			n++
		}
	}
	return n, nil
}

// preparedTx is s with its calendars loaded, after tryPrepareTx: the end
// of every call that gives a schedule a next slot.
func (c *Client) preparedTx(ctx context.Context, tx pgx.Tx, s *Schedule) (*Schedule, error) {
	if err := c.loadCalendarsTx(ctx, tx, s); err != nil {
		return nil, err
	}
	if err := c.tryPrepareTx(ctx, tx, s); err != nil {
		return nil, err
	}
	return s, nil
}

// tryPrepareTx is prepareTx of the slots due within prepareOnChange, under
// a savepoint of tx: a preparation that fails is rolled back alone and
// logged, and the caller's change (a Create, an Update, a Resume) goes on;
// the slot is started at its time.
func (c *Client) tryPrepareTx(ctx context.Context, tx pgx.Tx, schedules ...*Schedule) error {
	due, horizon := false, c.now().Add(prepareOnChange)
	for _, s := range schedules {
		due = due || (s != nil && s.NextFireAt != nil && s.NextFireAt.Before(horizon))
	}
	if !due {
		return nil
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return fmt.Errorf("schedule: begin a savepoint to prepare next slots: %w", err)
	}
	if _, err := c.prepareTx(ctx, sp, prepareOnChange, schedules...); err != nil {
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			return fmt.Errorf("schedule: roll back the preparing of next slots (%v): %w", err, rbErr)
		}
		if ctx.Err() == nil {
			c.logger.WarnContext(ctx, "tributary: Preparing the next slots failed; they are started at their time instead",
				slog.Int("schedules", len(schedules)), slog.String("err", err.Error()))
		}
		return nil
	}
	return sp.Commit(ctx)
}

// dropPreparedTx drops the prepared slots of the schedules ids, within tx
// (engine.DropPreparedTx).
func (c *Client) dropPreparedTx(ctx context.Context, tx pgx.Tx, ids ...uuid.UUID) error {
	keys := make([][16]byte, len(ids))
	for i, id := range ids {
		keys[i] = id
	}
	if _, err := c.q.DropPreparedTx(ctx, tx, keys); err != nil {
		return fmt.Errorf("schedule: drop the prepared slots of %d schedules: %w", len(ids), err)
	}
	return nil
}

// prepareArgs is the River job that prepares the next slots of the
// schedules a firing batch fired: inserted by the batch's transaction, so
// that no slot's preparation is lost to a crash, and scheduled a little
// later (prepareLaterTx), when the runs that batch started are being worked
// and the inserting does not compete with them.
type prepareArgs struct {
	ScheduleIDs []uuid.UUID `json:"schedule_ids"`
	// WaitUntil is how long the job defers to a backlog of ready jobs
	// (prepareWorker.Work); zero in jobs inserted before it existed.
	WaitUntil time.Time `json:"wait_until,omitzero"`
}

func (prepareArgs) Kind() string { return "tributary:schedule_prepare" }

// prepareWorker works the prepare jobs, each in one transaction that
// prepares those of its schedules that no other transaction holds (SKIP
// LOCKED: one that an Update, a Pause or a firing holds has its slot
// started at its time, as one never prepared).
type prepareWorker struct {
	river.WorkerDefaults[prepareArgs]
	c *Client
}

// Work prepares the slots, unless the database's workers are behind:
// while a River job has waited prepareBacklog or longer for a worker (a
// burst of slots longer than the job's delay: 100,000 slots take 20 s or
// more to start on a small server), the job snoozes prepareRecheck at a
// time, so that its inserts (a run and a job for each slot) do not compete
// with the runs waiting to start, until its WaitUntil, and then prepares
// what it can all the same. A slot not yet prepared when it falls due is
// started at its time, as one never prepared. Jobs of a queue that no
// client works count too: while they wait, every preparation waits its
// two minutes.
func (w *prepareWorker) Work(ctx context.Context, job *river.Job[prepareArgs]) error {
	c := w.c
	if c.now().Before(job.Args.WaitUntil) {
		behind, err := c.q.ReadyBacklog(ctx, c.firePool(), prepareBacklog, c.sqlNow())
		if err != nil {
			return fmt.Errorf("schedule: look for a backlog of ready jobs before preparing the next slots of %d schedules: %w", len(job.Args.ScheduleIDs), err)
		}
		if behind {
			return river.JobSnooze(prepareRecheck)
		}
	}
	var n int
	err := pgx.BeginFunc(ctx, c.firePool(), func(tx pgx.Tx) error {
		locked, err := schedulesOf(c.q.LockSchedulesSkipLockedTx(ctx, tx, job.Args.ScheduleIDs))
		if err != nil {
			return fmt.Errorf("schedule: lock %d schedules to prepare their next slots: %w", len(job.Args.ScheduleIDs), err)
		}
		n, err = c.prepareTx(ctx, tx, 0, locked...)
		return err
	})
	if err != nil {
		return err
	}
	// River UI shows it with the job.
	_ = river.RecordOutput(ctx, map[string]int{"schedules": len(job.Args.ScheduleIDs), "prepared": n})
	return nil
}

// prepareLaterTx inserts, within tx, the job that prepares the next slots
// of the schedules ids, which a firing batch fired by now, found due at
// foundAt: it runs prepareDelayMin after now, and twice as long again as
// the pass has been firing, so that a long burst's preparation waits for
// its runs (at most prepareDelayMax), and then waits out a backlog of
// ready jobs until prepareDelayMax after now (prepareArgs.WaitUntil).
func (c *Client) prepareLaterTx(ctx context.Context, tx pgx.Tx, ids []uuid.UUID, foundAt, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	delay := min(prepareDelayMin+2*max(now.Sub(foundAt), 0), prepareDelayMax)
	args := prepareArgs{ScheduleIDs: ids, WaitUntil: now.Add(prepareDelayMax)}
	_, err := c.wf.River().InsertTx(ctx, tx, args, &river.InsertOpts{Queue: Queue, Priority: 2, ScheduledAt: now.Add(delay)})
	if err != nil {
		return fmt.Errorf("schedule: insert the job that prepares the next slots of %d schedules: %w", len(ids), err)
	}
	return nil
}

// prepareOnChange bounds the slots that a Create, an Update or a Resume
// prepares: those due within it. Preparing a slot writes its run and its
// job, which made CreateMany 3.6 times slower (11,000 schedules a second
// against 40,000); a slot further ahead is started at its time, and the
// slots after it are prepared after each firing.
const prepareOnChange = time.Hour

// prepareDelayMin and prepareDelayMax bound the delay of prepareLaterTx.
// A burst of 10,000 slots takes about 2 s to start on a small server (100,000
// about 20 s), and its next slots' preparation is to come after it. A
// schedule whose slots come more often than that (every 10 s or more
// often) has the slot that is next when the job runs prepared, one or more
// after the slot that fired, and the slots in between started at their
// time. That costs one job per firing batch (up to a batch's schedules),
// so a burst of frequent slots due together still has its later slots
// prepared; a lone every-second schedule pays a job a slot, as its firing
// does already. (Leaving such schedules unprepared was tried and not
// kept: it saved the lone schedule's job and cost every frequent burst its
// preparation.)
const (
	prepareDelayMin = 10 * time.Second
	prepareDelayMax = 2 * time.Minute
)

// prepareBacklog and prepareRecheck are how a prepare job defers to a
// backlog (prepareWorker.Work): a ready job that has waited prepareBacklog
// for a worker is one, and the job looks again prepareRecheck later (a
// look costs about 1 ms). In a burst of 100,000 slots the preparation ran
// from 10 s after the slot, while the runs were still starting, and its
// inserts took about 4 s of the database's time then; deferring it brought
// the p99 lag from 1.41 times River's periodic jobs' to 1.33 (medians of
// four alternating pairs, docs/benchmarks.md).
const (
	prepareBacklog = time.Second
	prepareRecheck = 5 * time.Second
)

// repairPassedOver repairs the prepared slots whose job is still pending
// reconcileGrace after their time though their schedule has moved on
// (engine.PassedOverTx): a client of a version before prepared slots fired
// the slot, took the prepared run for its run, and advanced (in a rolling
// deploy, say). The run of a live schedule that moved past its slot is
// started now, late, as that client took it as started; the run of a
// paused or deleted schedule is dropped, as this version's Pause and
// Delete drop it. Both are logged as warnings: an operator sees that a
// slot ran late, or did not run, and why.
func (c *Client) repairPassedOver(ctx context.Context, now time.Time) error {
	var (
		started []int64
		dropped int
	)
	err := pgx.BeginFunc(ctx, c.rt.Pool(), func(tx pgx.Tx) error {
		found, err := c.q.PassedOverTx(ctx, tx, now.Add(-reconcileGrace))
		if err != nil || len(found) == 0 {
			return err
		}
		var (
			promote []int64
			drop    []uuid.UUID
		)
		for _, p := range found {
			if p.Started {
				promote = append(promote, p.JobID)
			} else {
				drop = append(drop, p.RunID)
			}
		}
		if len(promote) > 0 {
			if started, err = c.q.PromotePreparedTx(ctx, tx, promote, nil); err != nil {
				return err
			}
		}
		if len(drop) > 0 {
			dropped, err = c.q.DropPreparedRunsTx(ctx, tx, drop)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("schedule: repair the prepared slots passed over: %w", err)
	}
	if len(started) > 0 || dropped > 0 {
		c.logger.WarnContext(ctx, "tributary: Prepared schedule slots were passed over by a client of an earlier Tributary version; started late those it took as started, dropped those of paused or deleted schedules",
			slog.Int("started", len(started)), slog.Int("dropped", dropped))
	}
	return nil
}
