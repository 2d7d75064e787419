package wfruntime

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivertype"

	"github.com/tributary-go/tributary/internal/engine"
)

// wakerHorizon bounds the wake-ups a client times itself. River's scheduler
// makes a scheduled job available within about five seconds of its time; for
// wake-ups that are near, a started working client sets a timer and makes
// the job available at the exact time, so a one-second sleep takes one
// second, not six. A client that is not working (the CLI creating a
// schedule, a web app starting a run for later) announces the wake-up to
// the working clients instead (engine.Queries.AnnounceWakeTx). Further wake-ups are left
// to River alone (five seconds late at most is small next to a long sleep,
// and a timer per far wake-up would add up). If the client stops or dies
// first, River's scheduler still wakes the run.
const wakerHorizon = 10 * time.Minute

// Waker holds a workflow client's pending wake-up timers, and, in a
// started working client, listens for the wake-ups other clients hand over.
type Waker struct {
	c WakerConfig

	mu      sync.Mutex
	stopCh  chan struct{} // closed by stop
	stopped bool
	timers  map[int64]wakeTimer
	running sync.WaitGroup // wake-ups in progress and the listener

	// repairs collects the runs whose River job ended outside Tributary,
	// as announced by migration 006's triggers, for repairLoop.
	repairs repairQueue

	// listening is closed once the listener started by Start is listening
	// (tests wait for it: an announcement sent before is lost, and River's
	// scheduler wakes that job).
	listening chan struct{}

	// armQueues are the queues whose waiting jobs a started working client
	// times (Start).
	armQueues []string
}

// WakerConfig is what a Waker needs of its workflow client.
type WakerConfig struct {
	Logger  *slog.Logger
	Pool    *pgxpool.Pool
	Queries *engine.Queries
	Jobs    *engine.Jobs
	Schema  string

	// Now is the client's time (workflow.Config.Clock).
	Now func() time.Time
	// RealClock is true when Now is the database's clock as this process
	// reads it, false under an injected workflow.Config.Clock (see times).
	RealClock bool
	// Works is true for a working client: it times wake-ups itself and
	// listens for the ones other clients announce; any other client
	// announces its own.
	Works bool

	// MakeAvailableTx makes a scheduled job available: the one way
	// Tributary wakes a job (workflow's makeAvailableTx).
	MakeAvailableTx func(ctx context.Context, tx pgx.Tx, jobID int64, queue string) error
	// RepairRunsOf repairs the runs ids, whose River job ended outside
	// Tributary (workflow.Client.RepairRuns' rules).
	RepairRunsOf func(ctx context.Context, ids []uuid.UUID) (int, error)
	// IgnoreRepairs, when set and true, drops the announced repairs
	// (tests, leaving them to RepairRuns).
	IgnoreRepairs func() bool
}

// ScheduleTx arranges the wake-up of job jobID, inserted in tx, at wakeAt:
// a started working client times it itself; any other client announces it
// to the working clients, on commit. Far wake-ups are left to River.
func (wk *Waker) ScheduleTx(ctx context.Context, tx pgx.Tx, jobID int64, queue string, wakeAt time.Time) error {
	if !wk.times(wakeAt.Sub(wk.c.Now())) {
		return nil
	}
	wk.mu.Lock()
	local := !wk.stopped && wk.c.Works
	wk.mu.Unlock()
	if local {
		wk.Schedule(jobID, queue, wakeAt)
		return nil
	}
	payload := fmt.Sprintf("%d %s %d", jobID, queue, wakeAt.UnixMilli())
	if err := wk.c.Queries.AnnounceWakeTx(ctx, tx, wk.c.Schema, payload); err != nil {
		return fmt.Errorf("workflow: announce the wake-up of job %d: %w", jobID, err)
	}
	return nil
}

// listen receives the wake-ups other clients announce until Stop.
func (wk *Waker) listen(stopCh <-chan struct{}, listening func()) {
	defer wk.running.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stopCh
		cancel()
	}()
	l := &Listener{
		Logger: wk.c.Logger,
		Pool:   wk.c.Pool,
		What:   "wake-ups (River's scheduler wakes jobs meanwhile)",
		Channel: func(ctx context.Context, conn *pgx.Conn) (string, error) {
			return wk.c.Queries.WakeChannel(ctx, conn, wk.c.Schema)
		},
		Listening: listening,
		Notify: func(payload string) {
			if runID, ok := strings.CutPrefix(payload, "repair "); ok {
				if id, err := uuid.Parse(runID); err == nil && (wk.c.IgnoreRepairs == nil || !wk.c.IgnoreRepairs()) {
					wk.repairs.add(id)
				}
				return
			}
			var (
				jobID int64
				queue string
				at    int64
			)
			if _, err := fmt.Sscanf(payload, "%d %s %d", &jobID, &queue, &at); err == nil {
				wk.Schedule(jobID, queue, time.UnixMilli(at))
			}
		},
	}
	l.Run(ctx)
}

// NewWaker is a stopped Waker of the client that c describes.
func NewWaker(c WakerConfig) *Waker {
	return &Waker{c: c, stopCh: make(chan struct{}), stopped: true, timers: map[int64]wakeTimer{},
		repairs: repairQueue{ids: map[uuid.UUID]struct{}{}, ready: make(chan struct{}, 1)}}
}

// times reports whether the waker times a wake-up due in d by the
// client's clock: one within wakerHorizon. Under an injected workflow.Config.Clock
// only one that is due already (d <= 0): a timer counts real time, which
// such a clock need not follow, and would wake a job before the clock
// reached its time; River's scheduler, which follows the clock, wakes the
// others once it gets there.
func (wk *Waker) times(d time.Duration) bool {
	return d <= wakerHorizon && (d <= 0 || wk.c.RealClock)
}

// Schedule wakes job jobID of queue at wakeAt if the waker times it (see
// times).
func (wk *Waker) Schedule(jobID int64, queue string, wakeAt time.Time) {
	d := wakeAt.Sub(wk.c.Now())
	if !wk.times(d) {
		return
	}
	wk.mu.Lock()
	defer wk.mu.Unlock()
	if wk.stopped {
		return
	}
	if t, ok := wk.timers[jobID]; ok {
		if t.at.Equal(wakeAt) {
			return // armed already (announced twice, or armed at each heartbeat)
		}
		t.timer.Stop()
	}
	wk.timers[jobID] = wakeTimer{at: wakeAt, timer: time.AfterFunc(max(d, 0), func() {
		wk.mu.Lock()
		delete(wk.timers, jobID)
		if wk.stopped {
			wk.mu.Unlock()
			return
		}
		wk.running.Add(1)
		stopCh := wk.stopCh
		wk.mu.Unlock()
		defer wk.running.Done()
		// The job's transaction may not have committed yet (a wake-up due
		// at once): look again, soon and then less often, before leaving it
		// to River.
		delay := wakeFirstRetry
		for deadline := time.Now().Add(wakeRetryWindow); ; delay = min(2*delay, wakeMaxRetryDelay) {
			found, err := wk.wake(jobID, queue)
			if err != nil {
				wk.c.Logger.Warn("tributary: Timed wake-up failed; River's scheduler will wake the job", slog.Int64("job_id", jobID), slog.String("err", err.Error()))
				return
			}
			if found || time.Now().After(deadline) {
				return
			}
			select {
			case <-time.After(delay):
			case <-stopCh:
				return
			}
		}
	})}
}

// wakeTimer is an armed wake-up: its time and its timer.
type wakeTimer struct {
	at    time.Time
	timer *time.Timer
}

// A wake-up of a job not visible yet is tried again after wakeFirstRetry,
// then after twice as long each time up to wakeMaxRetryDelay, for
// wakeRetryWindow: most such jobs are in a transaction about to commit.
const (
	wakeFirstRetry    = 2 * time.Millisecond
	wakeMaxRetryDelay = 100 * time.Millisecond
	wakeRetryWindow   = 2 * time.Second
)

// wake makes job jobID available now if it is still scheduled: a job that
// was woken, worked or cancelled meanwhile is left alone. found is false when
// the job does not exist (yet).
func (wk *Waker) wake(jobID int64, queue string) (found bool, err error) {
	c := wk.c
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = pgx.BeginFunc(ctx, c.Pool, func(tx pgx.Tx) error {
		state, early, ok, err := c.Jobs.LockStateTx(ctx, tx, jobID)
		if err != nil || !ok {
			return err
		}
		found = true
		switch {
		case early && state == rivertype.JobStateScheduled:
			// Its time moved later (a debounced start joined its run):
			// the start that moved it timed the new wake-up, and River's
			// scheduler is the fallback.
			return nil
		case state == rivertype.JobStateScheduled:
		case state == rivertype.JobStateAvailable:
			// River's scheduler moved it ahead of time (it looks five
			// seconds ahead) but producers only fetch it once due and only
			// at their next poll: tell them now.
			return c.Jobs.NotifyQueueTx(ctx, tx, queue)
		default:
			return nil
		}
		return c.MakeAvailableTx(ctx, tx, jobID, queue)
	})
	return found, err
}

// Stop cancels the pending timers (River's scheduler wakes those runs) and
// waits for wake-ups in progress.
func (wk *Waker) Stop() {
	wk.mu.Lock()
	if !wk.stopped {
		close(wk.stopCh)
	}
	wk.stopped = true
	for id, t := range wk.timers {
		t.timer.Stop()
		delete(wk.timers, id)
	}
	wk.mu.Unlock()
	wk.running.Wait()
}

// Start starts timing wake-ups, and, in a working client, listening for
// the ones other clients announce and arming the timers of the near jobs
// waiting in the queues of armQueues: those were timed by clients that may
// be gone, or announced before this one listened (the first slot after a
// start-up would otherwise wait for River's scheduler).
func (wk *Waker) Start(armQueues []string) {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	if !wk.stopped {
		return
	}
	wk.stopCh = make(chan struct{})
	wk.stopped = false
	wk.armQueues = armQueues
	if wk.c.Works {
		listening := make(chan struct{})
		wk.listening = listening
		wk.running.Add(2)
		go wk.listen(wk.stopCh, sync.OnceFunc(func() { close(listening) }))
		go wk.repairLoop(wk.stopCh)
		if len(wk.armQueues) > 0 {
			wk.running.Add(1)
			go func(stopCh <-chan struct{}) {
				defer wk.running.Done()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go func() {
					select {
					case <-stopCh:
						cancel()
					case <-ctx.Done():
					}
				}()
				wk.ArmWaiting(ctx, wakerHorizon)
			}(wk.stopCh)
		}
	}
}

// ArmWaiting arms the timers of the jobs scheduled within lookahead in the
// armQueues given to Start (at most armLimit of them, the nearest), and of
// those already overdue: a started working client does it once over
// wakerHorizon, then at every heartbeat of the worker registry over its
// lookahead, so that every live client times the schedule's next instants,
// whichever client queued them (and a dead client's timers are taken over
// within a beat).
func (wk *Waker) ArmWaiting(ctx context.Context, lookahead time.Duration) {
	wk.mu.Lock()
	armQueues := wk.armQueues
	wk.mu.Unlock()
	if len(armQueues) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	jobs, err := wk.c.Jobs.ScheduledWithin(ctx, wk.c.Pool, armQueues, lookahead, armLimit)
	if err != nil {
		if ctx.Err() == nil {
			wk.c.Logger.Warn("tributary: Could not arm the timers of waiting jobs; River's scheduler wakes them", slog.String("err", err.Error()))
		}
		return
	}
	for _, job := range jobs {
		wk.Schedule(job.ID, job.Queue, job.ScheduledAt)
	}
}

// repairQueue is a set of run ids to repair, and a signal that it is not
// empty; NewWaker makes both.
type repairQueue struct {
	mu    sync.Mutex
	ids   map[uuid.UUID]struct{}
	ready chan struct{} // capacity 1
}

// maxQueuedRepairs bounds the runs waiting for repairLoop: beyond it (an
// operator cancelled a whole queue in River UI), the periodic RepairRuns
// finds the rest.
const maxQueuedRepairs = 10_000

func (q *repairQueue) add(id uuid.UUID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.ids) >= maxQueuedRepairs {
		return
	}
	q.ids[id] = struct{}{}
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *repairQueue) take() ([]uuid.UUID, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	ids := slices.Collect(maps.Keys(q.ids))
	clear(q.ids)
	return ids, q.ready
}

// repairLoop repairs the runs the triggers announce, in batches, until
// Stop: a job cancelled or deleted in River UI reaches its run within
// moments.
func (wk *Waker) repairLoop(stopCh <-chan struct{}) {
	defer wk.running.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stopCh
		cancel()
	}()
	for {
		ids, ready := wk.repairs.take()
		for len(ids) > 0 {
			batch := ids[:min(len(ids), 1000)]
			ids = ids[len(batch):]
			if _, err := wk.c.RepairRunsOf(ctx, batch); err != nil && ctx.Err() == nil {
				wk.c.Logger.Warn("tributary: Could not repair runs whose River job ended outside Tributary; the periodic repair will",
					slog.Int("runs", len(batch)), slog.String("err", err.Error()))
			}
		}
		select {
		case <-ready:
		case <-stopCh:
			return
		}
	}
}

// armLimit bounds the timers ArmWaiting arms.
const armLimit = 10_000

// Timed reports whether a timer is armed for job jobID (tests).
func (wk *Waker) Timed(jobID int64) bool {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	_, ok := wk.timers[jobID]
	return ok
}

// Listening is closed once the listener of a started working client is
// listening (tests: an announcement sent before is lost, and River's
// scheduler wakes that job); nil before Start.
func (wk *Waker) Listening() <-chan struct{} {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	return wk.listening
}
