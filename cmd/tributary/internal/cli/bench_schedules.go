package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/bench"
)

// newBenchSchedulesCommand is `tributary bench schedules`, a subcommand
// of `tributary bench`.
func newBenchSchedulesCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "schedules",
		Short: "Measure how late runs start when many schedule slots fall due in the same second, beside River's periodic jobs",
		Long: `Creates --due schedules whose first slot is the same second, a few seconds ahead, through a
		client that works nothing; then starts one working client, before the slot, with a default queue
		of --workers workers. Each slot starts a run of a workflow that does nothing. A slot's lag is its
		run's start (the attempted_at of the River job that runs the workflow function) minus the slot.
		Then River alone does the same: one River client with --due periodic jobs due at the same second,
		each inserting a job of a no-op worker, started a few seconds ahead so that it is elected leader
		(only the leader enqueues periodic jobs); a job's lag is its attempted_at minus the slot. Both
		clients fetch with Tributary's defaults (cooldown 2ms, poll interval 1s), and both lags are read
		from the database, on its clock. It prints each case's p50, p95 and p99 lag, the maximum, slots
		per second (--due over the maximum lag: the rate at which due slots got started), and the ratio
		of Tributary's p99 to River's. With --cold, a second Tributary case starts its working client only
		after the slot: the lag of the first slot after a start-up. With --ran-before, the schedules
		carry the status of a run that completed before, as a day's schedules do after their first
		day. A case fails when a slot is skipped or its run does not complete, or when nothing
		finishes for a minute. With --rounds above 1 the cases
		run that many times interleaved (every other round in reverse order), and each case's lags are
		pooled over its rounds. Each case runs on a schema of its own (tributary_bench_<random>),
		created, migrated and dropped afterwards, also when it fails or is interrupted. Without a
		database URL it starts a throw-away Postgres cluster from the local binaries and removes it on
		exit. Progress goes to stderr, the results to stdout.`,
		Example: `tributary bench schedules
		tributary bench schedules --due 1000 --cold
		tributary bench schedules --database-url postgres://localhost:5432/app --due 20000 --rounds 3 --json`,
	}, setupBenchSchedules)
}

func setupBenchSchedules(fs *pflag.FlagSet, env *Env) Action {
	url := benchDatabaseFlag(fs, env)
	due := fs.Int("due", bench.DefaultDue, "`number` of schedules (and River periodic jobs) due in the same second (default 10000)")
	owners := fs.Int("owners", 1, "`number` of owners the schedules are spread over; each schedule's runs carry its owner as their tenant, and tenants take turns for the workers (default 1)")
	cold := fs.Bool("cold", false, "also measure Tributary with its working client started only after the slot")
	ranBefore := fs.Bool("ran-before", false, "give the schedules the status of a run that completed before, as a day's schedules have after their first day (the runs' status trigger then leaves their rows as they are)")
	rounds := fs.Int("rounds", bench.DefaultRounds, "run the cases this `number` of times, interleaved, pooling each case's lags (default 1)")
	workers := fs.Int("workers", bench.DefaultWorkers, "`number` of workers of the default queue of every case's working client (default 20)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if err := atLeastOne(
			countFlag{"due", *due, bench.DefaultDue},
			countFlag{"owners", *owners, 1},
			countFlag{"rounds", *rounds, bench.DefaultRounds},
			countFlag{"workers", *workers, bench.DefaultWorkers},
		); err != nil {
			return err
		}
		config := &bench.SchedulesConfig{Cold: *cold, Due: *due, Owners: *owners, RanBefore: *ranBefore, Logger: env.Logger, Rounds: *rounds, Workers: *workers}
		return runBenchOn(ctx, env, url.Get(), "bench schedules", *asJSON, func(pool *pgxpool.Pool) (*bench.SchedulesResult, error) {
			return bench.RunSchedules(ctx, pool, config, env.Stderr)
		}, printBenchSchedulesTable)
	}
}

// countFlag is a flag that counts something, and its default.
type countFlag struct {
	name       string
	value, def int
}

// atLeastOne is a usage error naming the first flag below 1.
func atLeastOne(flags ...countFlag) error {
	for _, f := range flags {
		if f.value < 1 {
			return withHint(usageErrorf("--%s must be at least 1, not %d", f.name, f.value),
				fmt.Sprintf("leave it out for %d", f.def))
		}
	}
	return nil
}

// durationFlag is a flag that gives a duration.
type durationFlag struct {
	name  string
	value time.Duration
}

// positive is a usage error naming the first flag that is not a positive
// duration, with example as one that is ("5m").
func positive(example string, flags ...durationFlag) error {
	for _, f := range flags {
		if f.value <= 0 {
			return usageErrorf("--%s is %s; give a positive duration such as %s", f.name, f.value, example)
		}
	}
	return nil
}

// printBenchSchedulesTable prints a line saying what ran, a row per case and the
// ratios. With several rounds, lags are pooled over the rounds, slots per
// second are means, and ratios are followed by their min–max by round.
func printBenchSchedulesTable(w io.Writer, res *bench.SchedulesResult) error {
	rounds := "1 round"
	if res.Rounds > 1 {
		rounds = fmt.Sprintf("%d rounds, lags pooled", res.Rounds)
	}
	fmt.Fprintf(w, "PostgreSQL %s, %s slots due in the same second, %d workers, %s\n\n",
		res.Server, bench.FormatCount(float64(res.Due)), res.Workers, rounds)

	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "CASE\tN\tP50\tP95\tP99\tMAX\tSLOTS/S")
	for _, c := range res.Cases {
		fmt.Fprintf(table, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, bench.FormatCount(float64(res.Due)),
			bench.FormatMillis(c.Lag.P50), bench.FormatMillis(c.Lag.P95), bench.FormatMillis(c.Lag.P99),
			bench.FormatMillis(c.Lag.Max), bench.FormatCount(c.Rate))
	}
	fmt.Fprintln(table)
	for _, r := range res.Ratios {
		printRatio(table, res.Rounds, r.Name, r.Value, r.Min, r.Max)
	}
	return table.Flush()
}
