package tributaryotel_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/riverqueue/river"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/tributaryotel"
	"github.com/tributary-go/tributary/workflow"
)

// Example_middleware installs the OpenTelemetry middleware on a workflow
// client, here with in-memory exporters, and shows the spans of a run's
// start and of its steps, and its step metrics. In a service, pass your
// providers (or nil for the global ones), and install River's otelriver
// beside it.
func Example_middleware() {
	ctx := context.Background()
	db, cleanup := testdb.ForExample()
	defer cleanup()

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	checkout := workflow.Define("checkout", func(ctx workflow.Context, orderID int) (string, error) {
		charge, err := workflow.Step(ctx, "charge", func(context.Context) (string, error) { return fmt.Sprintf("ch_%d", orderID), nil })
		if err != nil {
			return "", err
		}
		return workflow.Step(ctx, "ship", func(context.Context) (string, error) { return "shipped, paid with " + charge, nil })
	}, nil)

	client, err := workflow.NewClient(db.Pool, &workflow.Config{
		Middleware: []workflow.Middleware{tributaryotel.NewMiddleware(&tributaryotel.MiddlewareConfig{TracerProvider: tp, MeterProvider: mp})},
		River:      &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}}},
		Schema:     db.Schema,
		Workflows:  []workflow.Registrable{checkout},
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx) //nolint:errcheck

	handle, err := checkout.Start(ctx, client, 42, nil)
	if err != nil {
		panic(err)
	}
	if _, err := handle.Result(ctx); err != nil {
		panic(err)
	}

	// The start's and the steps' spans have ended by now; the attempt's
	// ends a moment after the run's completion is queued.
	var names []string
	for _, s := range spans.GetSpans() {
		for _, kv := range s.Attributes {
			if kv.Key == tributaryotel.AttrStepName {
				names = append(names, s.Name+" "+kv.Value.AsString())
			}
		}
		if s.Name == tributaryotel.SpanStart {
			names = append(names, s.Name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Println(name)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "tributary.workflow.step.executions" {
				var total int64
				for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
					total += p.Value
				}
				fmt.Println(m.Name, total)
			}
		}
	}

	// Output:
	// tributary.workflow.start
	// tributary.workflow.step charge
	// tributary.workflow.step ship
	// tributary.workflow.step.executions 2
}
