package tributaryotel

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/tributary-go/tributary/internal/runmeta"
	"github.com/tributary-go/tributary/workflow"
)

// TraceMetadataKey is the key of a run's metadata (workflow.RunInfo.Metadata)
// under which the middleware stores the W3C trace context of the code that
// started the run, as an object with "traceparent" and, when set,
// "tracestate".
const TraceMetadataKey = runmeta.KeyTrace

// Span names.
const (
	SpanStart       = "tributary.workflow.start"
	SpanExecute     = "tributary.workflow.execute"
	SpanStep        = "tributary.workflow.step"
	SpanSleep       = "tributary.workflow.sleep"
	SpanSignalWait  = "tributary.workflow.signal.wait"
	SpanSignalSend  = "tributary.workflow.signal.send"
	SpanChildStart  = "tributary.workflow.child.start"
	instrumentScope = meterName
)

// Attribute keys of the spans and metrics.
const (
	AttrWorkflowType   = attribute.Key("tributary.workflow.type")
	AttrRunID          = attribute.Key("tributary.run.id")
	AttrRunTrigger     = attribute.Key("tributary.run.trigger")
	AttrRunExisting    = attribute.Key("tributary.run.existing")
	AttrRunAttempt     = attribute.Key("tributary.run.attempt")
	AttrRunMaxAttempts = attribute.Key("tributary.run.max_attempts")
	AttrRunParentID    = attribute.Key("tributary.run.parent_id")
	AttrScheduleID     = attribute.Key("tributary.schedule.id")
	AttrAttemptOutcome = attribute.Key("tributary.attempt.outcome")
	AttrStepsReplayed  = attribute.Key("tributary.attempt.steps_replayed")
	AttrTimerLateness  = attribute.Key("tributary.attempt.timer_lateness_s")
	AttrStepName       = attribute.Key("tributary.step.name")
	AttrStepKind       = attribute.Key("tributary.step.kind")
	AttrStepParked     = attribute.Key("tributary.step.parked")
	AttrSignalName     = attribute.Key("tributary.signal.name")

	// Metric attributes, kept short as Prometheus labels.
	attrWorkflow = attribute.Key("workflow")
	attrTrigger  = attribute.Key("trigger")
	attrOutcome  = attribute.Key("outcome")
	attrStep     = attribute.Key("step")
	attrTenanted = attribute.Key("tenanted") // the run has a tenant; the tenant itself would be one series each
)

// MiddlewareConfig configures NewMiddleware.
type MiddlewareConfig struct {
	// MeterProvider provides the meter of the run and step metrics.
	//
	// Defaults to otel.GetMeterProvider(), the global one.
	MeterProvider metric.MeterProvider

	// TracerProvider provides the tracer of the run, attempt and step
	// spans.
	//
	// Defaults to otel.GetTracerProvider(), the global one.
	TracerProvider trace.TracerProvider
}

// Middleware turns the workflow engine's work into OpenTelemetry spans and
// metrics (see the package doc). List it in workflow.Config.Middleware;
// one Middleware may serve several clients.
type Middleware struct {
	workflow.MiddlewareDefaults

	tracer     trace.Tracer
	propagator propagation.TraceContext

	runsStarted    metric.Int64Counter
	runsFinished   metric.Int64Counter
	runDuration    metric.Float64Histogram
	stepExecutions metric.Int64Counter
	stepDuration   metric.Float64Histogram
	stepReplays    metric.Int64Counter
	timerLateness  metric.Float64Histogram
	queueWait      metric.Float64Histogram
}

var (
	_ workflow.StartMiddleware   = (*Middleware)(nil)
	_ workflow.AttemptMiddleware = (*Middleware)(nil)
	_ workflow.StepMiddleware    = (*Middleware)(nil)
	_ workflow.SignalMiddleware  = (*Middleware)(nil)
	_ workflow.HookRunsStarted   = (*Middleware)(nil)
	_ workflow.HookRunFinished   = (*Middleware)(nil)
	_ workflow.HookStepReplayed  = (*Middleware)(nil)
)

// durationBuckets are the histogram boundaries of run and step durations,
// in seconds: from a millisecond step to a day-long run.
var durationBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400}

// NewMiddleware returns the OpenTelemetry middleware. config may be nil.
// It panics only if the OpenTelemetry SDK refuses one of its instruments,
// whose names and bucket lists are constants.
func NewMiddleware(config *MiddlewareConfig) *Middleware {
	if config == nil {
		config = &MiddlewareConfig{}
	}
	mp := config.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	tp := config.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	meter := mp.Meter(instrumentScope)
	return &Middleware{
		tracer: tp.Tracer(instrumentScope),
		runsStarted: must(meter.Int64Counter("tributary.runs.started",
			metric.WithDescription("Workflow runs started, by workflow type and trigger (api, schedule, child, backfill)."), metric.WithUnit("{run}"))),
		runsFinished: must(meter.Int64Counter("tributary.runs.finished",
			metric.WithDescription("Workflow runs finished, by workflow type and outcome (completed, failed, cancelled)."), metric.WithUnit("{run}"))),
		runDuration: must(meter.Float64Histogram("tributary.runs.duration",
			metric.WithDescription("Seconds from a run's start to its finish, sleeps, waits and retries included, by workflow type and outcome."),
			metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(durationBuckets...))),
		stepExecutions: must(meter.Int64Counter("tributary.workflow.step.executions",
			metric.WithDescription("Step functions that ran (not replayed), by workflow type, step and outcome (ok, error)."), metric.WithUnit("{step}"))),
		stepDuration: must(meter.Float64Histogram("tributary.workflow.step.duration",
			metric.WithDescription("Seconds a step that ran took, by workflow type, step and outcome."),
			metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(durationBuckets...))),
		stepReplays: must(meter.Int64Counter("tributary.workflow.step.replays",
			metric.WithDescription("Steps replayed from their memo instead of running, by workflow type and step."), metric.WithUnit("{step}"))),
		timerLateness: must(meter.Float64Histogram("tributary.workflow.timer.lateness",
			metric.WithDescription("Seconds from a sleep's wake time to the start of the attempt it woke, by workflow type."),
			metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))),
		queueWait: must(meter.Float64Histogram("tributary.workflow.attempt.wait",
			metric.WithDescription("Seconds from an attempt's job being due to its start: waiting for a worker, the tenant's turn, its rate or its limit; by workflow type and whether the run has a tenant."),
			metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300))),
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic("tributaryotel: " + err.Error())
	}
	return v
}

// StartRun implements workflow.StartMiddleware: a producer span around the
// start, whose context is stored in the run's metadata under
// TraceMetadataKey so that the run's attempts link back to it.
func (m *Middleware) StartRun(ctx context.Context, start *workflow.StartInfo, doInner func(context.Context) error) error {
	ctx, span := m.tracer.Start(ctx, SpanStart, trace.WithSpanKind(trace.SpanKindProducer))
	defer span.End()
	if sc := span.SpanContext(); sc.IsValid() {
		carrier := propagation.MapCarrier{}
		m.propagator.Inject(ctx, carrier)
		start.SetMetadata(TraceMetadataKey, map[string]string(carrier))
	}
	err := doInner(ctx)
	if span.IsRecording() {
		span.SetAttributes(AttrWorkflowType.String(start.Type), AttrRunTrigger.String(string(start.Trigger)))
		if start.ParentID != nil {
			span.SetAttributes(AttrRunParentID.String(start.ParentID.String()))
		}
		if err == nil {
			span.SetAttributes(AttrRunID.String(start.RunID.String()), AttrRunExisting.Bool(start.Existing))
		}
		setStatus(span, err)
	}
	return err
}

// attemptKey holds an attempt's *attemptState in its context.
type attemptKey struct{}

type attemptState struct {
	replays atomic.Int64
}

// WorkAttempt implements workflow.AttemptMiddleware: a span per attempt,
// the child of the context River's worker gives (River's work span, with
// otelriver), linked to the span that started the run.
func (m *Middleware) WorkAttempt(ctx context.Context, attempt *workflow.AttemptInfo, doInner func(context.Context) error) error {
	run := &attempt.Run
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	if link, ok := m.startLink(run.Metadata); ok {
		opts = append(opts, trace.WithLinks(link))
	}
	ctx, span := m.tracer.Start(ctx, SpanExecute, opts...)
	defer span.End()
	state := &attemptState{}
	ctx = context.WithValue(ctx, attemptKey{}, state)

	if attempt.WakeAt != nil && m.timerLateness.Enabled(ctx) {
		m.timerLateness.Record(ctx, max(attempt.StartedAt.Sub(*attempt.WakeAt), 0).Seconds(),
			metric.WithAttributes(attrWorkflow.String(run.Type)))
	}

	if !attempt.ReadyAt.IsZero() && m.queueWait.Enabled(ctx) {
		m.queueWait.Record(ctx, max(attempt.StartedAt.Sub(attempt.ReadyAt), 0).Seconds(),
			metric.WithAttributes(attrWorkflow.String(run.Type), attrTenanted.String(strconv.FormatBool(run.Tenant != ""))))
	}

	err := doInner(ctx)
	if span.IsRecording() {
		span.SetAttributes(
			AttrWorkflowType.String(run.Type),
			AttrRunID.String(run.ID.String()),
			AttrRunAttempt.Int(run.Attempt),
			AttrRunMaxAttempts.Int(run.MaxAttempts),
			AttrAttemptOutcome.String(string(attempt.Outcome)),
			AttrStepsReplayed.Int64(state.replays.Load()),
		)
		if run.ScheduleID != nil {
			span.SetAttributes(AttrScheduleID.String(run.ScheduleID.String()))
		}
		if run.ParentID != nil {
			span.SetAttributes(AttrRunParentID.String(run.ParentID.String()))
		}
		if attempt.WakeAt != nil {
			span.SetAttributes(AttrTimerLateness.Float64(max(attempt.StartedAt.Sub(*attempt.WakeAt), 0).Seconds()))
		}
		switch attempt.Outcome {
		case workflow.AttemptCompleted, workflow.AttemptParked:
			span.SetStatus(codes.Ok, "")
		case workflow.AttemptCancelled:
			span.SetStatus(codes.Unset, "")
		default:
			setStatus(span, err)
		}
	}
	return err
}

// startLink is the span context stored in a run's metadata by StartRun.
func (m *Middleware) startLink(metadata json.RawMessage) (trace.Link, bool) {
	if len(metadata) <= 2 || !bytes.Contains(metadata, []byte(`"`+TraceMetadataKey+`"`)) {
		return trace.Link{}, false
	}
	carrier := runmeta.Decode(metadata).Trace
	if carrier == nil {
		return trace.Link{}, false
	}
	sc := trace.SpanContextFromContext(m.propagator.Extract(context.Background(), propagation.MapCarrier(carrier)))
	if !sc.IsValid() {
		return trace.Link{}, false
	}
	return trace.Link{SpanContext: sc}, true
}

// ExecuteStep implements workflow.StepMiddleware: a span per step that
// runs (and per sleep, signal wait and child start), and the step metrics.
func (m *Middleware) ExecuteStep(ctx context.Context, step *workflow.StepInfo, doInner func(context.Context) error) error {
	name := SpanStep
	switch step.Kind {
	case workflow.StepKindSleep:
		name = SpanSleep
	case workflow.StepKindSignal:
		name = SpanSignalWait
	case workflow.StepKindChild:
		name = SpanChildStart
	}
	began := time.Now()
	ctx, span := m.tracer.Start(ctx, name)
	defer span.End()

	err := doInner(ctx)
	failed := err != nil && !step.Parked
	if span.IsRecording() {
		span.SetAttributes(
			AttrWorkflowType.String(step.Run.Type),
			AttrRunID.String(step.Run.ID.String()),
			AttrStepName.String(step.Name),
			AttrStepKind.String(string(step.Kind)),
		)
		if step.Kind != workflow.StepKindStep {
			span.SetAttributes(AttrStepParked.Bool(step.Parked))
		}
		if failed {
			setStatus(span, err)
		} else {
			span.SetStatus(codes.Ok, "")
		}
	}
	if step.Kind == workflow.StepKindStep && m.stepExecutions.Enabled(ctx) {
		outcome := "ok"
		if failed {
			outcome = "error"
		}
		attrs := metric.WithAttributes(attrWorkflow.String(step.Run.Type), attrStep.String(step.Name), attrOutcome.String(outcome))
		m.stepExecutions.Add(ctx, 1, attrs)
		m.stepDuration.Record(ctx, time.Since(began).Seconds(), attrs)
	}
	return err
}

// SendSignal implements workflow.SignalMiddleware: a producer span around
// storing the signal.
func (m *Middleware) SendSignal(ctx context.Context, signal *workflow.SignalInfo, doInner func(context.Context) error) error {
	ctx, span := m.tracer.Start(ctx, SpanSignalSend, trace.WithSpanKind(trace.SpanKindProducer))
	defer span.End()
	err := doInner(ctx)
	if span.IsRecording() {
		span.SetAttributes(AttrRunID.String(signal.RunID.String()), AttrSignalName.String(signal.Name))
		setStatus(span, err)
	}
	return err
}

// RunsStarted implements workflow.HookRunsStarted.
func (m *Middleware) RunsStarted(ctx context.Context, ev *workflow.RunsStartedEvent) {
	if m.runsStarted.Enabled(ctx) {
		m.runsStarted.Add(ctx, int64(ev.Count), metric.WithAttributes(attrWorkflow.String(ev.Type), attrTrigger.String(string(ev.Trigger))))
	}
}

// RunFinished implements workflow.HookRunFinished.
func (m *Middleware) RunFinished(ctx context.Context, ev *workflow.RunFinishedEvent) {
	if !m.runsFinished.Enabled(ctx) && !m.runDuration.Enabled(ctx) {
		return
	}
	attrs := metric.WithAttributes(attrWorkflow.String(ev.Type), attrOutcome.String(string(ev.Outcome)))
	m.runsFinished.Add(ctx, 1, attrs)
	m.runDuration.Record(ctx, ev.Duration.Seconds(), attrs)
}

// StepReplayed implements workflow.HookStepReplayed: the replays counter,
// and the attempt span's count of replayed steps.
func (m *Middleware) StepReplayed(ctx context.Context, step *workflow.StepInfo) {
	if state, ok := ctx.Value(attemptKey{}).(*attemptState); ok {
		state.replays.Add(1)
	}
	if m.stepReplays.Enabled(ctx) {
		m.stepReplays.Add(ctx, 1, metric.WithAttributes(attrWorkflow.String(step.Run.Type), attrStep.String(step.Name)))
	}
}

// setStatus sets span's status from err.
func setStatus(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return
	}
	span.SetStatus(codes.Ok, "")
}
