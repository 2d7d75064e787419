package schedule

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/tributary-go/tributary/internal/wfruntime"
)

// logSlots logs the slots of a batch that committed: each slot that
// started a run at info, each skipped slot at info for the ordinary
// reasons (overlap, a missed slot) and at warn for those an operator has
// to act on (a grant, a run the engine refused, a slot that could not
// fire).
func (c *Client) logSlots(ctx context.Context, logs []slotLog) {
	for _, l := range logs {
		if l.skip == "" {
			c.logger.InfoContext(ctx, "tributary: Fired schedule slot", slog.String("schedule_id", l.scheduleID.String()),
				slog.Time("fire_at", l.fireAt), slog.String("run_id", l.runID.String()))
			continue
		}
		level := slog.LevelInfo
		if kind := skipKind(l.skip); kind != SkipReasonOverlap && kind != SkipReasonMissed {
			level = slog.LevelWarn
		}
		c.logger.Log(ctx, level, "tributary: Skipped schedule slot", slog.String("schedule_id", l.scheduleID.String()),
			slog.Time("fire_at", l.fireAt), slog.String("reason", l.skip))
	}
}

// slotSpan starts the span of sl's decision (see Config.TracerProvider)
// and, when it records, stores its context in the metadata of sl's run.
func (c *Client) slotSpan(ctx context.Context, sl *slot) trace.Span {
	ctx, span := c.tracer.Start(ctx, SpanSlot)
	if !span.IsRecording() {
		return span
	}
	span.SetAttributes(
		attribute.String("tributary.schedule.id", sl.s.ID.String()),
		attribute.String("tributary.schedule.fire_at", sl.fireAt.UTC().Format(time.RFC3339Nano)),
		attribute.String("tributary.workflow.type", sl.s.Workflow),
	)
	if note := sl.meta.DSTNote; note != "" {
		span.SetAttributes(attribute.String("tributary.slot.dst_adjustment", note))
	}
	if nominal := sl.meta.Nominal; nominal != "" {
		span.SetAttributes(attribute.String("tributary.slot.nominal", nominal))
	}
	if sl.skip == "" {
		carrier := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(ctx, carrier)
		sl.meta.Trace = carrier
	}
	return span
}

// SpanSlot is the name of the span of a slot decision.
const SpanSlot = "tributary.schedule.slot"

// decideSlotSpan records what became of a slot on its span.
func decideSlotSpan(span trace.Span, st wfruntime.Started) {
	if span.IsRecording() {
		switch {
		case st.Existing:
			span.SetAttributes(attribute.String("tributary.slot.decision", "existing"))
		case st.Skip != "":
			span.SetAttributes(attribute.String("tributary.slot.decision", "skipped"), attribute.String("tributary.slot.reason", st.Skip),
				attribute.String("tributary.run.id", st.RunID.String()))
		default:
			span.SetAttributes(attribute.String("tributary.slot.decision", "started"), attribute.String("tributary.run.id", st.RunID.String()))
		}
		span.SetStatus(codes.Ok, "")
	}
}

// skipKind is the reason without its details: "cannot start" for
// "cannot start: input is 4108 bytes…".
func skipKind(reason string) string {
	for _, prefix := range []string{SkipReasonCannotFire, SkipReasonCannotStart, SkipReasonMissed, SkipReasonExcluded} {
		if len(reason) >= len(prefix) && reason[:len(prefix)] == prefix {
			return prefix
		}
	}
	return reason
}
