package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/bench"
	"github.com/tributary-go/tributary/tributaryotel"
	"github.com/tributary-go/tributary/workflow"
)

func newBenchCommand(env *Env) *cobra.Command {
	return group(command(env, &cobra.Command{
		Use:   "bench",
		Short: "Measure workflow runs against raw River jobs on your database, as items per second and ratios",
		Long: `Runs four cases, in this order: River jobs with a no-op worker; workflow runs of 0 steps;
			River jobs whose worker commits 3 checkpoints (an INSERT each, in its own transaction);
			workflow runs of 3 steps. Each case inserts its items first, then starts one River queue of
			--workers workers (fetch cooldown 2ms, poll interval 20ms) and times until River reports
			every item's job completed, and checks that the database holds every item and step as
			completed. The time includes the client's start-up, a fixed cost that a small --items
			magnifies: keep the default or more for figures worth comparing. It then prints items per
			second for each case and two ratios: workflow 0 steps / River, and workflow 3 steps / River
			with 3 checkpoints. With --rounds above 1 the four cases run that many times interleaved,
			every other round in reverse order, and each case shows its mean and its min–max. --keyed adds four cases after them: the two
			workflow cases with a tenant on every run, all of one tenant with no limit, then spread over
			1,000 tenants under a tenant limit that none reaches, and their ratios to the same workflows
			without a tenant. --starts adds the four cases again with their items inserted or started
			while the clock runs, one a call from --callers callers at once (as an application's
			requests start runs), and their ratios. Each case runs on a schema of its own
			(tributary_bench_<random>), created, migrated and dropped afterwards, also when the case
			fails or is interrupted: your own tables are never read or written. Without a database URL
			it starts a throw-away Postgres cluster from the local binaries and removes it on exit.
			Progress goes to stderr, the results to stdout. 'tributary bench schedules' measures how late
			schedule slots start instead.`,
		Example: `tributary bench
			tributary bench --database-url postgres://localhost:5432/app --items 20000 --rounds 3
			tributary bench --items 2000 --json
			tributary bench --starts --items 20000
			tributary bench schedules --due 1000`,
	}, setupBench), newBenchSchedulesCommand(env), newBenchRetentionCommand(env), newBenchSoakCommand(env), newBenchFairnessCommand(env),
		newBenchRateCommand(env), newBenchStartsCommand(env))
}

func setupBench(fs *pflag.FlagSet, env *Env) Action {
	url := benchDatabaseFlag(fs, env)
	items := fs.Int("items", bench.DefaultItems, "`number` of River jobs or workflow runs per case, all inserted before the clock starts (default 5000)")
	rounds := fs.Int("rounds", bench.DefaultRounds, "run the four cases this `number` of times, interleaved, and report each case's mean and min–max (default 1)")
	workers := fs.Int("workers", bench.DefaultWorkers, "`number` of workers of the one River queue of every case (default 20)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	keyed := fs.Bool("keyed", false, "add the workflow cases with a tenant on every run (one tenant, no limit; 1,000 tenants under a limit never reached) and their ratios to the same workflows without a tenant")
	starts := fs.Bool("starts", false, "add the four cases with their items inserted (River) or started (workflows) while the clock runs, one a call from --callers callers at once, and the ratios of the workflow cases to the River cases among them")
	callers := fs.Int("callers", bench.DefaultCallers, "`number` of callers inserting or starting the items of the --starts cases at once (default 20)")
	withOtel := fs.Bool("otel", false, "install the OpenTelemetry middleware (tributaryotel) on the workflow cases' clients, on the global providers: no-ops here, so it measures what the plugin costs an application that has not set OpenTelemetry up")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		config, err := benchConfig(env, *items, *rounds, *workers)
		if err != nil {
			return err
		}
		config.Keyed = *keyed
		if err := atLeastOne(countFlag{"callers", *callers, bench.DefaultCallers}); err != nil {
			return err
		}
		config.Starts, config.Callers = *starts, *callers
		if *withOtel {
			config.Middleware = []workflow.Middleware{tributaryotel.NewMiddleware(nil)}
		}
		return runBenchOn(ctx, env, url.Get(), "bench", *asJSON, func(pool *pgxpool.Pool) (*bench.Result, error) {
			return bench.Run(ctx, pool, config, env.Stderr)
		}, printBenchTable)
	}
}

// benchDatabaseFlag is the --database-url of every bench command.
func benchDatabaseFlag(fs *pflag.FlagSet, env *Env) *envFlag {
	return envString(fs, env, "database-url", "DATABASE_URL", "",
		"Postgres connection `URL`; the bench works only in schemas it creates and drops", "a throw-away cluster from the local Postgres binaries")
}

// benchConfig validates the flags: each count must be at least 1.
func benchConfig(env *Env, items, rounds, workers int) (*bench.Config, error) {
	if err := atLeastOne(
		countFlag{"items", items, bench.DefaultItems},
		countFlag{"rounds", rounds, bench.DefaultRounds},
		countFlag{"workers", workers, bench.DefaultWorkers},
	); err != nil {
		return nil, err
	}
	return &bench.Config{Items: items, Logger: env.Logger, Rounds: rounds, Workers: workers}, nil
}

// runBenchOn runs a bench (command name) on a pool to the database at url,
// or to a throw-away cluster when url is empty, which it removes afterwards,
// and prints its result: as JSON, or with printTable.
func runBenchOn[R any](ctx context.Context, env *Env, url, name string, asJSON bool,
	run func(*pgxpool.Pool) (R, error), printTable func(io.Writer, R) error) (result error) {
	if url == "" {
		cluster, err := startThrowawayPostgres(ctx, env.Stderr)
		if err != nil {
			return err
		}
		defer func() { result = errors.Join(result, removeThrowawayPostgres(ctx, cluster, env.Stderr)) }()
		url = cluster.URL
	}
	pool, err := connect(ctx, url, "")
	if err != nil {
		return err
	}
	defer pool.Close()

	res, err := run(pool)
	switch {
	case err != nil && ctx.Err() != nil:
		return withHint(fmt.Errorf("bench interrupted: %w", err), "") // deliberate: nothing to advise
	case err != nil:
		return fmt.Errorf("%s: %w", name, err)
	case asJSON:
		return printJSON(env.Stdout, res)
	default:
		return printTable(env.Stdout, res)
	}
}

// printBenchTable prints a line saying what ran, a row per case and the
// ratios. With several rounds, rates are means followed by min–max.
func printBenchTable(w io.Writer, res *bench.Result) error {
	rounds := "1 round"
	if res.Rounds > 1 {
		rounds = fmt.Sprintf("%d rounds", res.Rounds)
	}
	fmt.Fprintf(w, "PostgreSQL %s, %s items a case, %d workers, %s\n\n", res.Server, bench.FormatCount(float64(res.Items)), res.Workers, rounds)
	return printBenchCases(w, res)
}

// printBenchCases prints a bench's cases, a row each, then its ratios.
func printBenchCases(w io.Writer, res *bench.Result) error {
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if res.Rounds > 1 {
		fmt.Fprintln(table, "CASE\tITEMS/S (MEAN)\tMIN–MAX")
	} else {
		fmt.Fprintln(table, "CASE\tITEMS/S")
	}
	for _, c := range res.Cases {
		fmt.Fprintf(table, "%s\t%s", c.Name, bench.FormatCount(c.Mean))
		if res.Rounds > 1 {
			fmt.Fprintf(table, "\t%s–%s", bench.FormatCount(c.Min), bench.FormatCount(c.Max))
		}
		fmt.Fprintln(table)
	}
	fmt.Fprintln(table)
	for _, r := range res.Ratios {
		printRatio(table, res.Rounds, r.Name, r.Value, r.Min, r.Max)
	}
	return table.Flush()
}

// printRatio prints a bench's ratio row: its value, and with several rounds
// its range by round.
func printRatio(table io.Writer, rounds int, name string, value, lo, hi float64) {
	fmt.Fprintf(table, "%s:\t%.2f", name, value)
	if rounds > 1 {
		fmt.Fprintf(table, "\t(%.2f–%.2f by round)", lo, hi)
	}
	fmt.Fprintln(table)
}
