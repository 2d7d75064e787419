package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/bench"
)

// newBenchStartsCommand is `tributary bench starts`, a subcommand of
// `tributary bench`.
func newBenchStartsCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "starts",
		Short: "Measure how fast runs are started, beside River's inserts of jobs",
		Long: `Inserts --items River jobs from --callers callers at once, one Insert a call, then starts as
		many workflow runs (0 steps, no options) the same way, one Start a call, with no client working
		them; then the same with River's InsertMany and the workflow's StartMany, 100 items a call. It
		prints items per second for each case, and the ratios of Start's to Insert's and StartMany's
		to InsertMany's. With --rounds
		above 1 the cases run that many times, interleaved. Each case runs on a schema of its own
		(tributary_bench_<random>), created, migrated and dropped afterwards. Without a database URL it
		starts a throw-away Postgres cluster from the local binaries and removes it on exit. Progress
		goes to stderr, the results to stdout.`,
		Example: `tributary bench starts
		tributary bench starts --items 20000 --rounds 3`,
	}, setupBenchStarts)
}

func setupBenchStarts(fs *pflag.FlagSet, env *Env) Action {
	url := benchDatabaseFlag(fs, env)
	items := fs.Int("items", bench.DefaultItems, "`number` of jobs or runs each case inserts (default 5000)")
	rounds := fs.Int("rounds", bench.DefaultRounds, "run both cases this `number` of times, interleaved (default 1)")
	callers := fs.Int("callers", bench.DefaultCallers, "`number` of callers inserting or starting at once (default 20)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if err := atLeastOne(
			countFlag{"items", *items, bench.DefaultItems},
			countFlag{"rounds", *rounds, bench.DefaultRounds},
			countFlag{"callers", *callers, bench.DefaultCallers},
		); err != nil {
			return err
		}
		config := &bench.Config{Items: *items, Logger: env.Logger, Rounds: *rounds, Callers: *callers}
		return runBenchOn(ctx, env, url.Get(), "bench starts", *asJSON, func(pool *pgxpool.Pool) (*bench.Result, error) {
			return bench.RunStarts(ctx, pool, config, env.Stderr)
		}, printBenchStartsTable)
	}
}

// printBenchStartsTable prints the cases of bench starts and their ratio.
func printBenchStartsTable(w io.Writer, res *bench.Result) error {
	rounds := "1 round"
	if res.Rounds > 1 {
		rounds = fmt.Sprintf("%d rounds", res.Rounds)
	}
	fmt.Fprintf(w, "PostgreSQL %s, %s items a case, %d callers, %s\n\n", res.Server, bench.FormatCount(float64(res.Items)), res.Workers, rounds)
	return printBenchCases(w, res)
}
