package tributaryotel_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/tributaryotel"
	"github.com/tributary-go/tributary/workflow"
)

// events is a test middleware that says when the engine is done with an
// attempt (after every middleware listed after it) and with a run's
// finish (after every hook listed before it), so that the test waits on
// events instead of polling the exporters.
type events struct {
	workflow.MiddlewareDefaults

	mu       sync.Mutex
	attempts map[uuid.UUID][]workflow.AttemptOutcome
	finished map[uuid.UUID]workflow.Status
	changed  chan struct{}
}

func newEvents() *events {
	return &events{attempts: map[uuid.UUID][]workflow.AttemptOutcome{}, finished: map[uuid.UUID]workflow.Status{}, changed: make(chan struct{}, 1)}
}

func (e *events) notify() {
	select {
	case e.changed <- struct{}{}:
	default:
	}
}

// attemptEvents is the outer attempt middleware: its WorkAttempt returns
// after the OpenTelemetry middleware has ended the attempt's span.
type attemptEvents struct{ *events }

func (e attemptEvents) WorkAttempt(ctx context.Context, a *workflow.AttemptInfo, doInner func(context.Context) error) error {
	err := doInner(ctx)
	e.mu.Lock()
	e.attempts[a.Run.ID] = append(e.attempts[a.Run.ID], a.Outcome)
	e.mu.Unlock()
	e.notify()
	return err
}

// finishEvents is the last run-finished hook: it is called after the
// OpenTelemetry middleware's.
type finishEvents struct{ *events }

func (e finishEvents) RunFinished(_ context.Context, ev *workflow.RunFinishedEvent) {
	e.mu.Lock()
	e.finished[ev.RunID] = ev.Outcome
	e.mu.Unlock()
	e.notify()
}

// waitFor waits until cond holds, re-checked on every event, or fails at
// ctx's deadline.
func (e *events) waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for {
		e.mu.Lock()
		ok := cond()
		e.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-e.changed:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// spansNamed returns the ended spans of name whose attribute key is value
// (any, when key is "").
func spansNamed(spans []sdktrace.ReadOnlySpan, name string, key attribute.Key, value string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() != name {
			continue
		}
		if key != "" && attr(s, key) != value {
			continue
		}
		out = append(out, s)
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) string {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value.String()
		}
	}
	return ""
}

// point is one data point of a metric: its attributes and its value (a
// sum's value, a histogram's count).
type point struct {
	attrs attribute.Set
	value float64
}

func points(t *testing.T, rm metricdata.ResourceMetrics, name string) []point {
	t.Helper()
	var out []point
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range data.DataPoints {
					out = append(out, point{p.Attributes, float64(p.Value)})
				}
			case metricdata.Histogram[float64]:
				for _, p := range data.DataPoints {
					out = append(out, point{p.Attributes, float64(p.Count)})
				}
			default:
				t.Fatalf("metric %s has unexpected data %T", name, m.Data)
			}
		}
	}
	return out
}

// value is the value of metric name's data point with exactly attrs
// (key, value pairs), or 0 when there is none.
func value(t *testing.T, rm metricdata.ResourceMetrics, name string, attrs ...string) float64 {
	t.Helper()
	kvs := make([]attribute.KeyValue, 0, len(attrs)/2)
	for i := 0; i < len(attrs); i += 2 {
		kvs = append(kvs, attribute.String(attrs[i], attrs[i+1]))
	}
	want := attribute.NewSet(kvs...)
	for _, p := range points(t, rm, name) {
		if p.attrs.Equals(&want) {
			return p.value
		}
	}
	return 0
}

// TestMiddleware runs, with the OpenTelemetry middleware on in-memory
// exporters, a workflow with steps, a sleep and a child run, started
// inside a caller's span; a run that fails; and a schedule slot that
// fires. It checks the spans (names, parents, links, attributes) and the
// metrics (names, attributes, values, and that no run id labels them).
func TestMiddleware(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	ev := newEvents()

	kid := workflow.Define("otel_kid", func(ctx workflow.Context, n int) (int, error) {
		return workflow.Step(ctx, "k", func(context.Context) (int, error) { return n + 1, nil })
	}, nil)
	steps := workflow.Define("otel_steps", func(ctx workflow.Context, n int) (int, error) {
		a, err := workflow.Step(ctx, "a", func(context.Context) (int, error) { return n + 1, nil })
		if err != nil {
			return 0, err
		}
		b, err := workflow.Step(ctx, "b", func(context.Context) (int, error) { return a * 2, nil })
		if err != nil {
			return 0, err
		}
		if err := workflow.Sleep(ctx, "nap", 50*time.Millisecond); err != nil {
			return 0, err
		}
		c, err := workflow.Step(ctx, "c", func(context.Context) (int, error) { return b + 1, nil })
		if err != nil {
			return 0, err
		}
		return workflow.RunChild(ctx, "kid", kid, c, nil)
	}, nil)
	failing := workflow.Define("otel_fail", func(ctx workflow.Context, _ struct{}) (int, error) {
		return workflow.Step(ctx, "boom", func(context.Context) (int, error) {
			return 0, workflow.NonRetryable(errors.New("boom"))
		})
	}, nil)
	tick := workflow.Define("otel_tick", func(ctx workflow.Context, _ struct{}) (int, error) {
		return workflow.Step(ctx, "t", func(context.Context) (int, error) { return 1, nil })
	}, nil)

	// A River worker middleware that stands in for otelriver's work span.
	riverWork := river.WorkerMiddlewareFunc(func(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
		ctx, span := tp.Tracer("river").Start(ctx, "river.work/"+job.Kind)
		defer span.End()
		return doInner(ctx)
	})

	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	mw := tributaryotel.NewMiddleware(&tributaryotel.MiddlewareConfig{MeterProvider: mp, TracerProvider: tp})
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Logger:     discard,
		Middleware: []workflow.Middleware{attemptEvents{ev}, mw, finishEvents{ev}},
		River: &river.Config{
			Logger:     discard,
			Middleware: []rivertype.Middleware{riverWork},
			Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
			TestOnly:   true,
		},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{kid, steps, failing, tick},
	})
	require.NoError(t, err)
	sc, err := schedule.New(wf, &schedule.Config{Logger: discard, MeterProvider: mp, TracerProvider: tp})
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctx))
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })

	callerCtx, caller := tp.Tracer("test").Start(ctx, "caller")
	h, err := steps.Start(callerCtx, wf, 1, nil)
	caller.End()
	require.NoError(t, err)
	out, err := h.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, 6, out) // ((1+1)*2+1)+1

	fh, err := failing.Start(ctx, wf, struct{}{}, nil)
	require.NoError(t, err)
	_, err = fh.Result(ctx)
	require.Error(t, err)

	s, err := sc.Create(ctx, &schedule.Params{Name: "every-second", Workflow: "otel_tick", Cron: "* * * * * *", Overlap: schedule.OverlapSkip})
	require.NoError(t, err)
	var slotRun uuid.UUID
	for slotRun == uuid.Nil {
		ev.mu.Lock()
		ids := make([]uuid.UUID, 0, len(ev.finished))
		for id := range ev.finished {
			ids = append(ids, id)
		}
		ev.mu.Unlock()
		runs, err := sc.History(ctx, schedule.ByID(s.ID), nil)
		require.NoError(t, err)
		for _, r := range runs {
			if r.Status == workflow.StatusCompleted && slices.Contains(ids, r.ID) {
				slotRun = r.ID
			}
		}
		if slotRun == uuid.Nil {
			select {
			case <-ev.changed:
			case <-ctx.Done():
				t.Fatal("no slot's run completed")
			}
		}
	}
	_, err = sc.Pause(ctx, schedule.ByID(s.ID), "")
	require.NoError(t, err)

	var kidID uuid.UUID
	run, err := wf.GetRun(ctx, h.ID)
	require.NoError(t, err)
	for _, st := range run.Steps {
		if st.Name == "kid" {
			kidID = *st.ChildRunID
		}
	}
	ev.waitFor(ctx, t, "every run's last attempt and finish", func() bool {
		last := func(id uuid.UUID) workflow.AttemptOutcome {
			a := ev.attempts[id]
			if len(a) == 0 {
				return ""
			}
			return a[len(a)-1]
		}
		return last(h.ID) == workflow.AttemptCompleted && last(fh.ID) == workflow.AttemptFailed && last(slotRun) == workflow.AttemptCompleted &&
			ev.finished[h.ID] == workflow.StatusCompleted && ev.finished[fh.ID] == workflow.StatusFailed &&
			ev.finished[kidID] == workflow.StatusCompleted && ev.finished[slotRun] == workflow.StatusCompleted
	})
	ev.mu.Lock()
	require.Equal(t, []workflow.AttemptOutcome{workflow.AttemptParked, workflow.AttemptParked, workflow.AttemptCompleted}, ev.attempts[h.ID],
		"the sleep parks the run, then the child's start")
	ev.mu.Unlock()

	spans := recorder.Ended()

	t.Run("Start", func(t *testing.T) {
		starts := spansNamed(spans, tributaryotel.SpanStart, tributaryotel.AttrRunID, h.ID.String())
		require.Len(t, starts, 1)
		start := starts[0]
		require.Equal(t, caller.SpanContext().SpanID(), start.Parent().SpanID(), "the start is a child of the caller's span")
		require.Equal(t, trace.SpanKindProducer, start.SpanKind())
		require.Equal(t, "otel_steps", attr(start, tributaryotel.AttrWorkflowType))
		require.Equal(t, "api", attr(start, tributaryotel.AttrRunTrigger))

		kidStarts := spansNamed(spans, tributaryotel.SpanStart, tributaryotel.AttrRunID, kidID.String())
		require.Len(t, kidStarts, 1)
		require.Equal(t, "child", attr(kidStarts[0], tributaryotel.AttrRunTrigger))
		childStart := spansNamed(spans, tributaryotel.SpanChildStart, tributaryotel.AttrRunID, h.ID.String())
		require.Len(t, childStart, 1)
		require.Equal(t, childStart[0].SpanContext().SpanID(), kidStarts[0].Parent().SpanID(), "the child's start is in the parent's child-start span")
		require.Equal(t, "true", attr(childStart[0], tributaryotel.AttrStepParked))
	})

	t.Run("Attempts", func(t *testing.T) {
		start := spansNamed(spans, tributaryotel.SpanStart, tributaryotel.AttrRunID, h.ID.String())[0]
		attempts := spansNamed(spans, tributaryotel.SpanExecute, tributaryotel.AttrRunID, h.ID.String())
		require.Len(t, attempts, 3)
		slices.SortFunc(attempts, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
		for i, a := range attempts {
			require.Len(t, a.Links(), 1, "attempt %d links to the start", i)
			require.Equal(t, start.SpanContext().TraceID(), a.Links()[0].SpanContext.TraceID())
			require.Equal(t, start.SpanContext().SpanID(), a.Links()[0].SpanContext.SpanID())
			river := spansNamed(spans, "river.work/workflow:otel_steps", "", "")
			require.True(t, slices.ContainsFunc(river, func(r sdktrace.ReadOnlySpan) bool { return r.SpanContext().SpanID() == a.Parent().SpanID() }),
				"attempt %d is the child of River's work span", i)
			require.Equal(t, "otel_steps", attr(a, tributaryotel.AttrWorkflowType))
			require.Equal(t, "1", attr(a, tributaryotel.AttrRunAttempt), "sleeping and waiting use up no attempt")
		}
		require.Equal(t, "parked", attr(attempts[0], tributaryotel.AttrAttemptOutcome))
		require.Equal(t, "0", attr(attempts[0], tributaryotel.AttrStepsReplayed))
		require.Equal(t, "parked", attr(attempts[1], tributaryotel.AttrAttemptOutcome))
		require.Equal(t, "2", attr(attempts[1], tributaryotel.AttrStepsReplayed), "a and b")
		require.NotEmpty(t, attr(attempts[1], tributaryotel.AttrTimerLateness), "the attempt the sleep's timer started")
		require.Equal(t, "completed", attr(attempts[2], tributaryotel.AttrAttemptOutcome))
		require.Equal(t, "4", attr(attempts[2], tributaryotel.AttrStepsReplayed), "a, b, nap and c; the child's result is received, not replayed")
		require.Equal(t, codes.Ok, attempts[2].Status().Code)

		fails := spansNamed(spans, tributaryotel.SpanExecute, tributaryotel.AttrRunID, fh.ID.String())
		require.Len(t, fails, 1)
		require.Equal(t, "failed", attr(fails[0], tributaryotel.AttrAttemptOutcome))
		require.Equal(t, codes.Error, fails[0].Status().Code)
		failStart := spansNamed(spans, tributaryotel.SpanStart, tributaryotel.AttrRunID, fh.ID.String())
		require.Len(t, failStart, 1)
		require.False(t, failStart[0].Parent().IsValid(), "started outside any span: the start span is a root")
		require.Len(t, fails[0].Links(), 1)
		require.Equal(t, failStart[0].SpanContext().SpanID(), fails[0].Links()[0].SpanContext.SpanID())
	})

	t.Run("Steps", func(t *testing.T) {
		attempts := spansNamed(spans, tributaryotel.SpanExecute, tributaryotel.AttrRunID, h.ID.String())
		slices.SortFunc(attempts, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
		stepsOf := func(attempt sdktrace.ReadOnlySpan) []string {
			var names []string
			for _, s := range spans {
				if s.Parent().SpanID() == attempt.SpanContext().SpanID() && strings.HasPrefix(s.Name(), "tributary.workflow.") {
					names = append(names, s.Name()+":"+attr(s, tributaryotel.AttrStepName))
				}
			}
			slices.Sort(names)
			return names
		}
		require.Equal(t, []string{"tributary.workflow.sleep:nap", "tributary.workflow.step:a", "tributary.workflow.step:b"}, stepsOf(attempts[0]))
		require.Equal(t, []string{"tributary.workflow.child.start:kid", "tributary.workflow.sleep:nap", "tributary.workflow.step:c"}, stepsOf(attempts[1]),
			"a and b are replayed, not spanned; the sleep ends; the child starts")
		require.Empty(t, stepsOf(attempts[2]), "everything replayed")

		naps := spansNamed(spans, tributaryotel.SpanSleep, tributaryotel.AttrRunID, h.ID.String())
		require.Len(t, naps, 2)
		slices.SortFunc(naps, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
		require.Equal(t, "true", attr(naps[0], tributaryotel.AttrStepParked))
		require.Equal(t, "false", attr(naps[1], tributaryotel.AttrStepParked))
		require.Equal(t, codes.Ok, naps[0].Status().Code, "a park is not a failure")

		boom := spansNamed(spans, tributaryotel.SpanStep, tributaryotel.AttrRunID, fh.ID.String())
		require.Len(t, boom, 1)
		require.Equal(t, "boom", attr(boom[0], tributaryotel.AttrStepName))
		require.Equal(t, codes.Error, boom[0].Status().Code)
	})

	t.Run("Slot", func(t *testing.T) {
		slots := spansNamed(spans, schedule.SpanSlot, "tributary.run.id", slotRun.String())
		require.Len(t, slots, 1)
		slot := slots[0]
		require.Equal(t, "started", attr(slot, "tributary.slot.decision"))
		require.Equal(t, s.ID.String(), attr(slot, "tributary.schedule.id"))
		require.True(t, slot.Parent().IsValid(), "the slot's span is the child of the fire job's work span")
		attempts := spansNamed(spans, tributaryotel.SpanExecute, tributaryotel.AttrRunID, slotRun.String())
		require.Len(t, attempts, 1)
		require.Len(t, attempts[0].Links(), 1)
		require.Equal(t, slot.SpanContext().SpanID(), attempts[0].Links()[0].SpanContext.SpanID(), "the slot's run links back to the slot's decision")
		require.Equal(t, s.ID.String(), attr(attempts[0], tributaryotel.AttrScheduleID))
	})

	t.Run("Metrics", func(t *testing.T) {
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(ctx, &rm))

		require.Equal(t, 1.0, value(t, rm, "tributary.runs.started", "workflow", "otel_steps", "trigger", "api"))
		require.Equal(t, 1.0, value(t, rm, "tributary.runs.started", "workflow", "otel_fail", "trigger", "api"))
		require.Equal(t, 1.0, value(t, rm, "tributary.runs.started", "workflow", "otel_kid", "trigger", "child"))
		require.GreaterOrEqual(t, value(t, rm, "tributary.runs.started", "workflow", "otel_tick", "trigger", "schedule"), 1.0)

		require.Equal(t, 1.0, value(t, rm, "tributary.runs.finished", "workflow", "otel_steps", "outcome", "completed"))
		require.Equal(t, 1.0, value(t, rm, "tributary.runs.finished", "workflow", "otel_kid", "outcome", "completed"))
		require.Equal(t, 1.0, value(t, rm, "tributary.runs.finished", "workflow", "otel_fail", "outcome", "failed"))
		require.Equal(t, 1.0, value(t, rm, "tributary.runs.duration", "workflow", "otel_steps", "outcome", "completed"), "one duration recorded")

		for _, step := range []string{"a", "b", "c"} {
			require.Equal(t, 1.0, value(t, rm, "tributary.workflow.step.executions", "workflow", "otel_steps", "step", step, "outcome", "ok"), step)
			require.Equal(t, 1.0, value(t, rm, "tributary.workflow.step.duration", "workflow", "otel_steps", "step", step, "outcome", "ok"), step)
		}
		require.Equal(t, 1.0, value(t, rm, "tributary.workflow.step.executions", "workflow", "otel_fail", "step", "boom", "outcome", "error"))
		require.Equal(t, 2.0, value(t, rm, "tributary.workflow.step.replays", "workflow", "otel_steps", "step", "a"))
		require.Equal(t, 1.0, value(t, rm, "tributary.workflow.step.replays", "workflow", "otel_steps", "step", "c"))
		require.Equal(t, 1.0, value(t, rm, "tributary.workflow.timer.lateness", "workflow", "otel_steps"), "one sleep woke by its timer")
		require.GreaterOrEqual(t, value(t, rm, "tributary.workflow.attempt.wait", "workflow", "otel_steps", "tenanted", "false"), 3.0,
			"a wait recorded for each attempt of the run (the first, after the sleep, after the child)")

		require.GreaterOrEqual(t, value(t, rm, "tributary.schedule.slots", "decision", "started", "reason", ""), 1.0)

		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				for _, p := range points(t, rm, m.Name) {
					for _, kv := range p.attrs.ToSlice() {
						require.NotContains(t, string(kv.Key), "run", "no run ids on metrics (%s)", m.Name)
						_, err := uuid.Parse(kv.Value.String())
						require.Error(t, err, "no ids on metrics (%s: %s)", m.Name, kv.Key)
					}
				}
			}
		}
	})
}
