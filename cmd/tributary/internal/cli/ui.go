package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

const (
	// defaultAddr is where serve and demo listen by default: loopback
	// only, so that an unprotected UI is not on the network.
	defaultAddr = "127.0.0.1:8080"

	// uiReadHeaderTimeout bounds reading a request's headers.
	uiReadHeaderTimeout = 10 * time.Second
)

// uiFlags are the flags of the commands that serve River UI, the dashboard
// and the JSON API: --addr and --token, defaulting to TRIBUTARY_ADDR and
// TRIBUTARY_TOKEN.
type uiFlags struct {
	addr  *envFlag
	token *envFlag
}

func addUIFlags(fs *pflag.FlagSet, env *Env) *uiFlags {
	return &uiFlags{
		addr:  envString(fs, env, "addr", "TRIBUTARY_ADDR", defaultAddr, "`address` to serve the UI and API on", defaultAddr),
		token: envString(fs, env, "token", "TRIBUTARY_TOKEN", "", "bearer `token` every request must carry", "none"),
	}
}

// listen listens on addr. When the address is in use and fallback is set,
// it says so on env.Stderr and listens on a free port of the same host
// instead.
func listen(env *Env, addr string, fallback bool) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return nil, withHint(usageErrorf("--addr %q is not a host:port address", addr), "pass an address like 127.0.0.1:8080, or :8080 for every interface")
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return nil, withHint(usageErrorf("--addr %q: %q is not a port", addr, port), "pass an address like 127.0.0.1:8080, with a port from 0 (any free one) to 65535")
	}

	ln, err := net.Listen("tcp", addr)
	if fallback && errors.Is(err, syscall.EADDRINUSE) {
		if ln, err = net.Listen("tcp", net.JoinHostPort(host, "0")); err == nil {
			fmt.Fprintf(env.Stderr, "tributary: %s is in use (another tributary serve or demo?); serving on %s instead\n", addr, ln.Addr())
		}
	}
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, withHint(fmt.Errorf("listening on %s: the address is in use", addr), "stop what listens there, or pick a free address with --addr or TRIBUTARY_ADDR")
	case err != nil:
		return nil, withHint(fmt.Errorf("listening on %s: %w", addr, err), "pick another address with --addr or TRIBUTARY_ADDR, such as 127.0.0.1:8080")
	}
	return ln, nil
}

// uiServer serves River UI, the dashboard and the JSON API (package
// riverui) over HTTP, for serve and demo.
type uiServer struct {
	// Base is the server's URL without a trailing slash, such as
	// "http://127.0.0.1:8080".
	Base string

	failed  chan error
	server  *http.Server
	stopUI  func()
	token   string
	metrics bool // it serves /metrics and the probes
}

// startUI serves the UI for wf and sc on ln, which it closes on shutdown,
// and, when ready is not nil, /healthz and /readyz beside it (withProbes).
// It warns on env.Stderr when it serves beyond loopback without a token.
func startUI(ctx context.Context, env *Env, ln net.Listener, wf *workflow.Client, sc *schedule.Client, token string, ready *readiness, metrics *serveMetrics) (*uiServer, error) {
	ui, err := riverui.New(wf, sc, &riverui.Config{Token: token, Logger: env.Logger})
	if err != nil {
		return nil, err
	}
	var (
		handler     http.Handler = ui
		stopMetrics              = func() {}
	)
	if ready != nil {
		var metricsHandler http.Handler
		if metrics != nil {
			stop, err := metrics.registerGauges(wf)
			if err != nil {
				return nil, fmt.Errorf("set up /metrics: %w", err)
			}
			metricsHandler, stopMetrics = metrics.Handler, stop
		}
		handler = withProbes(ui, ready, metricsHandler)
	}
	uiCtx, cancelUI := context.WithCancel(context.WithoutCancel(ctx))
	stopUI := func() {
		cancelUI()
		stopMetrics()
	}
	if err := ui.Start(uiCtx); err != nil {
		stopUI()
		return nil, err
	}

	s := &uiServer{
		Base:    "http://" + displayAddr(ln.Addr()),
		failed:  make(chan error, 1),
		server:  &http.Server{Handler: handler, ReadHeaderTimeout: uiReadHeaderTimeout},
		stopUI:  stopUI,
		token:   token,
		metrics: metrics != nil && ready != nil,
	}
	go func() {
		if err := s.server.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.failed <- fmt.Errorf("serving HTTP: %w", err)
		}
	}()

	if tcp, ok := ln.Addr().(*net.TCPAddr); token == "" && (!ok || !tcp.IP.IsLoopback()) {
		fmt.Fprintf(env.Stderr, "tributary: warning: serving on %s without a token; anyone who reaches it can cancel runs and pause schedules. Set --token or TRIBUTARY_TOKEN\n", ln.Addr())
	}
	return s, nil
}

// displayAddr is where a browser on this machine reaches addr: localhost
// for a server listening on every interface.
func displayAddr(addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		return net.JoinHostPort("localhost", fmt.Sprint(tcp.Port))
	}
	return addr.String()
}

// Failed reports the error that stopped the server, if it stops by itself.
func (s *uiServer) Failed() <-chan error { return s.failed }

// PrintURLs prints where the dashboard, River UI and the API are.
func (s *uiServer) PrintURLs(w io.Writer) {
	fmt.Fprintf(w, "Dashboard: %s/\nRiver UI:  %s/riverui/\nAPI:       %s/api/runs, %s/api/schedules\n", s.Base, s.Base, s.Base, s.Base)
	if s.metrics {
		fmt.Fprintf(w, "Metrics:   %s/metrics (Prometheus); health: %s/healthz, %s/readyz\n", s.Base, s.Base, s.Base)
	}
}

// RunPage is the URL of a run's page on the dashboard when the handler
// has one, else of the run's JSON in the API.
func (s *uiServer) RunPage(ctx context.Context, id uuid.UUID) string {
	page := fmt.Sprintf("%s/runs/%s", s.Base, id)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, page, nil)
	if err == nil {
		if s.token != "" {
			req.Header.Set("Authorization", "Bearer "+s.token)
		}
		probe := &statusProbe{header: http.Header{}}
		s.server.Handler.ServeHTTP(probe, req)
		if probe.status == http.StatusOK {
			return page
		}
	}
	return fmt.Sprintf("%s/api/runs/%s", s.Base, id)
}

// statusProbe is an http.ResponseWriter that keeps only the status.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header { return p.header }

func (p *statusProbe) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return len(b), nil
}

func (p *statusProbe) WriteHeader(status int) {
	if p.status == 0 {
		p.status = status
	}
}

// Shutdown stops accepting requests, waits for those in progress until ctx
// ends, and stops River UI's background services.
func (s *uiServer) Shutdown(ctx context.Context) error {
	defer s.stopUI()
	if err := s.server.Shutdown(ctx); err != nil {
		return fmt.Errorf("shutting down the HTTP server: %w", err)
	}
	return nil
}
