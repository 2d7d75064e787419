package tributarytest

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/wfruntime"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// Config configures an Env. The zero Config is a working client with no
// workflow types, its clock at the real time New was called, to the
// second.
type Config struct {
	// Workflows are the workflow types the Env's client works.
	Workflows []workflow.Registrable

	// Start is where the virtual clock starts. Defaults to the time New
	// is called, truncated to the second.
	Start time.Time

	// Workers is how many workers the default queue has; defaults to 10.
	Workers int

	// Logger receives the clients' logs; defaults to the test's log, at
	// warning level and above.
	Logger *slog.Logger

	// CompletedRunRetention and FailedRunRetention are
	// workflow.Config's. Unlike in production, they default to keeping
	// every finished run (0 here is -1 there): the retention job runs on
	// River's leader, whose election takes real time, so under a virtual
	// clock that skips days a test's runs would be deleted or not
	// depending on how fast the machine elected it. Set them to test
	// retention itself.
	CompletedRunRetention time.Duration
	FailedRunRetention    time.Duration
}

// Env is a test's Tributary: a schema of its own on a real Postgres, a
// working workflow client and its schedule client, under a virtual clock.
// It is stopped, and its schema dropped, when the test ends.
type Env struct {
	// Clock is the virtual clock every time Tributary decides or records
	// comes from (workflow.Config.Clock), River's included.
	Clock *Clock

	// Workflows is the working workflow client: start runs, signal, cancel
	// and retry them with it, as in production.
	Workflows *workflow.Client

	// Schedules is the schedule client bound to Workflows.
	Schedules *schedule.Client

	// Pool is the pool on the Env's schema (its search_path selects it).
	Pool *pgxpool.Pool

	// Schema is the Env's Postgres schema.
	Schema string

	t    testing.TB
	jobs *engine.Jobs
}

// New starts an Env for t; config may be nil. It fails t when the
// database cannot be reached or the clients cannot start.
func New(t testing.TB, config *Config) *Env {
	t.Helper()
	if config == nil {
		config = &Config{}
	}
	start := config.Start
	if start.IsZero() {
		start = time.Now().Truncate(time.Second)
	}
	logger := config.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	workers := config.Workers
	if workers <= 0 {
		workers = 10
	}

	db := testdb.New(t)
	clock := NewClock(start.UTC())
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Clock:  clock.Now,
		Logger: logger,
		River: &river.Config{
			Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
			FetchPollInterval: 100 * time.Millisecond,
			Test:              river.TestConfig{Time: riverTime{clock}},
			TestOnly:          true,
		},
		Schema:                db.Schema,
		Workflows:             config.Workflows,
		CompletedRunRetention: keepByDefault(config.CompletedRunRetention),
		FailedRunRetention:    keepByDefault(config.FailedRunRetention),
	})
	if err != nil {
		t.Fatalf("tributarytest: %v", err)
	}
	sc, err := schedule.New(wf, &schedule.Config{Logger: logger})
	if err != nil {
		t.Fatalf("tributarytest: %v", err)
	}
	if err := wf.Start(context.Background()); err != nil {
		t.Fatalf("tributarytest: start the workflow client: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := wf.Stop(ctx); err != nil {
			t.Errorf("tributarytest: stop the workflow client: %v", err)
		}
	})
	return &Env{
		Clock:     clock,
		Workflows: wf,
		Schedules: sc,
		Pool:      db.Pool,
		Schema:    db.Schema,
		t:         t,
		jobs:      engine.NewJobs(wfruntime.Of(wf).Queries()),
	}
}

// Main runs a package's tests, for its TestMain, and stops the throw-away
// Postgres cluster if the tests started one.
//
//	func TestMain(m *testing.M) { tributarytest.Main(m) }
func Main(m *testing.M) { testdb.MainWithout(m) }

// Context is a context for the Env's calls: the test's, bounded by
// waitLimit.
func (e *Env) Context() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	e.t.Cleanup(cancel)
	return ctx
}

// Now is the virtual clock's time.
func (e *Env) Now() time.Time { return e.Clock.Now() }

// waitLimit bounds how long (wall time) the Env waits for work to settle.
const waitLimit = 30 * time.Second

// Advance moves the clock d ahead (AdvanceTo).
func (e *Env) Advance(d time.Duration) {
	e.t.Helper()
	e.AdvanceTo(e.Now().Add(d))
}

// AdvanceTo moves the clock to t through every wake-up on the way, in
// order: it waits until nothing is left to do at the clock's time (no
// River job of the Env available or running), moves the clock to the
// earliest job scheduled at or before t (a sleep's end, a signal's
// timeout, a schedule's slot, a retry), makes the jobs due then
// available, and so on; then it moves the clock to t and waits until that
// instant's work is done. Each wake-up thus happens at its own time, as in
// production, and everything it records bears that time. A t before the
// clock's time only waits for the work at hand.
func (e *Env) AdvanceTo(t time.Time) {
	e.t.Helper()
	ctx := e.Context()
	for {
		next, err := e.settle(ctx)
		if err != nil {
			e.t.Fatalf("tributarytest: advance the clock to %s: %v", t.Format(time.RFC3339), err)
		}
		if next == nil || next.After(t) {
			break
		}
		if err := e.wakeAt(ctx, *next); err != nil {
			e.t.Fatalf("tributarytest: advance the clock to %s: %v", next.Format(time.RFC3339), err)
		}
	}
	if err := e.wakeAt(ctx, t); err != nil {
		e.t.Fatalf("tributarytest: advance the clock to %s: %v", t.Format(time.RFC3339), err)
	}
	if _, err := e.settle(ctx); err != nil {
		e.t.Fatalf("tributarytest: advance the clock to %s: %v", t.Format(time.RFC3339), err)
	}
}

// Result waits for h's run to finish and returns its outcome, as
// h.Result does, skipping time: whenever nothing is left to do but wait,
// it moves the clock to the next wake-up (AdvanceTo's steps). It fails the
// test when the run waits for something no clock brings (a signal with no
// timeout, a run held by its tenant's limit) and nothing else is
// scheduled.
func Result[Out any](e *Env, h *workflow.Handle[Out]) (Out, error) {
	e.t.Helper()
	ctx := e.Context()
	for {
		run, err := h.Get(ctx)
		if err != nil {
			var zero Out
			return zero, err
		}
		if run.Status.Finished() {
			return h.Result(ctx)
		}
		next, err := e.settle(ctx)
		if err != nil {
			e.t.Fatalf("tributarytest: wait for run %s: %v", h.ID, err)
		}
		if run, err = h.Get(ctx); err == nil && run.Status.Finished() {
			return h.Result(ctx)
		}
		if next == nil {
			e.t.Fatalf("tributarytest: run %s is %s and nothing is scheduled to wake it; send the signal it waits for (env.Workflows.Signal) or check what holds it (env.Workflows.GetRun)", h.ID, run.Status)
		}
		if err := e.wakeAt(ctx, *next); err != nil {
			e.t.Fatalf("tributarytest: wait for run %s: %v", h.ID, err)
		}
	}
}

// settle waits until no River job of the Env is available or running, and
// returns the earliest time a job is scheduled for (nil for none).
func (e *Env) settle(ctx context.Context) (*time.Time, error) {
	riverClient := e.Workflows.River()
	busy := river.NewJobListParams().States(rivertype.JobStateAvailable, rivertype.JobStateRunning).First(1)
	for delay := time.Millisecond; ; delay = min(2*delay, 20*time.Millisecond) {
		res, err := riverClient.JobList(ctx, busy)
		if err != nil {
			return nil, fmt.Errorf("list the jobs at work: %w", err)
		}
		if len(res.Jobs) == 0 {
			break
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			job := res.Jobs[0]
			return nil, fmt.Errorf("the work at %s did not settle within %s: job %d (%s) is %s", e.Now().Format(time.RFC3339), waitLimit, job.ID, job.Kind, job.State)
		}
	}
	next, err := riverClient.JobList(ctx, river.NewJobListParams().
		States(rivertype.JobStateScheduled, rivertype.JobStateRetryable).
		OrderBy(river.JobListOrderByScheduledAt, river.SortOrderAsc).First(1))
	if err != nil {
		return nil, fmt.Errorf("list the scheduled jobs: %w", err)
	}
	if len(next.Jobs) == 0 {
		return nil, nil
	}
	at := next.Jobs[0].ScheduledAt
	return &at, nil
}

// wakeAt moves the clock to at (never back) and makes the jobs due by then
// available, as River's scheduler would, and tells their queues' producers.
func (e *Env) wakeAt(ctx context.Context, at time.Time) error {
	e.Clock.set(at)
	return pgx.BeginFunc(ctx, e.Pool, func(tx pgx.Tx) error {
		_, err := e.jobs.ScheduleDueTx(ctx, tx, e.Now())
		return err
	})
}

// testWriter writes the clients' logs to the test's log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// keepByDefault is a retention for workflow.Config: d, or -1 (keep every
// run) for 0.
func keepByDefault(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
