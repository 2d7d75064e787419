package riverui

import (
	"context"
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

	// Token, when set, is required on every request but the login page's:
	// as "Authorization: Bearer <token>", as the password of HTTP Basic
	// authentication (any user name), or through the session cookie that
	// the login page sets. See the package documentation.
	//
	// Defaults to "": no authentication. Bind to a loopback address then.
	Token string

	// Logger receives River UI's logs and the internal errors of the API
	// and the dashboard.
	//
	// Defaults to a logger that discards everything.
	Logger *slog.Logger
}

// Handler is the http.Handler that serves River UI, the JSON API and the
// dashboard. Call Start before serving so River UI's background services
// run.
type Handler struct {
	auth    *authenticator
	handler http.Handler
	logger  *slog.Logger
	openAPI []byte
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
	if strings.ContainsAny(prefix, "{} \t\n?#%\\") {
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
	if h.openAPI, err = openAPIFor(prefix); err != nil {
		return nil, fmt.Errorf("riverui: read the embedded OpenAPI document: %w", err)
	}
	h.auth = newAuthenticator(config.Token, prefix)

	mux := http.NewServeMux()
	mux.Handle(prefix+"/riverui/", ui)
	mux.Handle("GET "+prefix+"/riverui", http.RedirectHandler(prefix+"/riverui/", http.StatusMovedPermanently))
	if prefix != "" {
		mux.Handle("GET "+prefix, http.RedirectHandler(prefix+"/", http.StatusMovedPermanently))
	}
	h.mountAPI(mux)
	h.mountDashboard(mux)

	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		const msg = "cross-site request refused; send state-changing requests from the same origin or with the bearer token"
		if wantsHTML(r) {
			h.errorPage(w, r, http.StatusForbidden, msg)
			return
		}
		writeError(w, http.StatusForbidden, msg)
	}))
	h.handler = h.auth.protect(csrf, mux, h.loginRedirect)
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
