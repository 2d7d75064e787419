package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/tributaryotel"
	"github.com/tributary-go/tributary/workflow"
)

func newServeCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "serve",
		Short: "Serve River UI, the dashboard and the JSON API, and run the schedule reconciler and River maintenance",
		Long: `Checks that the database is migrated, then fires schedule slots, runs the schedule
			reconciler and River's maintenance (on the leader River elects among the processes
			serving one database), and serves the UI and the API. It works only jobs of kinds it has
			code for: workflow runs stay with the services that register their types. SIGINT or
			SIGTERM stops it gracefully: it finishes the requests and jobs in progress first.
			For load balancers and orchestrators it answers GET /healthz with 200 while the process
			serves, and GET /readyz with 200 when the database answers and is fully migrated, else
			503 with a JSON reason. Both answer without the --token: they reveal nothing but that.
			GET /metrics, also without the token, serves Tributary's OpenTelemetry metrics in
			Prometheus's text format: the gauges (runs, schedules, live workers and River jobs by
			state), the slots fired and skipped, the fire delay and grant denials, and the runs this
			process starts (slots) and finishes (repairs, cancellations through the API).
			Unless --log-level or --log-format is given, serve logs each slot fired or skipped at
			info and each run that failed, wherever it ran, at warn; River's own lines at warn.`,
		Example: `tributary serve
			TRIBUTARY_TOKEN=s3cret tributary serve --addr 0.0.0.0:8080 --queues default=20,reports=5`,
	}, setupServe)
}

func setupServe(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	ui := addUIFlags(fs, env)
	queues := fs.String("queues", "default=20", "River `queues` to work, as name=workers[,name=workers]; only jobs of known kinds (schedule firing, run repair) are fetched (default default=20)")
	shutdownTimeout := fs.Duration("shutdown-timeout", 30*time.Second, "on SIGINT or SIGTERM, wait this `duration` for requests and jobs in progress (default 30s)")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		queueConfig, err := parseQueues(*queues)
		if err != nil {
			return err
		}
		return runServe(ctx, env, dbFlags, ui, queueConfig, *shutdownTimeout)
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

func runServe(ctx context.Context, env *Env, dbFlags *databaseFlags, ui *uiFlags, queues map[string]river.QueueConfig, shutdownTimeout time.Duration) error {
	pool, schema, err := dbFlags.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()

	if err := checkMigrated(ctx, env, pool, schema); err != nil {
		return err
	}

	metrics, err := newServeMetrics()
	if err != nil {
		return fmt.Errorf("set up /metrics: %w", err)
	}
	// With the default logger, serve logs its own work at info (each slot
	// fired or skipped, each run that failed) and River's at warn: River's
	// info lines (producer job counts, maintenance passes) would drown them.
	logger, riverLogger := env.Logger, env.Logger
	if env.LogLevel != nil && env.LogLevel.Level() > slog.LevelInfo {
		riverLogger = slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: env.LogLevel.Level()}))
		env.LogLevel.Set(slog.LevelInfo)
	}
	wf, err := workflow.NewClient(pool, &workflow.Config{
		Logger: logger,
		// Runs started (slots fired), finished (repaired, cancelled through
		// the API) and the rest, on /metrics. Spans go to the global
		// tracer provider: a no-op, serve exports no traces.
		Middleware: []workflow.Middleware{tributaryotel.NewMiddleware(&tributaryotel.MiddlewareConfig{MeterProvider: metrics.Provider})},
		River: &river.Config{
			// This process has no workflow code: it must leave the runs'
			// jobs to the services that have it.
			FetchOnlyKnownKinds: true,
			Logger:              riverLogger,
			Queues:              queues,
		},
		Schema: schema,
	})
	if err != nil {
		return withHint(err, "fix --schema, TRIBUTARY_SCHEMA or --queues")
	}
	sc, err := schedule.New(wf, &schedule.Config{Logger: logger, MeterProvider: metrics.Provider})
	if err != nil {
		return err
	}

	ln, err := listen(env, ui.addr.Get(), false)
	if err != nil {
		return err
	}
	defer ln.Close() // the server closes it too; this covers the early returns

	// River stops at once, cancelling the jobs in progress, when the context
	// it started with ends: give it one that doesn't, and stop it gracefully
	// with Stop.
	if err := wf.Start(context.WithoutCancel(ctx)); err != nil {
		return withHint(err, "check the database URL and --schema")
	}
	server, err := startUI(ctx, env, ln, wf, sc, ui.token.Get(), &readiness{env: env, pool: pool, schema: schema}, metrics)
	if err != nil {
		_ = stopWithin(ctx, shutdownTimeout, wf.Stop)
		return err
	}
	server.PrintURLs(env.Stdout)

	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchFailures(watchCtx, logger, wf, failureWatchInterval)
	}()
	defer func() {
		stopWatch()
		<-watched
	}()

	var result error
	select {
	case <-ctx.Done():
	case result = <-server.Failed():
	}
	return errors.Join(result, shutdown(ctx, env, shutdownTimeout, server, wf))
}

// shutdown stops the HTTP server and then the workflow client, each within
// timeout, and says "Stopped." when both stopped cleanly.
func shutdown(ctx context.Context, env *Env, timeout time.Duration, server *uiServer, wf *workflow.Client) error {
	var errs []error
	if err := stopWithin(ctx, timeout, server.Shutdown); err != nil {
		errs = append(errs, err)
	}
	if err := stopWithin(ctx, timeout, wf.Stop); err != nil {
		errs = append(errs, withHint(fmt.Errorf("stopping the River client: %w", err), "jobs in progress were left to River's rescuer"))
	}
	if len(errs) == 0 {
		fmt.Fprintln(env.Stdout, "Stopped.")
	}
	return errors.Join(errs...)
}

// stopWithin calls stop with a context that ends after timeout, and not
// when ctx (often done already: the signal to stop) ends.
func stopWithin(ctx context.Context, timeout time.Duration, stop func(context.Context) error) error {
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	return stop(stopCtx)
}

// checkMigrated fails unless River's and Tributary's migrations are all
// applied: with a *migrationError that names those that are not, or with
// the error of reading their status.
func checkMigrated(ctx context.Context, env *Env, pool *pgxpool.Pool, schema string) error {
	migrator, err := newMigrator(env, pool, schema)
	if err != nil {
		return err
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
		return withHint(&migrationError{missing: missing}, "run 'tributary migrate up' first")
	}
	return nil
}
