// Package riverui serves Tributary's operator surface over HTTP: River UI
// (riverqueue.com/riverui) for River's jobs and queues, a JSON API for
// workflow runs and schedules, and a small dashboard, side by side under one
// path prefix.
//
//	h, err := riverui.New(wf, schedules, &riverui.Config{Token: os.Getenv("TRIBUTARY_TOKEN")})
//	if err != nil { … }
//	if err := h.Start(ctx); err != nil { … } // River UI's background services
//	http.ListenAndServe("127.0.0.1:8080", h)
//
// Routes, under Config.Prefix:
//
//	GET    /                             dashboard (HTML)
//	GET    /riverui/                     River UI
//	GET    /api/runs                     ?type=&status=&schedule=&limit=&after=
//	GET    /api/runs/{id}                a run with its steps
//	POST   /api/runs/{id}/cancel
//	POST   /api/runs/{id}/retry
//	POST   /api/runs/{id}/signal         {"name": "...", "payload": ...}
//	GET    /api/schedules                ?owner=&workflow=&paused=&limit=&after=
//	GET    /api/schedules/{id}           a schedule and its next 10 fire times
//	POST   /api/schedules/{id}/pause     optional {"note": "..."}
//	POST   /api/schedules/{id}/resume    optional {"missed": "skip|latest|backfill"}
//	POST   /api/schedules/{id}/trigger   optional {"input": ..., "overlap": "..."}
//	DELETE /api/schedules/{id}
//	GET    /api/schedules/{id}/history   ?status=&limit=&after=
//
// Errors are JSON objects {"error": "..."}: 400 for bad input, 401 without
// the token, 403 for a cross-site state-changing request, 404 for an unknown
// run or schedule, 409 for a run that is finished or cannot be retried, 500
// otherwise.
//
// Security: when Config.Token is set, every request (River UI's too) must
// carry "Authorization: Bearer <token>". State-changing requests (POST,
// DELETE) coming from a browser must be same-origin (Sec-Fetch-Site, else
// Origin against Host) unless they carry the bearer token.
package riverui

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5"
	upstream "riverqueue.com/riverui"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// Config configures a Handler.
type Config struct {
	// Prefix is the path under which everything is mounted, such as "/ops".
	//
	// Defaults to "", the root.
	Prefix string

	// Token, when set, is required as "Authorization: Bearer <token>" on
	// every request.
	//
	// Defaults to "": no authentication. Bind to a loopback address then.
	Token string

	// Logger receives River UI's logs and the API's internal errors.
	//
	// Defaults to a logger that discards everything.
	Logger *slog.Logger
}

// Handler is the http.Handler that serves River UI, the JSON API and the
// dashboard. Call Start before serving so River UI's background services
// run.
type Handler struct {
	handler http.Handler
	logger  *slog.Logger
	prefix  string
	sc      *schedule.Client
	ui      *upstream.Handler
	wf      *workflow.Client
}

// New builds the Handler. wf is required; sc may be nil, in which case the
// schedule routes answer 404.
func New(wf *workflow.Client, sc *schedule.Client, config *Config) (*Handler, error) {
	if wf == nil {
		return nil, errors.New("riverui: workflow client is nil; pass the *workflow.Client of your application")
	}
	if config == nil {
		config = &Config{}
	}
	logger := config.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	prefix := upstream.NormalizePathPrefix(config.Prefix)
	if strings.ContainsAny(prefix, "{} \t\n?#") {
		return nil, fmt.Errorf("riverui: Config.Prefix %q contains a character not allowed in a path prefix; use a plain path like /ops", config.Prefix)
	}

	ui, err := upstream.NewHandler(&upstream.HandlerOpts{
		Endpoints: upstream.NewEndpoints[pgx.Tx](wf.River(), nil),
		Logger:    logger,
		Prefix:    prefix + "/riverui",
	})
	if err != nil {
		return nil, fmt.Errorf("riverui: build River UI: %w", err)
	}

	h := &Handler{logger: logger, prefix: prefix, sc: sc, ui: ui, wf: wf}

	mux := http.NewServeMux()
	mux.Handle(prefix+"/riverui/", ui)
	if prefix != "" {
		mux.Handle("GET "+prefix+"/{$}", http.HandlerFunc(h.dashboard))
		mux.Handle("GET "+prefix, http.RedirectHandler(prefix+"/", http.StatusMovedPermanently))
	} else {
		mux.Handle("GET /{$}", http.HandlerFunc(h.dashboard))
	}
	mux.Handle("GET "+prefix+"/riverui", http.RedirectHandler(prefix+"/riverui/", http.StatusMovedPermanently))
	h.mountAPI(mux)

	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusForbidden, "cross-site request refused; send state-changing requests from the same origin or with the bearer token")
	}))
	h.handler = protect(config.Token, csrf, mux)
	return h, nil
}

// Start starts River UI's background services (its query caches). They
// stop when ctx is done.
func (h *Handler) Start(ctx context.Context) error {
	if err := h.ui.Start(ctx); err != nil {
		return fmt.Errorf("riverui: start River UI: %w", err)
	}
	return nil
}

// ServeHTTP serves a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.handler.ServeHTTP(w, r)
}

// protect wraps next with the bearer token check (when token is set) and
// the cross-origin check of state-changing requests, which a request
// carrying the valid bearer token skips: a browser never adds that header
// to a cross-site request on its own.
func protect(token string, csrf *http.CrossOriginProtection, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, hasBearer := bearer(r)
		authorized := hasBearer && token != "" && subtle.ConstantTimeCompare([]byte(got), want) == 1
		if token != "" && !authorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tributary"`)
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token; send Authorization: Bearer <token>")
			return
		}
		if authorized {
			next.ServeHTTP(w, r)
			return
		}
		csrf.Handler(next).ServeHTTP(w, r)
	})
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}
