package cli

import (
	"context"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/tributaryotel"
	"github.com/tributary-go/tributary/workflow"
)

// serviceMetrics are the metrics of the Grafana dashboard that tributary
// serve does not serve from the start: the services that run workflow code
// report them (through the tributaryotel middleware), grant denials appear
// with the first denial, and held runs with the first held run.
// TestGrafanaMetricsScraped sees them all.
var serviceMetrics = []string{
	"tributary_workflow_step_executions_total",
	"tributary_workflow_step_replays_total",
	"tributary_workflow_step_duration_seconds_bucket",
	"tributary_workflow_timer_lateness_seconds_bucket",
	"tributary_workflow_attempt_wait_seconds_bucket",
	"tributary_schedule_grant_denials_total",
	"tributary_runs_held",
}

// dashboardMetrics are the metric names the Grafana dashboard queries.
func dashboardMetrics(t *testing.T) []string {
	t.Helper()
	dashboard, err := os.ReadFile("../../../../grafana/tributary.json")
	require.NoError(t, err)
	names := regexp.MustCompile(`tributary_[a-z_]+`).FindAllString(string(dashboard), -1)
	require.NotEmpty(t, names)
	slices.Sort(names)
	return slices.Compact(names)
}

// TestGrafanaMetricsScraped runs what a service does, with the
// tributaryotel middleware and a schedule client on serve's Prometheus
// exporter: a workflow with a step and a short sleep, replayed after it,
// a schedule whose grant is revoked, and a tenant's second run held back
// by its rate. Every metric the Grafana dashboard
// queries must then be in the scrape, under the name the dashboard uses.
func TestGrafanaMetricsScraped(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, _ := migratedDB(t)
	metrics, err := newServeMetrics()
	require.NoError(t, err)

	napper := workflow.Define("grafana_napper", func(ctx workflow.Context, _ struct{}) (int, error) {
		n, err := workflow.Step(ctx, "count", func(context.Context) (int, error) { return 1, nil })
		if err != nil {
			return 0, err
		}
		if err := workflow.Sleep(ctx, "nap", 10*time.Millisecond); err != nil {
			return 0, err
		}
		return n, nil
	}, nil)
	// One attempt an hour for each tenant: a tenant's second run waits for
	// its rate, held back.
	rated := workflow.Define("grafana_rated", func(workflow.Context, struct{}) (int, error) { return 1, nil },
		&workflow.DefineOpts{TenantRate: workflow.Rate{Limit: 1, Per: time.Hour}})
	var sc *schedule.Client
	wf := startWorkingClient(ctx, t, db, &workflow.Config{
		Middleware: []workflow.Middleware{tributaryotel.NewMiddleware(&tributaryotel.MiddlewareConfig{MeterProvider: metrics.Provider})},
		Workflows:  []workflow.Registrable{napper, rated},
	}, func(wf *workflow.Client) (err error) {
		sc, err = schedule.New(wf, &schedule.Config{MeterProvider: metrics.Provider})
		return err
	})
	stop, err := metrics.registerGauges(wf)
	require.NoError(t, err)
	defer stop()

	h, err := napper.Start(ctx, wf, struct{}{}, nil)
	require.NoError(t, err)
	_, err = h.Result(ctx)
	require.NoError(t, err)

	for range 2 {
		_, err = rated.Start(ctx, wf, struct{}{}, &workflow.StartOpts{Tenant: "acme"})
		require.NoError(t, err)
	}

	grant, err := sc.CreateGrant(ctx, &schedule.GrantParams{Subject: "bot", Scopes: []string{schedule.ScopeExecute("grafana_napper")}})
	require.NoError(t, err)
	s, err := sc.Create(ctx, &schedule.Params{Name: "denied", Workflow: "grafana_napper", Cron: "* * * * * *", GrantID: &grant.ID})
	require.NoError(t, err)
	_, err = sc.RevokeGrant(ctx, grant.ID, "test")
	require.NoError(t, err)
	_, err = sc.Create(ctx, &schedule.Params{Name: "fires", Workflow: "grafana_napper", Cron: "* * * * * *"}) // fire delays
	require.NoError(t, err)

	scrape := func() string {
		rec := httptest.NewRecorder()
		metrics.Handler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	// The denial is recorded when the slot's batch commits: wait for the
	// skipped slot's run, then for its metrics (recorded when the pass
	// ends), on the schedule's own history.
	events, unsubscribe := wf.River().Subscribe(river.EventKindJobCompleted)
	defer unsubscribe()
	for body := scrape(); !strings.Contains(body, "\ntributary_schedule_grant_denials_total{") ||
		!strings.Contains(body, "\ntributary_schedule_fire_delay_seconds_bucket{") ||
		!strings.Contains(body, "\ntributary_runs_held{"); body = scrape() {
		select {
		case <-events:
		case <-ctx.Done():
			runs, _ := sc.History(context.Background(), schedule.ByID(s.ID), nil)
			t.Fatalf("no grant denial, fire delay or held run was recorded within 60s; the denied schedule's runs: %v", runs)
		}
	}

	body := scrape()
	for _, name := range dashboardMetrics(t) {
		require.Contains(t, body, "\n"+name+"{", "the dashboard queries %s, which a service with the middleware does not export", name)
	}
}
