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
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/tributaryotel"
	"github.com/tributary-go/tributary/workflow"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// gauge returns the value of gauge name with attribute state (or none).
func gauge(t *testing.T, rm metricdata.ResourceMetrics, name, state string) float64 {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch data := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, p := range data.DataPoints {
					if v, ok := p.Attributes.Value("state"); (ok && v.AsString() == state) || (!ok && state == "") {
						return float64(p.Value)
					}
				}
			case metricdata.Gauge[float64]:
				for _, p := range data.DataPoints {
					return p.Value
				}
			}
		}
	}
	t.Fatalf("no data point of %s{state=%q}", name, state)
	return 0
}

func TestRegisterGauges(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	wait := workflow.Define("otel_wait", func(ctx workflow.Context, _ struct{}) (string, error) {
		return workflow.WaitSignal[string](ctx, "go", nil)
	}, nil)
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}, TestOnly: true},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{wait},
	})
	require.NoError(t, err)
	sc, err := schedule.New(wf, nil)
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctx))
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })

	// One run waiting, one pending far in the future, a paused schedule.
	// The waiting run parks by ending its River job: wait for the job events.
	events, unsubscribe := wf.River().Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed,
		river.EventKindJobCancelled, river.EventKindJobSnoozed)
	defer unsubscribe()
	waiting, err := wait.Start(ctx, wf, struct{}{}, nil)
	require.NoError(t, err)
	_, err = wait.Start(ctx, wf, struct{}{}, &workflow.StartOpts{ScheduledAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	_, err = sc.Create(ctx, &schedule.Params{Name: "p", Cron: "@daily", Workflow: "otel_wait", Paused: true})
	require.NoError(t, err)
	for {
		run, err := wf.GetRun(ctx, waiting.ID)
		require.NoError(t, err)
		if run.Status == workflow.StatusWaiting {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the run did not reach waiting; it is %s", run.Status)
		case <-events:
		}
	}

	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	reg, err := tributaryotel.RegisterGauges(wf, &tributaryotel.Config{MeterProvider: provider})
	require.NoError(t, err)
	defer func() { require.NoError(t, reg.Unregister()) }()

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	require.Equal(t, 1.0, gauge(t, rm, "tributary.runs.active", "waiting"))
	require.Equal(t, 1.0, gauge(t, rm, "tributary.runs.active", "pending"))
	require.Equal(t, 0.0, gauge(t, rm, "tributary.runs.active", "running"))
	require.Greater(t, gauge(t, rm, "tributary.runs.oldest_pending.age", ""), 0.0)
	require.Equal(t, 0.0, gauge(t, rm, "tributary.schedules", "active"))
	require.Equal(t, 1.0, gauge(t, rm, "tributary.schedules", "paused"))
	require.Equal(t, 1.0, gauge(t, rm, "tributary.workers.live", ""))
	require.Equal(t, 2.0, gauge(t, rm, "tributary.river.jobs", "scheduled"), "the pending run's job, and the waiting run's next job, wait for their time")
}
