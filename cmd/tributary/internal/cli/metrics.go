package cli

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/tributary-go/tributary/tributaryotel"
	"github.com/tributary-go/tributary/workflow"
)

// serveMetrics are serve's OpenTelemetry metrics, served at GET /metrics in
// Prometheus's text format through the OpenTelemetry Prometheus exporter,
// on a registry of its own (no Go runtime or process metrics of the
// Prometheus client). Like the probes, /metrics answers without the bearer
// token: it tells counts by state, never a run, a schedule or an input.
type serveMetrics struct {
	// Provider is the MeterProvider to give the schedule client (slot
	// counts and fire delays) and the gauges.
	Provider metric.MeterProvider
	// Handler serves /metrics.
	Handler http.Handler
}

func newServeMetrics() (*serveMetrics, error) {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		return nil, err
	}
	return &serveMetrics{
		Provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter)),
		Handler:  promhttp.HandlerFor(registry, promhttp.HandlerOpts{}),
	}, nil
}

// registerGauges adds the database gauges of package tributaryotel for
// wf's database; stop unregisters them.
func (m *serveMetrics) registerGauges(wf *workflow.Client) (stop func(), err error) {
	reg, err := tributaryotel.RegisterGauges(wf, &tributaryotel.Config{MeterProvider: m.Provider})
	if err != nil {
		return nil, err
	}
	return func() { _ = reg.Unregister() }, nil
}
