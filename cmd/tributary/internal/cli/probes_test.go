package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestServeProbes(t *testing.T) {
	t.Parallel()

	// With a token, the probes answer without it; everything else wants it.
	_, vars := migratedDB(t)
	vars["TRIBUTARY_TOKEN"] = "s3cret"
	serve := startCLI(t, vars, regexp.MustCompile(`Dashboard: (http://127\.0\.0\.1:\d+)/\n`), "--log-level", "info", "serve", "--addr", "127.0.0.1:0", "--queues", "default=2")
	base := serve.Paused(t)[1]
	serve.Resume()

	status, body := httpGet(t, base+"/healthz", "")
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"status": "ok"}`, body)

	status, body = httpGet(t, base+"/readyz", "")
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"status": "ready"}`, body)

	status, _ = httpGet(t, base+"/api/runs", "")
	require.Equal(t, http.StatusUnauthorized, status)

	// /metrics answers without the token, in Prometheus's text format.
	status, body = httpGet(t, base+"/metrics", "")
	require.Equal(t, http.StatusOK, status, body)
	for _, want := range []string{
		`tributary_runs_active{otel_scope_name="github.com/tributary-go/tributary"`,
		`tributary_schedules{`,
		`tributary_workers_live{`,
		`tributary_river_jobs{`,
		`tributary_runs_oldest_pending_age_seconds{`,
	} {
		require.Contains(t, body, want)
	}
	require.Regexp(t, `(?m)^tributary_workers_live\{[^}]*\} 1$`, body, "serve itself is a live working client")

	// A slot fired by serve shows in the schedule metrics.
	res := runCLI(t, vars, "schedule", "create", "--name", "m", "--cron", "* * * * * *", "--workflow", "metered")
	require.Equal(t, ExitOK, res.code, res.stderr)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(body, `tributary_schedule_slots_total{decision="started"`) {
		require.True(t, time.Now().Before(deadline), "no slot counted on /metrics within 30s:\n%s", body)
		<-time.After(100 * time.Millisecond) // polls the endpoint, as a scraper would, until the deadline
		status, body = httpGet(t, base+"/metrics", "")
		require.Equal(t, http.StatusOK, status, body)
	}
	require.Contains(t, body, "tributary_schedule_fire_delay_seconds_bucket{")
	require.Regexp(t, `(?m)^tributary_runs_started_total\{[^}]*trigger="schedule",workflow="metered"\} [1-9]`, body, "the slot's run, started by serve")
	require.Contains(t, serve.stderr.String(), "tributary: Fired schedule slot", "serve logs each slot it fires")

	// A run cancelled through the API finishes in serve: its metrics show.
	status, body = httpGet(t, base+"/api/runs?type=metered&status=pending", "Bearer s3cret")
	require.Equal(t, http.StatusOK, status, body)
	var page struct {
		Runs []struct {
			ID string `json:"id"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.NotEmpty(t, page.Runs, body)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/api/runs/"+page.Runs[0].ID+"/cancel", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	status, body = httpGet(t, base+"/metrics", "")
	require.Equal(t, http.StatusOK, status, body)
	require.Regexp(t, `(?m)^tributary_runs_finished_total\{[^}]*outcome="cancelled"[^}]*workflow="metered"\} 1$`, body)
	require.Contains(t, body, "tributary_runs_duration_seconds_bucket{")

	// Every metric the Grafana dashboard queries is one that /metrics has,
	// but those the services report (TestGrafanaMetricsScraped).
	for _, name := range dashboardMetrics(t) {
		if !slices.Contains(serviceMetrics, name) {
			require.Contains(t, body, "\n"+name+"{", "the dashboard queries %s, which /metrics does not serve", name)
		}
	}

	require.Equal(t, ExitOK, serve.Stop(t), serve.stderr.String())
}

func TestReadiness(t *testing.T) {
	t.Parallel()

	probe := func(t *testing.T, pool *pgxpool.Pool, schema string) (int, string) {
		t.Helper()
		rec := httptest.NewRecorder()
		ready := &readiness{env: testEnv(nil, nil, nil), pool: pool, schema: schema}
		withProbes(http.NotFoundHandler(), ready, nil).ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), http.MethodGet, "/readyz", nil))
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		return rec.Code, rec.Body.String()
	}

	t.Run("Migrated", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		status, body := probe(t, db.Pool, db.Schema)
		require.Equal(t, http.StatusOK, status, body)
		require.JSONEq(t, `{"status": "ready"}`, body)
	})

	t.Run("NotMigrated", func(t *testing.T) {
		t.Parallel()

		db := testdb.NewEmpty(t)
		status, body := probe(t, db.Pool, db.Schema)
		require.Equal(t, http.StatusServiceUnavailable, status, body)
		require.Regexp(t, `^\{"status":"unavailable","reason":"the database is not migrated: River is at version 0 of \d+, 001_workflows is not applied, .*; run 'tributary migrate up' first"\}\n$`, body)
	})

	t.Run("DatabaseDown", func(t *testing.T) {
		t.Parallel()

		// A pool whose server is gone: the answer says so, without the
		// connection error's details (user, host), which go to the log.
		pool, err := pgxpool.New(context.Background(), "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=1")
		require.NoError(t, err)
		defer pool.Close()
		status, body := probe(t, pool, "")
		require.Equal(t, http.StatusServiceUnavailable, status, body)
		require.JSONEq(t, `{"status": "unavailable", "reason": "the database does not answer; see serve's log for the error, and check that Postgres is running"}`, body)
	})

	t.Run("OnlyGet", func(t *testing.T) {
		t.Parallel()

		// Other methods go to the UI's handler, which knows no such route.
		rec := httptest.NewRecorder()
		withProbes(http.NotFoundHandler(), nil, nil).ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/healthz", nil))
		require.Equal(t, http.StatusNotFound, rec.Code)
	})
}
