package tributaryotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/tributaryotel"
	"github.com/tributary-go/tributary/workflow"
)

// heldGauge returns tributary.runs.held by workflow type and reason
// ("type/reason").
func heldGauge(t *testing.T, rm metricdata.ResourceMetrics) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "tributary.runs.held" {
				continue
			}
			for _, p := range m.Data.(metricdata.Gauge[int64]).DataPoints {
				typ, _ := p.Attributes.Value("workflow")
				reason, _ := p.Attributes.Value("reason")
				out[typ.AsString()+"/"+reason.AsString()] = p.Value
			}
		}
	}
	return out
}

// TestHeldRunsGauge: tributary.runs.held counts the runs held back by
// their tenant's limit, by workflow type, and falls to 0 once they ran.
func TestHeldRunsGauge(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	began, release := make(chan struct{}, 3), make(chan struct{})
	limited := workflow.Define("otel_limited", func(ctx workflow.Context, _ struct{}) (struct{}, error) {
		began <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return struct{}{}, nil
	}, &workflow.DefineOpts{TenantLimit: 1})
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 3}}, TestOnly: true},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{limited},
	})
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctx))
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})

	var handles []*workflow.Handle[struct{}]
	for range 3 {
		h, err := limited.Start(ctx, wf, struct{}{}, &workflow.StartOpts{Tenant: "acme"})
		require.NoError(t, err)
		handles = append(handles, h)
	}
	<-began
	// The two others wait, held: their jobs stay ready while acme has 1 of
	// 1 running.
	for held := 0; held < 2; {
		held = 0
		for _, h := range handles {
			run, err := h.Get(ctx)
			require.NoError(t, err)
			if run.Held == workflow.HeldTenantLimit {
				held++
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("the runs over the limit were not held back")
		case <-time.After(10 * time.Millisecond):
		}
	}

	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	reg, err := tributaryotel.RegisterGauges(wf, &tributaryotel.Config{MeterProvider: provider})
	require.NoError(t, err)
	defer func() { require.NoError(t, reg.Unregister()) }()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	require.Equal(t, map[string]int64{"otel_limited/tenant_limit": 2}, heldGauge(t, rm))

	close(release)
	released = true
	for _, h := range handles {
		_, err := h.Result(ctx)
		require.NoError(t, err)
	}
	require.NoError(t, reader.Collect(ctx, &rm))
	require.Equal(t, map[string]int64{"otel_limited/tenant_limit": 0}, heldGauge(t, rm), "0 once its held runs are gone")
}

// TestHeldRunsGaugeRate: tributary.runs.held counts the ready runs waiting
// for their tenant's rate as reason tenant_rate, and falls to 0 once a
// faster rate set for the tenant lets them start.
func TestHeldRunsGaugeRate(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rated := workflow.Define("otel_rated", func(ctx workflow.Context, _ struct{}) (struct{}, error) { return struct{}{}, nil },
		&workflow.DefineOpts{TenantRate: workflow.Rate{Limit: 1, Per: time.Hour}})
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 3}}, TestOnly: true},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{rated},
	})
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctx))
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })

	var handles []*workflow.Handle[struct{}]
	for range 3 {
		h, err := rated.Start(ctx, wf, struct{}{}, &workflow.StartOpts{Tenant: "acme"})
		require.NoError(t, err)
		handles = append(handles, h)
	}
	_, err = handles[0].Result(ctx)
	require.NoError(t, err, "the first takes acme's one token")
	for waiting := 0; waiting < 2; {
		waiting = 0
		for _, h := range handles[1:] {
			run, err := h.Get(ctx)
			require.NoError(t, err)
			if run.Held == workflow.HeldTenantRate {
				waiting++
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("the runs beyond acme's token were not reported waiting for its rate")
		case <-time.After(10 * time.Millisecond):
		}
	}

	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	reg, err := tributaryotel.RegisterGauges(wf, &tributaryotel.Config{MeterProvider: provider})
	require.NoError(t, err)
	defer func() { require.NoError(t, reg.Unregister()) }()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	require.Equal(t, map[string]int64{"otel_rated/tenant_rate": 2}, heldGauge(t, rm))

	require.NoError(t, wf.SetTenantRate(ctx, "otel_rated", "acme", workflow.Rate{Limit: 1000, Per: time.Second}))
	for _, h := range handles {
		_, err := h.Result(ctx)
		require.NoError(t, err)
	}
	require.NoError(t, reader.Collect(ctx, &rm))
	require.Equal(t, map[string]int64{"otel_rated/tenant_rate": 0}, heldGauge(t, rm), "0 once its waiting runs are gone")
}
