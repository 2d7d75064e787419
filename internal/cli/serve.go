package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/migrations"
	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

func init() {
	Register(&Command{
		Name:    "serve",
		Summary: "Serve River UI, the dashboard and the JSON API, and run the schedule reconciler and River maintenance",
		Example: `tributary serve
			TRIBUTARY_TOKEN=s3cret tributary serve --addr 0.0.0.0:8080 --queues default=20,reports=5`,
		Setup: setupServe,
	})
}

const (
	// serveReadHeaderTimeout bounds reading a request's headers.
	serveReadHeaderTimeout = 10 * time.Second
)

func setupServe(fs *flag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	addr := fs.String("addr", "", "`address` to listen on (default $TRIBUTARY_ADDR, else 127.0.0.1:8080)")
	token := fs.String("token", "", "bearer `token` every request must carry (default $TRIBUTARY_TOKEN, else none)")
	queues := fs.String("queues", "default=20", "River `queues` to work, as name=workers[,name=workers]; only jobs of known kinds (schedule firing, run repair) are fetched")
	shutdownTimeout := fs.Duration("shutdown-timeout", 30*time.Second, "on SIGINT or SIGTERM, wait this `duration` for requests and jobs in progress")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if *addr == "" {
			*addr = env.Getenv("TRIBUTARY_ADDR")
		}
		if *addr == "" {
			*addr = "127.0.0.1:8080"
		}
		if *token == "" {
			*token = env.Getenv("TRIBUTARY_TOKEN")
		}
		queueConfig, err := parseQueues(*queues)
		if err != nil {
			return err
		}
		return runServe(ctx, env, dbFlags, *addr, *token, queueConfig, *shutdownTimeout)
	}
}

// parseQueues parses --queues: "default=20,reports=5".
func parseQueues(s string) (map[string]river.QueueConfig, error) {
	const hint = "pass --queues like default=20 or default=20,reports=5"
	queues := map[string]river.QueueConfig{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, n, ok := strings.Cut(part, "=")
		workers, err := strconv.Atoi(strings.TrimSpace(n))
		name = strings.TrimSpace(name)
		if !ok || name == "" || err != nil || workers < 1 || workers > 10_000 {
			return nil, withHint(usageErrorf("--queues: %q is not name=workers with 1 to 10000 workers", part), hint)
		}
		if _, dup := queues[name]; dup {
			return nil, withHint(usageErrorf("--queues: queue %q is listed twice", name), hint)
		}
		queues[name] = river.QueueConfig{MaxWorkers: workers}
	}
	if len(queues) == 0 {
		return nil, withHint(usageErrorf("--queues is empty: serve needs a queue to run the schedule reconciler and River maintenance"), hint)
	}
	return queues, nil
}

func runServe(ctx context.Context, env *Env, dbFlags *databaseFlags, addr, token string, queues map[string]river.QueueConfig, shutdownTimeout time.Duration) error {
	pool, schema, err := dbFlags.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()

	if err := checkMigrated(ctx, env, pool, schema); err != nil {
		return err
	}

	sc := schedule.New(&schedule.Config{Logger: env.Logger})
	wf, err := workflow.NewClient(pool, &workflow.Config{
		Extensions: []workflow.Extension{sc},
		Logger:     env.Logger,
		River: &river.Config{
			// This process has no workflow code: it must leave the runs'
			// jobs to the services that have it.
			FetchOnlyKnownKinds: true,
			Queues:              queues,
		},
		Schema: schema,
	})
	if err != nil {
		return withHint(err, "fix --schema, TRIBUTARY_SCHEMA or --queues")
	}

	handler, err := riverui.New(wf, sc, &riverui.Config{Token: token, Logger: env.Logger})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return withHint(fmt.Errorf("listening on %s: %w", addr, err), "pick a free address with --addr or TRIBUTARY_ADDR")
	}
	defer ln.Close() // Serve closes it too; this covers the early returns

	if err := wf.Start(ctx); err != nil {
		return withHint(err, "check the database URL and --schema")
	}
	stopClient := func() error {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		return wf.Stop(stopCtx)
	}

	uiCtx, stopUI := context.WithCancel(context.WithoutCancel(ctx))
	defer stopUI()
	if err := handler.Start(uiCtx); err != nil {
		_ = stopClient()
		return err
	}

	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: serveReadHeaderTimeout,
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	base := "http://" + ln.Addr().String()
	fmt.Fprintf(env.Stdout, "Dashboard: %s/\nRiver UI:  %s/riverui/\nAPI:       %s/api/runs, %s/api/schedules\n", base, base, base, base)
	if token == "" && !isLoopback(ln.Addr()) {
		fmt.Fprintf(env.Stderr, "tributary: warning: serving on %s without a token; anyone who reaches it can cancel runs and pause schedules. Set --token or TRIBUTARY_TOKEN\n", ln.Addr())
	}

	var result error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		result = fmt.Errorf("serving HTTP: %w", err)
	}

	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && result == nil {
		result = fmt.Errorf("shutting down the HTTP server: %w", err)
	}
	stopUI()
	if err := stopClient(); err != nil && result == nil {
		result = withHint(fmt.Errorf("stopping the River client: %w", err), "jobs in progress were left to River's rescuer")
	}
	if result == nil {
		fmt.Fprintln(env.Stdout, "Stopped.")
	}
	return result
}

// checkMigrated fails unless River's and Tributary's migrations are all
// applied.
func checkMigrated(ctx context.Context, env *Env, pool *pgxpool.Pool, schema string) error {
	migrator, err := migrations.New(pool, &migrations.Config{Logger: env.Logger, Schema: schema})
	if err != nil {
		return withHint(err, "fix --schema or TRIBUTARY_SCHEMA")
	}
	status, err := migrator.Status(ctx)
	if err != nil {
		return withHint(fmt.Errorf("reading migration status: %w", err), "check --schema or TRIBUTARY_SCHEMA, and run 'tributary migrate up'")
	}
	var missing []string
	if status.RiverVersion < status.RiverLatest {
		missing = append(missing, fmt.Sprintf("River is at version %d of %d", status.RiverVersion, status.RiverLatest))
	}
	for _, v := range status.Versions {
		if !v.Applied {
			missing = append(missing, fmt.Sprintf("%03d_%s is not applied", v.Version, v.Name))
		}
	}
	if len(missing) > 0 {
		return withHint(errors.New("the database is not migrated: "+strings.Join(missing, ", ")), "run 'tributary migrate up' first")
	}
	return nil
}

func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
