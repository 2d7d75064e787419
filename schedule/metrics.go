package schedule

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// meterName is the instrumentation scope of Tributary's metrics (the same
// as package tributaryotel's).
const meterName = "github.com/tributary-go/tributary"

// slotMetrics are the firing passes' OpenTelemetry instruments:
//
//	tributary.schedule.slots{decision, reason}   slots fired: decision started or skipped, with the skip reason
//	tributary.schedule.fire_delay                seconds from a slot's time to the pass that started its run
//	                                             (Temporal's schedule_action_delay)
//	tributary.schedule.grant.denials{reason}     slots an execution grant did not admit: grant revoked,
//	                                             grant expired, grant out of scope
//
// They are recorded once a batch has committed, on whichever client fires.
type slotMetrics struct {
	slots   metric.Int64Counter
	delay   metric.Float64Histogram
	denials metric.Int64Counter
}

func newSlotMetrics(provider metric.MeterProvider) (*slotMetrics, error) {
	if provider == nil {
		provider = otel.GetMeterProvider()
	}
	meter := provider.Meter(meterName)
	slots, err := meter.Int64Counter("tributary.schedule.slots",
		metric.WithDescription("Schedule slots fired, by decision (started, skipped) and skip reason."), metric.WithUnit("{slot}"))
	if err != nil {
		return nil, err
	}
	delay, err := meter.Float64Histogram("tributary.schedule.fire_delay",
		metric.WithDescription("Seconds from a slot's time to the firing pass that started its run."), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300))
	if err != nil {
		return nil, err
	}
	denials, err := meter.Int64Counter("tributary.schedule.grant.denials",
		metric.WithDescription("Schedule slots skipped because their execution grant did not admit the run, by reason (grant revoked, grant expired, grant out of scope)."), metric.WithUnit("{slot}"))
	if err != nil {
		return nil, err
	}
	return &slotMetrics{slots: slots, delay: delay, denials: denials}, nil
}

// record records what a firing pass decided.
func (m *slotMetrics) record(ctx context.Context, stats *passStats) {
	if m == nil || stats == nil {
		return
	}
	if stats.Started > 0 {
		m.slots.Add(ctx, int64(stats.Started), metric.WithAttributes(attribute.String("decision", "started"), attribute.String("reason", "")))
	}
	for reason, n := range stats.Skipped {
		m.slots.Add(ctx, int64(n), metric.WithAttributes(attribute.String("decision", "skipped"), attribute.String("reason", reason)))
	}
	for _, d := range stats.delays {
		m.delay.Record(ctx, max(d, 0).Seconds())
	}
	for reason, n := range stats.denials {
		m.denials.Add(ctx, int64(n), metric.WithAttributes(attribute.String("reason", reason)))
	}
}
