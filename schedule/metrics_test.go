package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestSlotMetrics: the firing passes count slots by decision and skip
// reason and record each started slot's fire delay.
func TestSlotMetrics(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	reader := sdkmetric.NewManualReader()
	sc := startClient(t, db, &Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	ctx := ctxT(t, time.Minute)

	// Every second, overlap skip, a run that never finishes: the first slot
	// starts it, the next ones are skipped for overlap.
	s, err := sc.Create(ctx, &Params{Name: "m", Workflow: "stuck", Cron: "* * * * * *", Overlap: OverlapSkip})
	require.NoError(t, err)
	waitCount(t, db, 30*time.Second, 1, "SELECT count(*) FROM workflow_runs WHERE schedule_id = $1 AND skip_reason = 'overlap'", s.ID)

	// A pass records its metrics once it ends, a moment after its batch
	// committed the skipped slot.
	collect := func() (map[string]int64, uint64) {
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(ctx, &rm))
		slots := map[string]int64{}
		var delays uint64
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch data := m.Data.(type) {
				case metricdata.Sum[int64]:
					require.Equal(t, "tributary.schedule.slots", m.Name)
					for _, p := range data.DataPoints {
						decision, _ := p.Attributes.Value("decision")
						reason, _ := p.Attributes.Value("reason")
						slots[decision.AsString()+"/"+reason.AsString()] += p.Value
					}
				case metricdata.Histogram[float64]:
					require.Equal(t, "tributary.schedule.fire_delay", m.Name)
					for _, p := range data.DataPoints {
						delays += p.Count
					}
				}
			}
		}
		return slots, delays
	}
	slots, delays := collect()
	for slots["skipped/overlap"] < 1 {
		select {
		case <-ctx.Done():
			t.Fatalf("no overlap skip counted: %v", slots)
		case <-time.After(50 * time.Millisecond): // as waitCount
		}
		slots, delays = collect()
	}
	require.Equal(t, int64(1), slots["started/"], "the first slot started the run: %v", slots)
	require.GreaterOrEqual(t, slots["skipped/overlap"], int64(1), "%v", slots)
	require.Equal(t, uint64(1), delays, "one fire delay per started slot")
}
