package cli

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/tributary-go/tributary/tributaryotel"
	"github.com/tributary-go/tributary/workflow"
)

// metricsHandler serves serve's GET /metrics: Tributary's OpenTelemetry
// metrics (package tributaryotel) in Prometheus's text format, through the
// OpenTelemetry Prometheus exporter, on a registry of its own (no Go
// runtime or process metrics of the Prometheus client). Like the probes,
// it answers without the bearer token: it tells counts by state, never a
// run, a schedule or an input. stop unregisters the gauges.
func metricsHandler(wf *workflow.Client) (handler http.Handler, stop func(), err error) {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		return nil, nil, err
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	reg, err := tributaryotel.RegisterGauges(wf, &tributaryotel.Config{MeterProvider: provider})
	if err != nil {
		return nil, nil, err
	}
	return promhttp.HandlerFor(registry, promhttp.HandlerOpts{}), func() { _ = reg.Unregister() }, nil
}
