package tributaryotel_test

// The cost of the middleware on the engine's hot path: the 3-step workflow
// of `tributary bench` (internal/bench.ThreeSteps), run by a client without
// middleware, with the middleware on no-op providers (an application that
// has not set OpenTelemetry up), and with the middleware on the SDK's
// providers (every span recorded, then dropped: no exporter; metrics
// aggregated, never collected). The sub-benchmarks alternate, so that a
// machine busy with something else slows each of them:
//
//	go test -run '^$' -bench Middleware3Steps -benchtime 3000x -count 6 ./tributaryotel/
//
// Each sub-benchmark starts b.N runs before the timer starts, then times a
// client with one queue of 20 workers until River has reported every run's
// job completed, and reports runs/s.

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/tributary-go/tributary/internal/bench"
	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/tributaryotel"
	"github.com/tributary-go/tributary/workflow"
)

func BenchmarkMiddleware3Steps(b *testing.B) {
	b.Run("none", func(b *testing.B) { benchThreeSteps(b, nil) })
	b.Run("noop", func(b *testing.B) {
		benchThreeSteps(b, tributaryotel.NewMiddleware(&tributaryotel.MiddlewareConfig{
			MeterProvider: metricnoop.NewMeterProvider(), TracerProvider: tracenoop.NewTracerProvider(),
		}))
	})
	b.Run("sdk", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() {
			_ = tp.Shutdown(context.Background())
			_ = mp.Shutdown(context.Background())
		})
		benchThreeSteps(b, tributaryotel.NewMiddleware(&tributaryotel.MiddlewareConfig{MeterProvider: mp, TracerProvider: tp}))
	})
}

func benchThreeSteps(b *testing.B, mw workflow.Middleware) {
	db := testdb.New(b)
	ctx := context.Background()
	config, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		b.Fatal(err)
	}
	config.MaxConns = 40
	config.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{db.Schema}.Sanitize()
	pool, err := pgxpool.NewWithConfig(ctx, config)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)

	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	wfConfig := &workflow.Config{
		Logger: discard,
		River: &river.Config{
			FetchCooldown:     2 * time.Millisecond,
			FetchPollInterval: 20 * time.Millisecond,
			Logger:            discard,
			Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}},
		},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{bench.ThreeSteps},
	}
	if mw != nil {
		wfConfig.Middleware = []workflow.Middleware{mw}
	}
	c, err := workflow.NewClient(pool, wfConfig)
	if err != nil {
		b.Fatal(err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for i := range b.N {
			if _, err := bench.ThreeSteps.StartTx(ctx, c, tx, i, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}

	events, cancelSub := c.River().Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	defer cancelSub()
	done := make(chan error, 1)
	go func() {
		n := 0
		for ev := range events {
			if ev.Job.Kind != bench.ThreeSteps.Kind() {
				continue
			}
			if ev.Kind != river.EventKindJobCompleted {
				done <- &benchError{ev.Job.ID}
				return
			}
			if n++; n == b.N {
				done <- nil
				return
			}
		}
	}()

	b.ResetTimer()
	began := time.Now()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			b.Fatal(err)
		}
	case <-time.After(5 * time.Minute):
		b.Fatalf("%d runs not done after 5 minutes", b.N)
	}
	elapsed := time.Since(began)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "runs/s")
	stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := c.Stop(stopCtx); err != nil {
		b.Fatal(err)
	}
}

type benchError struct{ jobID int64 }

func (e *benchError) Error() string { return "a run's job did not complete" }

// BenchmarkMiddlewareCallsPerRun times, without a database, what the
// middleware adds to one run of the 3-step workflow: its start, one
// attempt around three steps, the run started and finished, on no-op
// providers and on the SDK's (spans recorded, then dropped). Next to the
// hundreds of microseconds a run costs (BenchmarkMiddleware3Steps), it
// bounds the middleware's share far more tightly than the end-to-end
// benchmark can on a shared machine.
func BenchmarkMiddlewareCallsPerRun(b *testing.B) {
	b.Run("noop", func(b *testing.B) {
		benchCalls(b, tributaryotel.NewMiddleware(&tributaryotel.MiddlewareConfig{
			MeterProvider: metricnoop.NewMeterProvider(), TracerProvider: tracenoop.NewTracerProvider(),
		}))
	})
	b.Run("sdk", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() {
			_ = tp.Shutdown(context.Background())
			_ = mp.Shutdown(context.Background())
		})
		benchCalls(b, tributaryotel.NewMiddleware(&tributaryotel.MiddlewareConfig{MeterProvider: mp, TracerProvider: tp}))
	})
}

func benchCalls(b *testing.B, mw *tributaryotel.Middleware) {
	ctx := context.Background()
	inner := func(context.Context) error { return nil }
	steps := []string{"step-1", "step-2", "step-3"}
	b.ReportAllocs()
	for b.Loop() {
		id := uuid.Must(uuid.NewV7())
		start := &workflow.StartInfo{Type: "bench_three_steps", Trigger: workflow.TriggerAPI}
		_ = mw.StartRun(ctx, start, func(context.Context) error {
			start.RunID = id
			return nil
		})
		mw.RunsStarted(ctx, &workflow.RunsStartedEvent{Type: "bench_three_steps", Trigger: workflow.TriggerAPI, Count: 1})
		attempt := &workflow.AttemptInfo{Run: workflow.RunInfo{ID: id, Type: "bench_three_steps", Attempt: 1, MaxAttempts: 25, Metadata: []byte("{}")}, StartedAt: time.Now()}
		_ = mw.WorkAttempt(ctx, attempt, func(ctx context.Context) error {
			for _, name := range steps {
				_ = mw.ExecuteStep(ctx, &workflow.StepInfo{Run: &attempt.Run, Name: name, Kind: workflow.StepKindStep}, inner)
			}
			attempt.Outcome = workflow.AttemptCompleted
			return nil
		})
		mw.RunFinished(ctx, &workflow.RunFinishedEvent{RunID: id, Type: "bench_three_steps", Outcome: workflow.StatusCompleted, Duration: time.Millisecond})
	}
}
