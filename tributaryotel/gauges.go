// The database gauges: RegisterGauges.

package tributaryotel

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/wfruntime"
	"github.com/tributary-go/tributary/workflow"
)

// Config configures RegisterGauges.
type Config struct {
	// MeterProvider provides the meter the gauges are registered on.
	//
	// Defaults to otel.GetMeterProvider(), the global one.
	MeterProvider metric.MeterProvider

	// Timeout bounds the queries of one collection.
	//
	// Defaults to 5 seconds.
	Timeout time.Duration
}

// meterName is the instrumentation scope of Tributary's metrics.
const meterName = "github.com/tributary-go/tributary"

// RegisterGauges registers the database gauges (see the package doc) for
// the runs, schedules and workers of wf's database and schema. Unregister
// the returned registration to stop them. A collection whose queries fail
// reports nothing for them and returns the error to the SDK, which logs it.
func RegisterGauges(wf *workflow.Client, config *Config) (metric.Registration, error) {
	if wf == nil {
		return nil, fmt.Errorf("tributaryotel: the workflow client is nil; pass the client whose database to report")
	}
	if config == nil {
		config = &Config{}
	}
	provider := config.MeterProvider
	if provider == nil {
		provider = otel.GetMeterProvider()
	}
	timeout := config.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	meter := provider.Meter(meterName)

	active, err := meter.Int64ObservableGauge("tributary.runs.active",
		metric.WithDescription("Unfinished workflow runs by state: pending, running, sleeping, waiting."), metric.WithUnit("{run}"))
	if err != nil {
		return nil, err
	}
	oldest, err := meter.Float64ObservableGauge("tributary.runs.oldest_pending.age",
		metric.WithDescription("Seconds since the oldest pending run was created; 0 when none is pending."), metric.WithUnit("s"))
	if err != nil {
		return nil, err
	}
	schedules, err := meter.Int64ObservableGauge("tributary.schedules",
		metric.WithDescription("Schedules by state: active, paused."), metric.WithUnit("{schedule}"))
	if err != nil {
		return nil, err
	}
	workers, err := meter.Int64ObservableGauge("tributary.workers.live",
		metric.WithDescription("Working clients whose heartbeat in the worker registry is recent."), metric.WithUnit("{client}"))
	if err != nil {
		return nil, err
	}
	jobs, err := meter.Int64ObservableGauge("tributary.river.jobs",
		metric.WithDescription("River jobs of the schema by state: available, running, scheduled, retryable."), metric.WithUnit("{job}"))
	if err != nil {
		return nil, err
	}

	held, err := meter.Int64ObservableGauge("tributary.runs.held",
		metric.WithDescription("Pending runs held back instead of working, by workflow type and reason: tenant_limit (ready, while their tenant has as many runs of the type working as its limit), tenant_rate (ready, their tenant not at its limit, waiting for a token of its rate)."), metric.WithUnit("{run}"))
	if err != nil {
		return nil, err
	}

	rt := wfruntime.Of(wf)
	db := rt.Queries()
	// The (type, reason) pairs that had held runs: each reports 0 once it
	// has none, so that a chart falls to 0 instead of stopping.
	var (
		heldMu   sync.Mutex
		heldSeen = map[engine.HeldCount]bool{}
	)
	return meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()

		counts, err := wf.CountRuns(ctx, time.Now())
		if err != nil {
			return fmt.Errorf("tributaryotel: count runs: %w", err)
		}
		for _, status := range []workflow.Status{workflow.StatusPending, workflow.StatusRunning, workflow.StatusSleeping, workflow.StatusWaiting} {
			o.ObserveInt64(active, counts.InFlight[status], metric.WithAttributes(attribute.String("state", string(status))))
		}

		pool := rt.Pool()
		age, err := db.OldestPendingAge(ctx, pool)
		if err != nil {
			return fmt.Errorf("tributaryotel: read the oldest pending run: %w", err)
		}
		o.ObserveFloat64(oldest, max(age, 0))
		nActive, nPaused, err := db.CountSchedules(ctx, pool)
		if err != nil {
			return fmt.Errorf("tributaryotel: count schedules: %w", err)
		}
		o.ObserveInt64(schedules, nActive, metric.WithAttributes(attribute.String("state", "active")))
		o.ObserveInt64(schedules, nPaused, metric.WithAttributes(attribute.String("state", "paused")))

		registry, err := wf.Workers(ctx)
		if err != nil {
			return fmt.Errorf("tributaryotel: read the worker registry: %w", err)
		}
		live := int64(0)
		for _, w := range registry {
			if w.Live {
				live++
			}
		}
		o.ObserveInt64(workers, live)

		counted, err := db.CountRiverJobs(ctx, pool)
		if err != nil {
			return fmt.Errorf("tributaryotel: count River jobs: %w", err)
		}
		for _, state := range []string{"available", "running", "scheduled", "retryable"} {
			o.ObserveInt64(jobs, counted[state], metric.WithAttributes(attribute.String("state", state)))
		}

		heldCounts, err := db.CountHeldRuns(ctx, pool, 5*workflow.WorkerHeartbeatInterval)
		if err != nil {
			return fmt.Errorf("tributaryotel: count held runs: %w", err)
		}
		heldMu.Lock()
		defer heldMu.Unlock()
		now := make(map[engine.HeldCount]int64, len(heldCounts))
		for _, c := range heldCounts {
			key := engine.HeldCount{Type: c.Type, Reason: c.Reason}
			now[key] = c.Count
			heldSeen[key] = true
		}
		for key := range heldSeen {
			o.ObserveInt64(held, now[key], metric.WithAttributes(attribute.String("workflow", key.Type), attribute.String("reason", key.Reason)))
		}
		return nil
	}, active, oldest, schedules, workers, jobs, held)
}
