package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/cmd/tributary/internal/demo"
)

func newDemoCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "demo",
		Short: "Run example workflows and schedules with the UI, on a throw-away Postgres when DATABASE_URL is unset",
		Long: `Starts a throw-away Postgres cluster from the local binaries when no database URL is
			given (and removes it on exit), migrates, starts example runs (three that complete, one
			that sleeps for 5 minutes, one that waits for a signal), creates three schedules (one
			fires every 10 seconds, one is paused), serves the UI and the API, prints their URLs, and
			then a line for each slot fired and each run started or finished, until Ctrl-C. On a
			database it ran on before, it reuses its schedules and runs.`,
		Example: `tributary demo
			DATABASE_URL=postgres://localhost:5432/scratch tributary demo --addr 127.0.0.1:9090
			tributary demo --once`,
	}, setupDemo)
}

// demoShutdownTimeout bounds stopping the demo's server and workers.
const demoShutdownTimeout = 10 * time.Second

func setupDemo(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	ui := addUIFlags(fs, env)
	once := fs.Bool("once", false, "set up, wait for one heartbeat slot to fire and run, then stop: for CI and tests")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up when setting up (and with --once, the heartbeat) takes longer than this `duration` (default 2m)")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		return runDemo(ctx, env, dbFlags, ui, *once, *timeout)
	}
}

// runDemo listens, opens the database (a throw-away cluster when no URL is
// given) and migrates it, starts the demo, serves the UI, then follows what
// happens until ctx ends or, with once, until a heartbeat ran.
func runDemo(ctx context.Context, env *Env, dbFlags *databaseFlags, ui *uiFlags, once bool, timeout time.Duration) (result error) {
	setupCtx, cancelSetup := context.WithTimeout(ctx, timeout)
	defer cancelSetup()

	// Listen first: a bad address fails before anything starts.
	ln, err := listen(env, ui.addr.Get(), true)
	if err != nil {
		return err
	}
	defer ln.Close() // the server closes it too; this covers the early returns

	url, schema := dbFlags.url.Get(), dbFlags.schema.Get()
	if url == "" {
		cluster, err := startThrowawayPostgres(setupCtx, env.Stdout)
		if err != nil {
			return err
		}
		defer func() { result = errors.Join(result, removeThrowawayPostgres(ctx, cluster, env.Stdout)) }()
		url = cluster.URL
	}
	pool, err := connect(setupCtx, url, schema)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := migrateUp(setupCtx, env, pool, schema); err != nil {
		return err
	}

	metrics, err := newServeMetrics()
	if err != nil {
		return fmt.Errorf("set up /metrics: %w", err)
	}
	d, err := demo.New(pool, &demo.Config{Logger: env.Logger, MeterProvider: metrics.Provider, Schema: schema})
	if err != nil {
		return err
	}
	if err := d.Start(setupCtx); err != nil {
		return withHint(fmt.Errorf("starting the demo: %w", err), "check the database URL and --schema")
	}
	server, err := startUI(ctx, env, ln, d.Workflows, d.Schedules, ui.token.Get(), &readiness{env: env, pool: pool, schema: schema}, metrics)
	if err != nil {
		_ = stopWithin(ctx, demoShutdownTimeout, d.Stop)
		return err
	}
	stop := func(result error) error {
		return errors.Join(result, shutdown(ctx, env, demoShutdownTimeout, server, d.Workflows))
	}

	scripted, err := d.Script(setupCtx, env.Stdout)
	if err != nil && ctx.Err() != nil {
		fmt.Fprintln(env.Stdout, "\nStopping…") // interrupted
		return stop(nil)
	}
	if err != nil {
		return stop(withHint(fmt.Errorf("demo: %w", err), "run it again with a longer --timeout if the machine is slow"))
	}
	printDemoURLs(setupCtx, env, server, scripted, url, schema, ui.token.Get() != "")

	if once {
		fmt.Fprintf(env.Stdout, "\n--once: waiting for the next heartbeat (%s)…\n", scripted.Heartbeat.Cron)
		follow := d.Follow(setupCtx, env.Stdout, d.HeartbeatRan)
		if follow != nil {
			follow = withHint(fmt.Errorf("demo: no heartbeat ran: %w", follow), "run it again with a longer --timeout if the machine is slow")
		}
		return stop(follow)
	}

	fmt.Fprintf(env.Stdout, "\nLive log: a line for each slot fired and each run started or finished. Ctrl-C to stop.\n")
	followCtx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	followed := make(chan error, 1)
	go func() { followed <- d.Follow(followCtx, env.Stdout, nil) }()

	select {
	case <-ctx.Done():
		fmt.Fprintln(env.Stdout, "\nStopping…")
	case result = <-server.Failed():
	case result = <-followed:
	}
	stopFollowing()
	if err := <-followed; result == nil && err != nil && !errors.Is(err, context.Canceled) {
		result = err
	}
	return stop(result)
}

// printDemoURLs prints where to look, and how to send the waiting run its
// signal from the CLI and over the API: commands that work as printed in
// another terminal, where neither the flags nor the environment of this
// one are. The CLI's names the database URL (url, with its password if it
// has one: the demo is a local playground) and the schema.
func printDemoURLs(ctx context.Context, env *Env, server *uiServer, scripted *demo.Scripted, url, schema string, withToken bool) {
	w := env.Stdout
	cliFlags := ""
	if schema != "" {
		cliFlags = " --schema " + shellQuote(schema)
	}
	waiting := scripted.Waiting
	fmt.Fprintln(w)
	server.PrintURLs(w)
	fmt.Fprintf(w, "Held runs (tenant %s, for about %s): %s/tenants, or DATABASE_URL=%s %s tenants%s\n",
		demo.ExportTenant, demo.ExportDuration*time.Duration(len(scripted.Exports)-1), server.Base, shellQuote(url), env.program(), cliFlags)
	fmt.Fprintf(w, "Waiting run: %s", server.RunPage(ctx, waiting.ID))
	if waiting.JobID != 0 {
		fmt.Fprintf(w, " (its River job: %s/riverui/jobs/%d)", server.Base, waiting.JobID)
	}
	fmt.Fprintln(w)

	auth, withTokenNote := "", ""
	if withToken {
		auth = ` -H "Authorization: Bearer $TRIBUTARY_TOKEN"`
		withTokenNote = ", with TRIBUTARY_TOKEN set to the demo's token"
	}
	fmt.Fprintf(w, "\nThe approval waits for its decision. Send it from another terminal:\n"+
		"  DATABASE_URL=%s %s workflow signal %s decision --payload '{\"approved\": true, \"by\": \"you\"}'%s\n"+
		"or over the API%s:\n"+
		"  curl -X POST%s %s/api/runs/%s/signal -d '{\"name\": \"decision\", \"payload\": {\"approved\": true, \"by\": \"you\"}}'\n",
		shellQuote(url), env.program(), waiting.ID, cliFlags, withTokenNote, auth, server.Base, waiting.ID)
}
