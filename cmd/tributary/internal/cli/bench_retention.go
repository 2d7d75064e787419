package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/bench"
)

// newBenchRetentionCommand is `tributary bench retention`, a subcommand of
// `tributary bench`.
func newBenchRetentionCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "retention",
		Short: "Measure what deleting old runs costs the workflows that run meanwhile",
		Long: `Each phase seeds --old runs finished 40 days ago (past the default retention of a week),
		with a step each, then works --items workflow runs of 3 steps on one client with a default queue
		of --workers workers. In the phase with retention, a client of its own deletes the old runs in a
		loop (workflow.Client.DeleteExpiredRuns, the pass of the retention job, in statements of 5,000
		runs) while the runs are worked; in the phase without, nothing deletes. It prints each phase's
		runs per second (and, with retention, the old runs deleted and how fast), and the ratio of the
		median rate with retention to the median without: 1 means it costs nothing. With --rounds above
		1 the phases run that many times, their order alternating. Each phase runs on a schema of its own
		(tributary_bench_<random>), created, migrated and dropped afterwards. Without a database URL it
		starts a throw-away Postgres cluster from the local binaries and removes it on exit. Progress
		goes to stderr, the results to stdout.`,
		Example: `tributary bench retention
		tributary bench retention --old 100000 --items 2000 --rounds 3`,
	}, setupBenchRetention)
}

func setupBenchRetention(fs *pflag.FlagSet, env *Env) Action {
	url := benchDatabaseFlag(fs, env)
	old := fs.Int("old", bench.DefaultOldRuns, "`number` of old finished runs each phase seeds (default 1000000)")
	items := fs.Int("items", bench.DefaultItems, "`number` of 3-step workflow runs each phase works (default 5000)")
	rounds := fs.Int("rounds", bench.DefaultRounds, "run both phases this `number` of times, their order alternating (default 1)")
	workers := fs.Int("workers", bench.DefaultWorkers, "`number` of workers of the working client's default queue (default 20)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if err := atLeastOne(
			countFlag{"old", *old, bench.DefaultOldRuns},
			countFlag{"items", *items, bench.DefaultItems},
			countFlag{"rounds", *rounds, bench.DefaultRounds},
			countFlag{"workers", *workers, bench.DefaultWorkers},
		); err != nil {
			return err
		}
		config := &bench.RetentionConfig{OldRuns: *old, Items: *items, Logger: env.Logger, Rounds: *rounds, Workers: *workers}
		return runBenchOn(ctx, env, url.Get(), "bench retention", *asJSON, func(pool *pgxpool.Pool) (*bench.RetentionResult, error) {
			return bench.RunRetention(ctx, pool, config, env.Stderr)
		}, printBenchRetentionTable)
	}
}

// printBenchRetentionTable prints a row per phase and the ratio.
func printBenchRetentionTable(w io.Writer, res *bench.RetentionResult) error {
	c := res.Config
	fmt.Fprintf(w, "%s old runs per phase, %s 3-step runs, %d workers, %d rounds\n\n",
		bench.FormatCount(float64(c.OldRuns)), bench.FormatCount(float64(c.Items)), c.Workers, c.Rounds)
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "PHASE\tRUNS/S\tOLD RUNS DELETED\tDELETED/S")
	for _, r := range res.Rounds {
		if r.Retention {
			fmt.Fprintf(table, "with retention\t%s\t%s\t%s\n", bench.FormatCount(r.Rate), bench.FormatCount(float64(r.Deleted)), bench.FormatCount(r.DeleteRate))
		} else {
			fmt.Fprintf(table, "without\t%s\t-\t-\n", bench.FormatCount(r.Rate))
		}
	}
	fmt.Fprintf(table, "\nmedian with / median without\t%.2f×\t(%s / %s runs/s)\n", res.Ratio, bench.FormatCount(res.With), bench.FormatCount(res.Without))
	return table.Flush()
}
