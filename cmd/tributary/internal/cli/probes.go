package cli

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// readyTimeout bounds the database checks of one /readyz request.
const readyTimeout = 5 * time.Second

// withProbes serves /healthz and /readyz (see healthz and readiness) on
// the paths of their own, and everything else with ui. The probes answer
// without the bearer token that ui may require, so that a load balancer or
// an orchestrator can call them: they tell only whether the process is up
// and the database ready, never a row, and a database error's details go
// to the log, not to the caller.
//
// metrics, when not nil, serves GET /metrics (see metricsHandler), also
// without the token.
func withProbes(ui http.Handler, ready *readiness, metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", ui)
	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("GET /readyz", ready)
	if metrics != nil {
		mux.Handle("GET /metrics", metrics)
	}
	return mux
}

// probeAnswer is the JSON body of /healthz and /readyz.
type probeAnswer struct {
	// Status is "ok" (/healthz), "ready" or "unavailable" (/readyz).
	Status string `json:"status"`

	// Reason says why /readyz is unavailable, and what to do.
	Reason string `json:"reason,omitempty"`
}

// healthz answers /healthz: 200 {"status": "ok"} while the process
// serves HTTP. It checks nothing else, so that an orchestrator restarts
// the process only when the process itself is stuck, not when the
// database is away (that is /readyz).
func healthz(w http.ResponseWriter, _ *http.Request) {
	writeProbe(w, http.StatusOK, probeAnswer{Status: "ok"})
}

// readiness answers /readyz: 200 {"status": "ready"} when the database
// answers and has every River and Tributary migration this binary knows
// applied, else 503 {"status": "unavailable", "reason": "…"}.
type readiness struct {
	env    *Env
	pool   *pgxpool.Pool
	schema string
}

func (r *readiness) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := context.WithTimeout(req.Context(), readyTimeout)
	defer cancel()

	if err := r.pool.Ping(ctx); err != nil {
		r.env.Logger.WarnContext(ctx, "tributary serve: /readyz: the database does not answer", "error", err)
		writeProbe(w, http.StatusServiceUnavailable, probeAnswer{Status: "unavailable",
			Reason: "the database does not answer; see serve's log for the error, and check that Postgres is running"})
		return
	}
	if err := checkMigrated(ctx, r.env, r.pool, r.schema); err != nil {
		var migration *migrationError
		if !errors.As(err, &migration) {
			r.env.Logger.WarnContext(ctx, "tributary serve: /readyz: reading the migration status failed", "error", err)
			err = errors.New("reading the migration status failed; see serve's log for the error")
		}
		writeProbe(w, http.StatusServiceUnavailable, probeAnswer{Status: "unavailable", Reason: err.Error()})
		return
	}
	writeProbe(w, http.StatusOK, probeAnswer{Status: "ready"})
}

// writeProbe writes a probe's answer, never cached.
func writeProbe(w http.ResponseWriter, status int, answer probeAnswer) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(answer)
}

// migrationError says which migrations the database lacks.
type migrationError struct{ missing []string }

func (e *migrationError) Error() string {
	return "the database is not migrated: " + strings.Join(e.missing, ", ")
}
