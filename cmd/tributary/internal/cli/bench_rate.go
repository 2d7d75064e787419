package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/bench"
)

// newBenchRateCommand is `tributary bench rate`, a subcommand of
// `tributary bench`.
func newBenchRateCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "rate",
		Short: "Measure how closely one tenant's starts keep to a tenant rate shared by several clients",
		Long: `Defines a workflow whose one step records when it began, under a tenant rate of --rate a
		second (DefineOpts.TenantRate), and starts --rate x --duration x 1.2 runs of one tenant up front
		(in transactions of 100, four at once), enough to keep the rate busy throughout. Then it starts
		--clients working clients, each with a pool of its own and a default queue of --workers
		workers, lets them work for --duration from the first step's start, and stops them; the runs
		left stay queued. The figures come from the steps' own start times in the window from the first
		start to the first start plus --duration: the starts per second over the window, the most and
		the fewest starts in a one-second window (one beginning at each start, ending inside the
		window), the starts of each whole second from the first start, the seconds over the limit
		(those whole seconds with more than --rate plus 10 % starts) and each client's starts. The
		targets of the default shape (50 a second over 30 s across 3 clients of 20 workers): starts
		per second within 10 % of --rate, and never more than --rate plus 10 % (55) in any one-second
		window. It runs on a schema of its own (tributary_bench_<random>), created, migrated and
		dropped afterwards, also when it fails or is interrupted. Without a database URL it starts a
		throw-away Postgres cluster from the local binaries and removes it on exit. Progress goes to
		stderr, the results to stdout; --json prints one object whose starts_per_second,
		max_in_any_second, min_in_any_second, seconds_over_limit, per_second and per_client are the
		figures above, and starts_per_second_ok and max_ok the verdicts.`,
		Example: `tributary bench rate
		tributary bench rate --json
		tributary bench rate --rate 20 --duration 10s --clients 2 --workers 5`,
	}, setupBenchRate)
}

func setupBenchRate(fs *pflag.FlagSet, env *Env) Action {
	url := benchDatabaseFlag(fs, env)
	rate := fs.Int("rate", bench.DefaultRate, "the tenant rate: this `number` of starts a second (default 50)")
	duration := fs.Duration("duration", bench.DefaultDuration, "how long the clients work, from the first start; at least 1s (default 30s)")
	clients := fs.Int("clients", bench.DefaultClients, "`number` of working clients sharing the rate, each with a pool of its own (default 3)")
	workers := fs.Int("workers", bench.DefaultWorkers, "`number` of workers of the default queue of each client (default 20)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if err := atLeastOne(
			countFlag{"rate", *rate, bench.DefaultRate},
			countFlag{"clients", *clients, bench.DefaultClients},
			countFlag{"workers", *workers, bench.DefaultWorkers},
		); err != nil {
			return err
		}
		if *duration < time.Second {
			return usageErrorf("--duration is %s; give a duration of at least 1s, such as 30s", *duration)
		}
		config := &bench.RateConfig{Rate: *rate, Duration: *duration, Clients: *clients, Workers: *workers, Logger: env.Logger}
		return runBenchOn(ctx, env, url.Get(), "bench rate", *asJSON, func(pool *pgxpool.Pool) (*bench.RateResult, error) {
			return bench.RunRate(ctx, pool, config, env.Stderr)
		}, printBenchRateTable)
	}
}

// printBenchRateTable prints a line saying what ran, the figures against
// their targets, and the starts of each second and of each client.
func printBenchRateTable(w io.Writer, res *bench.RateResult) error {
	fmt.Fprintf(w, "PostgreSQL %s, a rate of %d a second for one tenant over %s, %d clients of %d workers, %s runs started up front\n\n",
		res.Server, res.Rate, seconds(res.Duration), res.Clients, res.Workers, bench.FormatCount(float64(res.Backlog)))

	limit := bench.RateCeiling(res.Rate)
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(table, "Starts:\t%s\n", bench.FormatCount(float64(res.Starts)))
	fmt.Fprintf(table, "Starts per second:\t%.1f\t(target %d ± %d %%)\t%s\n", res.StartsPerSecond, res.Rate, bench.RateTolerance, verdict(res.StartsPerSecondOK))
	fmt.Fprintf(table, "Most in any second:\t%d\t(target ≤ %g)\t%s\n", res.MaxInAnySecond, limit, verdict(res.MaxOK))
	fmt.Fprintf(table, "Fewest in any second:\t%d\n", res.MinInAnySecond)
	fmt.Fprintf(table, "Whole seconds over %g:\t%d\t(of %d)\n", limit, res.SecondsOverLimit, len(res.PerSecond))
	fmt.Fprintf(table, "Starts of each second:\t%s\n", strings.Trim(fmt.Sprint(res.PerSecond), "[]"))
	fmt.Fprintf(table, "Starts of each client:\t%s\n", strings.Trim(fmt.Sprint(res.PerClient), "[]"))
	return table.Flush()
}
