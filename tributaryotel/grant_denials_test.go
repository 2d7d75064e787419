package tributaryotel_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// TestGrantDenials fires a slot of a schedule whose execution grant was
// revoked: the slot is skipped, counted by tributary.schedule.grant.denials
// with the reason, and its decision span says so.
func TestGrantDenials(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	// Each firing pass's job reports here once it has returned, its
	// metrics recorded.
	passes := make(chan struct{}, 1)
	firePasses := river.WorkerMiddlewareFunc(func(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
		err := doInner(ctx)
		if job.Kind == "tributary:schedule_fire" {
			select {
			case passes <- struct{}{}:
			default: // the test has a wake-up pending already
			}
		}
		return err
	})

	report := workflow.Define("otel_report", func(ctx workflow.Context, _ struct{}) (int, error) { return 1, nil }, nil)
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Logger: discard,
		River: &river.Config{
			Logger:     discard,
			Middleware: []rivertype.Middleware{firePasses},
			Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
			TestOnly:   true,
		},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{report},
	})
	require.NoError(t, err)
	sc, err := schedule.New(wf, &schedule.Config{Logger: discard, MeterProvider: mp, TracerProvider: tp})
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctx))
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })

	grant, err := sc.CreateGrant(ctx, &schedule.GrantParams{Subject: "user-7", Scopes: []string{schedule.ScopeExecute("otel_report")}})
	require.NoError(t, err)
	s, err := sc.Create(ctx, &schedule.Params{Name: "granted", Workflow: "otel_report", Cron: "* * * * * *", GrantID: &grant.ID})
	require.NoError(t, err)
	_, err = sc.RevokeGrant(ctx, grant.ID, "left the company")
	require.NoError(t, err)

	for {
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(ctx, &rm))
		if value(t, rm, "tributary.schedule.grant.denials", "reason", schedule.SkipReasonGrantRevoked) >= 1 {
			require.GreaterOrEqual(t, value(t, rm, "tributary.schedule.slots", "decision", "skipped", "reason", schedule.SkipReasonGrantRevoked), 1.0)
			break
		}
		select {
		case <-passes:
		case <-ctx.Done():
			t.Fatal("no grant denial counted")
		}
	}
	_, err = sc.Pause(ctx, schedule.ByID(s.ID), "")
	require.NoError(t, err)

	slots := spansNamed(recorder.Ended(), schedule.SpanSlot, "tributary.slot.reason", schedule.SkipReasonGrantRevoked)
	require.NotEmpty(t, slots)
	require.Equal(t, "skipped", attr(slots[0], "tributary.slot.decision"))
	require.Equal(t, s.ID.String(), attr(slots[0], "tributary.schedule.id"))
}
