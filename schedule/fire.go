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
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/wfruntime"
)

// fireArgs is the River job that wakes the schedules due at one instant: at
// FireAt it fires every schedule whose next slot is due by then (or by the
// time it runs, if later), in batches, oldest slot first. There is one such
// job per instant that some schedule's next slot falls on, not one per
// slot: ten thousand schedules due at 08:00 share one.
//
// Jobs of the previous design (one per slot, with schedule_id and catch_up
// in their args) decode into it too and fire what is due like any other.
type fireArgs struct {
	FireAt time.Time `json:"fire_at"`
}

func (fireArgs) Kind() string { return "tributary:schedule_fire" }

// Queue is the River queue of the schedule machinery's own jobs (the
// instants' fire jobs and the reconciler). A working client with schedules
// works it with QueueWorkers workers besides its own queues, so that slots
// fire on time however busy the application's workers are, and firing takes
// at most that many of the pool's connections.
const Queue = wfruntime.ScheduleQueue

// QueueWorkers is how many workers a working client gives Queue.
const QueueWorkers = 2

// firePool is the pool the firing passes use: on a working client, a pool
// of QueueWorkers connections of their own (wfruntime.Binding.Conns), one per
// pass that can hold a connection at once (Client.firing).
//
// Why not the application's pool: a batch of slot starts is the largest
// message the client sends (fireBatchSize runs' inputs and metadata), and a
// pgx connection keeps the buffers and arguments of its recent statements
// until it has served more. Spread over the application's pool, every
// connection came to hold a batch's worth, one after the other, over
// hours: the client's heap grew, by steps, for as long as its connections
// lived (`tributary bench soak`). On connections of their own the passes'
// buffers are the same few, reached at the first burst. Its reads keep
// nothing of the pool once done (engine.Pool).
func (c *Client) firePool() engine.Pool { return engine.Pool{Pool: c.rt.BindingPool(bindingName)} }

// bindingName names the schedule client's binding to its workflow client.
const bindingName = "schedule"

// fireBatchSize bounds the slots one firing transaction fires: each batch
// commits, and its runs start, while the next is being fired. The first
// batch of a pass is smaller, so that the first runs start sooner.
const (
	fireBatchSize      = 1000
	fireFirstBatchSize = 100
)

// seedTx makes sure a fire job exists for each instant in at, within tx:
// one is inserted for an instant that has none scheduled yet, and timed to
// the instant (River's scheduler alone would be up to five seconds late):
// by this client if it works, else by those that do, told when tx commits.
//
// The check is a plain read, so two transactions seeding the same new
// instant at once may both insert a job; the second finds nothing due and
// costs a query. (A River unique job would serialize every transaction that
// seeds an instant on the first one's commit, a user's long transaction
// included.)
func (c *Client) seedTx(ctx context.Context, tx pgx.Tx, at ...time.Time) error {
	instants := make([]time.Time, 0, len(at))
	for _, t := range at {
		instants = append(instants, t.UTC().Truncate(time.Microsecond))
	}
	slices.SortFunc(instants, time.Time.Compare)
	instants = slices.CompactFunc(instants, time.Time.Equal)
	if len(instants) == 0 {
		return nil
	}
	have, err := c.q.FireJobsAt(ctx, tx, fireArgs{}.Kind(), Queue, instants)
	if err != nil {
		return fmt.Errorf("schedule: find the fire jobs of %d instants: %w", len(instants), err)
	}
	var params []river.InsertManyParams
	for _, t := range instants {
		if !slices.ContainsFunc(have, t.Equal) {
			params = append(params, river.InsertManyParams{
				Args:       fireArgs{FireAt: t},
				InsertOpts: &river.InsertOpts{Queue: Queue, Priority: 1, ScheduledAt: t},
			})
		}
	}
	if len(params) == 0 {
		return nil
	}
	results, err := c.wf.River().InsertManyTx(ctx, tx, params)
	if err != nil {
		return fmt.Errorf("schedule: insert the fire jobs of %d instants: %w", len(params), err)
	}
	for _, res := range results {
		if err := c.rt.WakeAtTx(ctx, tx, &wfruntime.Wake{At: res.Job.ScheduledAt, JobID: res.Job.ID, Queue: res.Job.Queue}); err != nil {
			return err
		}
	}
	return nil
}

// fireWorker works the instants' fire jobs: one firing pass each.
type fireWorker struct {
	river.WorkerDefaults[fireArgs]
	c *Client
}

// Timeout lets a pass fire a big burst: at the few thousand slots a second
// a small server fires, River's default minute would cut a pass of a few
// hundred thousand slots short (nothing is lost then: the batches that
// committed stay, and the retried job or the reconciler fires the rest).
func (w *fireWorker) Timeout(*river.Job[fireArgs]) time.Duration { return fireTimeout }

// fireTimeout bounds one firing pass.
const fireTimeout = 10 * time.Minute

// NextRetry retries a failed pass soon. Its slots are due now, and River's
// default backoff (1 s, 16 s, 81 s, …) would leave every schedule silent
// for minutes after a failover that failed two passes in a row. The delay
// doubles from fireRetryFirst up to fireRetryMax. When the job's attempts
// (River's default 25, about two minutes at this pace) run out, River
// discards it, visibly in River UI, and the reconciler fires the slots it
// left overdue.
func (w *fireWorker) NextRetry(job *river.Job[fireArgs]) time.Time {
	return w.c.now().Add(fireRetryDelay(job.Attempt))
}

// fireRetryDelay is the wait before a fire job's next attempt, after its
// attempt-th failed.
func fireRetryDelay(attempt int) time.Duration {
	d := fireRetryFirst
	for i := 1; i < attempt && d < fireRetryMax; i++ {
		d *= 2
	}
	return min(d, fireRetryMax)
}

// fireRetryFirst and fireRetryMax bound the waits between a failed pass's
// attempts.
const (
	fireRetryFirst = 250 * time.Millisecond
	fireRetryMax   = 5 * time.Second
)

// fireEarlyWait is the longest a fire job worked before its instant waits
// for it in place; longer, it is snoozed until then.
const fireEarlyWait = 5 * time.Second

func (w *fireWorker) Work(ctx context.Context, job *river.Job[fireArgs]) error {
	c := w.c
	// No slot fires before its time by the database's clock: a job woken
	// a little early (a timer whose clock offset was off by a few
	// milliseconds) waits; one far too early goes back to River.
	if wait := c.rt.Until(job.Args.FireAt); wait > fireEarlyWait {
		return river.JobSnooze(wait)
	} else if wait > 0 {
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		}
	}
	found := c.now()
	stats, err := c.firePass(ctx, &pass{bound: job.Args.FireAt, foundAt: found})
	c.metrics.record(ctx, stats)
	if stats.Slots() > 0 {
		// River UI shows it with the job: what this instant fired.
		_ = river.RecordOutput(ctx, stats)
	}
	return err
}

// pass is one firing pass: it fires every schedule due by bound or by its
// clock, whichever is later, re-read before each batch.
type pass struct {
	// bound is the instant the pass was started for: schedules due by it
	// fire even when the client's clock is earlier (an injected clock).
	bound time.Time
	// foundAt is when the pass found the slots due by then: a slot's
	// lateness, which its catch-up window is held against, is foundAt minus
	// its time (0 for a slot that comes due during the pass).
	foundAt time.Time
	// excluded are schedules this pass gave up on (see firePass).
	excluded []uuid.UUID
}

// firePass fires every schedule due by p's bound (or by now, if later), in
// batches of at most fireBatchSize slots, each one transaction that starts
// its slots' runs (or records them as skipped), advances the schedules and
// seeds their next instants' fire jobs (PRODUCER_ENQUEUES_NEXT,
// TRANSACTIONAL_EDGES). Schedules are claimed with SKIP LOCKED, so passes
// running at once on several clients split the work, and a slot fires at
// most once (SLOT_IS_UNIQUE). A batch that fails is fired again one
// schedule per transaction, so that one bad schedule never holds up the
// others; a schedule that cannot be fired even alone has its slot recorded
// as skipped with the error, and the chain goes on.
func (c *Client) firePass(ctx context.Context, p *pass) (*passStats, error) {
	c.firing <- struct{}{} // at most QueueWorkers passes hold a connection at once
	defer func() { <-c.firing }()

	total := &passStats{}
	size := fireFirstBatchSize
	var (
		lockedSince time.Time // when the claims began to find only locked schedules
		lockedDelay time.Duration
	)
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		now := c.now()
		bound := later(now, p.bound)
		var claimed []*Schedule
		stats := &passStats{}
		var deferred []uuid.UUID
		err := pgx.BeginFunc(ctx, c.firePool(), func(tx pgx.Tx) error {
			var err error
			if claimed, err = schedulesOf(c.q.ClaimDueTx(ctx, tx, bound, size, p.excluded)); err != nil {
				return fmt.Errorf("claim due schedules: %w", err)
			}
			if len(claimed) == 0 {
				return nil
			}
			deferred, err = c.fireBatchTx(ctx, tx, claimed, p.foundAt, now, stats)
			return err
		})
		if len(claimed) == 0 && err == nil {
			// SKIP LOCKED passes over a due schedule that another
			// transaction holds: another pass firing it (soon not due any
			// more), or a run's status trigger, an Update or a Pause, which
			// commit in moments. Nothing else would fire it before the
			// reconciler, so look again until none is due.
			wait, err := c.dueButLocked(ctx, p, bound, &lockedSince, &lockedDelay)
			if err != nil || !wait {
				return total, err
			}
			continue
		}
		lockedSince = time.Time{}
		size = fireBatchSize
		if err != nil {
			if ctx.Err() != nil {
				return total, ctx.Err()
			}
			c.logger.WarnContext(ctx, "tributary: Firing a batch of schedule slots failed; firing them one by one",
				slog.Int("schedules", len(claimed)), slog.String("err", err.Error()))
			for _, s := range claimed {
				total.add(c.fireAlone(ctx, p, s.ID, now))
			}
			continue
		}
		stats.Batches = 1
		c.logSlots(ctx, stats.logs)
		total.add(stats)
		for _, id := range deferred {
			total.add(c.fireAlone(ctx, p, id, now))
		}
	}
}

// dueButLocked reports whether a schedule due by bound (other than those p
// gave up on) is still there after a claim found none free, after waiting a
// little: 2 ms, then twice as long each time up to 50 ms. After
// fireLockedWait of finding only locked schedules it gives up with a
// warning; the next pass or the reconciler fires them.
func (c *Client) dueButLocked(ctx context.Context, p *pass, bound time.Time, since *time.Time, delay *time.Duration) (bool, error) {
	due, err := c.q.AnyDue(ctx, c.firePool(), bound, p.excluded)
	if err != nil {
		return false, fmt.Errorf("look for due schedules held by other transactions: %w", err)
	}
	if !due {
		return false, nil
	}
	if since.IsZero() {
		*since, *delay = time.Now(), 2*time.Millisecond
	} else if time.Since(*since) > fireLockedWait {
		c.logger.WarnContext(ctx, "tributary: Due schedules stayed locked by other transactions; the next firing pass or the reconciler fires them",
			slog.Time("due_by", bound), slog.Duration("waited", time.Since(*since)))
		return false, nil
	}
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-time.After(*delay):
	}
	*delay = min(2**delay, 50*time.Millisecond)
	return true, nil
}

// fireLockedWait bounds how long a firing pass waits for due schedules that
// other transactions hold.
const fireLockedWait = 5 * time.Second

// fireBatchTx fires the due slot of each claimed schedule, within tx, in a
// fixed number of statements: it decides each slot (catch-up window, grant,
// overlap policy), starts or records the runs (one StartScheduledManyTx),
// advances the schedules (one UPDATE) and seeds the next instants' fire
// jobs. It returns the schedules it left to fireAlone: under overlap
// replace, those whose unfinished runs another transaction holds.
func (c *Client) fireBatchTx(ctx context.Context, tx pgx.Tx, claimed []*Schedule, foundAt, now time.Time, stats *passStats) ([]uuid.UUID, error) {
	if err := c.loadCalendarsTx(ctx, tx, claimed...); err != nil {
		return nil, err
	}
	slots := c.decideSlots(claimed, foundAt, now)

	if err := c.checkGrants(ctx, tx, slots, now, stats); err != nil {
		return nil, err
	}
	deferred, err := c.applyOverlap(ctx, tx, slots, now)
	if err != nil {
		return nil, err
	}
	if len(deferred) > 0 {
		slots = slices.DeleteFunc(slots, func(sl *slot) bool { return slices.Contains(deferred, sl.s.ID) })
	}

	// One span per slot decision, ended with the batch's statement: a
	// slot's run carries its span's context (see Config.TracerProvider).
	spans := make([]trace.Span, len(slots))
	ended := false
	defer func() {
		if !ended { // the batch failed: fireAlone fires its slots again
			for _, span := range spans {
				span.SetStatus(codes.Error, "the batch failed; its slots are fired again one by one")
				span.End()
			}
		}
	}()
	for i, sl := range slots {
		spans[i] = c.slotSpan(ctx, sl)
	}

	starts := make([]*wfruntime.ScheduledStart, len(slots))
	for i, sl := range slots {
		s := sl.s
		starts[i] = &wfruntime.ScheduledStart{
			FireAt: sl.fireAt, Input: s.Input, MaxAttempts: s.MaxAttempts, Retry: s.retryJSON, Metadata: sl.meta, Priority: s.Priority,
			Queue: s.Queue, ScheduleID: s.ID, Skip: sl.skip, StartAt: sl.startAt, Timeout: s.Timeout, Type: s.Workflow,
			Tenant: s.RunTenant(),
		}
	}
	started, err := c.rt.StartScheduledManyTx(ctx, tx, starts)
	if err != nil {
		return nil, err
	}

	adv := &engine.AdvanceParams{Now: c.sqlNow()}
	var (
		instants []time.Time
		prepare  []uuid.UUID // the schedules whose next slot is to be prepared
	)
	logFired := c.logger.Enabled(ctx, slog.LevelInfo)
	for i, sl := range slots {
		ran := 0
		st := started[i]
		switch {
		case st.Existing:
		case st.Skip != "":
			stats.skip(skipKind(st.Skip), 1)
			stats.logs = append(stats.logs, slotLog{scheduleID: sl.s.ID, fireAt: sl.fireAt, runID: st.RunID, skip: st.Skip})
		default:
			ran = 1
			stats.Started++
			if st.Promoted {
				stats.Prepared++
			}
			stats.delays = append(stats.delays, now.Sub(sl.fireAt))
			if logFired {
				stats.logs = append(stats.logs, slotLog{scheduleID: sl.s.ID, fireAt: sl.fireAt, runID: st.RunID})
			}
		}
		decideSlotSpan(spans[i], st)
		advance(adv, sl, ran)
		if sl.next != nil && sl.next.After(later(now, sl.fireAt)) {
			instants = append(instants, *sl.next)
			if !sl.d.nextIsCatchUp {
				prepare = append(prepare, sl.s.ID)
			}
		}
	}
	if err := c.q.AdvanceSchedulesTx(ctx, tx, adv); err != nil {
		return nil, fmt.Errorf("advance %d schedules: %w", len(slots), err)
	}
	// A next slot already due is fired by this pass's next batch; later
	// ones need their instant's job.
	if err := c.seedTx(ctx, tx, instants...); err != nil {
		return nil, err
	}
	if err := c.prepareLaterTx(ctx, tx, prepare, foundAt, now); err != nil {
		return nil, err
	}
	ended = true
	for _, span := range spans {
		span.End()
	}
	return deferred, nil
}
