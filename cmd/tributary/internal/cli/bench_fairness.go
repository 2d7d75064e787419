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

// newBenchFairnessCommand is `tributary bench fairness`, a subcommand of
// `tributary bench`.
func newBenchFairnessCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "fairness",
		Short: "Measure how long a small tenant's runs wait behind a big tenant's backlog, with fair turns and without keys",
		Long: `Runs one working client, with a default queue of --workers workers, and one workflow whose one
		step sleeps --step (as I/O would). Key A starts --big runs at once (in transactions of 100, four at
		once), and --delay after it began key B starts --small runs, each with Start (the table shows how
		many of A's were started by then); the case waits until every run finished and checks that each
		completed. It runs this twice: first with no tenant on either
		group (River's order, oldest first: each of B's runs waits behind the A runs started before it),
		then with the tenants A and B, which working clients fetch in fair turns (each tenant with ready
		runs gets its oldest before any gets a second). With --limit above 0 a third case runs the keyed
		one under a tenant limit of --limit (DefineOpts.TenantLimit), and the bench counts, from the
		start and end times its steps record, the moments more than --limit runs of one key were inside
		their step at once. A run's latency is its finished_at minus its created_at; A's makespan its last
		finished_at minus its first created_at, both read from the database. It prints B's latency
		(p50, p99, max) and A's makespan for each case, and the targets of the default shape (5,000 runs
		of A, 10 of B a second later, 100 ms steps, 20 workers): B's p99 within 2 s with keys, and A's
		makespan with keys not more than 10 % over its makespan without. Each case runs on a schema of
		its own (tributary_bench_<random>), created, migrated and dropped afterwards, also when it fails
		or is interrupted. Without a database URL it starts a throw-away Postgres cluster from the local
		binaries and removes it on exit. With --rounds above 1 the cases run that many times, interleaved,
		and the figures are the worst round's (the highest p99 and slowdown, the violations added up),
		each round's shown too. Progress goes to stderr, the results to stdout; --json prints one object
		whose small_key_p99_s, big_key_slowdown and limit_violations are the figures above.`,
		Example: `tributary bench fairness
		tributary bench fairness --limit 10 --json
		tributary bench fairness --limit 5 --rounds 3
		tributary bench fairness --big 1000 --small 5 --step 50ms --workers 10`,
	}, setupBenchFairness)
}

func setupBenchFairness(fs *pflag.FlagSet, env *Env) Action {
	url := benchDatabaseFlag(fs, env)
	big := fs.Int("big", bench.DefaultFairnessBig, "`number` of runs key A starts at once (default 5000)")
	small := fs.Int("small", bench.DefaultFairnessSmall, "`number` of runs key B starts --delay later (default 10)")
	delay := fs.Duration("delay", bench.DefaultFairnessDelay, "how long after A began starting its runs B starts its own (default 1s)")
	step := fs.Duration("step", bench.DefaultFairnessStep, "how long each run's one step sleeps (default 100ms)")
	workers := fs.Int("workers", bench.DefaultWorkers, "`number` of workers of the default queue of the one working client (default 20)")
	rounds := fs.Int("rounds", bench.DefaultRounds, "run the cases this `number` of times, interleaved, and judge the worst round (default 1)")
	limit := fs.Int("limit", 0, "add a case with a tenant limit of this `number` and count the moments it was exceeded (default 0: none)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if err := atLeastOne(
			countFlag{"big", *big, bench.DefaultFairnessBig},
			countFlag{"small", *small, bench.DefaultFairnessSmall},
			countFlag{"workers", *workers, bench.DefaultWorkers},
			countFlag{"rounds", *rounds, bench.DefaultRounds},
		); err != nil {
			return err
		}
		if *limit < 0 {
			return withHint(usageErrorf("--limit must be at least 0, not %d", *limit), "leave it out for no limit")
		}
		if err := positive("100ms", durationFlag{"delay", *delay}, durationFlag{"step", *step}); err != nil {
			return err
		}
		config := &bench.FairnessConfig{Big: *big, Small: *small, Delay: *delay, Step: *step, Workers: *workers,
			Limit: *limit, Rounds: *rounds, Logger: env.Logger}
		return runBenchOn(ctx, env, url.Get(), "bench fairness", *asJSON, func(pool *pgxpool.Pool) (*bench.FairnessResult, error) {
			return bench.RunFairness(ctx, pool, config, env.Stderr)
		}, printBenchFairnessTable)
	}
}

// printBenchFairnessTable prints a line saying what ran, a row per case and
// the figures against their targets.
func printBenchFairnessTable(w io.Writer, res *bench.FairnessResult) error {
	rounds := "1 round"
	if res.Rounds > 1 {
		rounds = fmt.Sprintf("%d rounds, each figure the worst round's", res.Rounds)
	}
	fmt.Fprintf(w, "PostgreSQL %s, %s runs of key A, %s of key B %s later, %s steps, %d workers, %s\n\n", res.Server,
		bench.FormatCount(float64(res.Big)), bench.FormatCount(float64(res.Small)), seconds(res.Delay), seconds(res.Step), res.Workers, rounds)

	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "CASE\tA BEFORE B\tB P50\tB P99\tB MAX\tA MAKESPAN\tA IN STEP (MAX)\tLIMIT VIOLATIONS")
	for _, c := range res.Cases {
		violations := "-"
		if c.Key == bench.KeyFairnessLimited {
			violations = fmt.Sprint(c.LimitViolations)
		}
		name := c.Name
		if res.Rounds > 1 {
			name = fmt.Sprintf("%s, round %d", c.Name, c.Round)
		}
		fmt.Fprintf(table, "%s\t%s\t%.2f s\t%.2f s\t%.2f s\t%.1f s\t%d\t%s\n", name, bench.FormatCount(float64(c.BigKeyBefore)),
			c.SmallKey.P50, c.SmallKey.P99, c.SmallKey.Max, c.BigKeyMakespan, c.BigKeyMaxInStep, violations)
	}
	fmt.Fprintln(table)
	fmt.Fprintf(table, "B p99 with keys:\t%.2f s\t(%.2f s without; target ≤ %s)\t%s\n", res.SmallKeyP99, res.SmallKeyP99Unkeyed,
		bench.FairnessSmallTarget, verdict(res.SmallKeyOK))
	fmt.Fprintf(table, "A makespan with keys / without:\t%.2f\t(target ≤ %.2f)\t%s\n", res.BigKeySlowdown, bench.FairnessSlowdownTarget,
		verdict(res.BigKeyOK))
	if res.Rounds > 1 {
		fmt.Fprintf(table, "By round:\tB p99 %s s; A slowdown %s\n", joinFloats(res.SmallKeyP99s), joinFloats(res.BigKeySlowdowns))
	}
	if res.Limit > 0 {
		fmt.Fprintf(table, "Limit violations:\t%d\t(limit %d; target 0)\t%s\n", res.LimitViolations, res.Limit, verdict(res.LimitViolations == 0))
	}
	return table.Flush()
}

// joinFloats formats figures to two places, comma-separated.
func joinFloats(figures []float64) string {
	parts := make([]string, len(figures))
	for i, f := range figures {
		parts[i] = fmt.Sprintf("%.2f", f)
	}
	return strings.Join(parts, ", ")
}

// seconds formats a number of seconds as a duration: "1s", "100ms".
func seconds(s float64) string { return time.Duration(s * float64(time.Second)).String() }

// verdict is "ok" or "MISSED".
func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}
