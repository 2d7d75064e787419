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

// newBenchSoakCommand is `tributary bench soak`, a subcommand of
// `tributary bench`.
func newBenchSoakCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "soak",
		Short: "Run a steady mixed load for a long time and sample memory, goroutines, throughput, lag and table sizes",
		Long: `Runs one working client, with a default queue of --workers workers, for --duration at a steady
		mixed load: --rate workflow runs a second, each a step, a one-second sleep, a wait for a signal
		(sent right after the start) and a step; and --schedules every-minute schedules across --owners
		owners. Finished runs and River's finished jobs are kept for --retention, and the retention runs
		every quarter of it, so that both delete while the load runs. Every --sample it prints the runs
		completed per second, the slots fired and how late their runs started (p50, p99), the client's
		live heap after a GC (its lowest and its highest since the sample before, read every 5 s: a leak
		raises the lowest, while the highest also holds what was in flight, such as a minute's slots
		being started) and goroutines, and the rows of workflow_runs, step_runs and river_job and their dead
		tuples. At the end it judges the curves from the end of the warm-up (a sixth of the run, while the
		retention window fills) to the end: the heap (its lowest), the goroutines and the tables' rows must not grow by
		more than 10 %, the throughput not move by more than 10 %, the slots' median lag not grow by more
		than 10 % and 100 ms, and the dead tuples stay bounded (autovacuum keeps up); it exits with status
		1 when one of these fails. It runs on a
		schema of its own (tributary_bench_<random>), created, migrated and dropped afterwards. Without a
		database URL it starts a throw-away Postgres cluster from the local binaries and removes it on
		exit. Progress goes to stderr, the results to stdout.`,
		Example: `tributary bench soak
		tributary bench soak --duration 5m --sample 30s --rate 50`,
	}, setupBenchSoak)
}

func setupBenchSoak(fs *pflag.FlagSet, env *Env) Action {
	url := benchDatabaseFlag(fs, env)
	duration := fs.Duration("duration", bench.DefaultSoakDuration, "how long the load runs (default 30m)")
	sample := fs.Duration("sample", bench.DefaultSoakSample, "how often to sample (default 1m)")
	rate := fs.Int("rate", bench.DefaultSoakRate, "workflow runs started per second (default 20)")
	schedules := fs.Int("schedules", bench.DefaultSoakSchedules, "every-minute schedules (default 1000)")
	owners := fs.Int("owners", bench.DefaultSoakOwners, "owners the schedules belong to (default 100)")
	retention := fs.Duration("retention", bench.DefaultSoakRetention, "how long finished runs and jobs are kept (default 3m)")
	workers := fs.Int("workers", bench.DefaultWorkers, "`number` of workers of the default queue (default 20)")
	profileDir := fs.String("heap-profiles", "", "a `directory` to write a heap profile to at each sample (compare two with go tool pprof -base)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if err := atLeastOne(
			countFlag{"rate", *rate, bench.DefaultSoakRate},
			countFlag{"schedules", *schedules, bench.DefaultSoakSchedules},
			countFlag{"owners", *owners, bench.DefaultSoakOwners},
			countFlag{"workers", *workers, bench.DefaultWorkers},
		); err != nil {
			return err
		}
		if err := positive("5m", durationFlag{"duration", *duration}, durationFlag{"sample", *sample}, durationFlag{"retention", *retention}); err != nil {
			return err
		}
		config := &bench.SoakConfig{Duration: *duration, Sample: *sample, Rate: *rate, Schedules: *schedules, Owners: *owners,
			Retention: *retention, Workers: *workers, Logger: env.Logger, ProfileDir: *profileDir}
		var res *bench.SoakResult
		err := runBenchOn(ctx, env, url.Get(), "bench soak", *asJSON, func(pool *pgxpool.Pool) (_ *bench.SoakResult, err error) {
			res, err = bench.RunSoak(ctx, pool, config, env.Stderr)
			return res, err
		}, printBenchSoakTable)
		if err == nil && !res.OK() {
			var failed []string
			for _, c := range res.Checks {
				if !c.OK {
					failed = append(failed, c.Name)
				}
			}
			return withHint(fmt.Errorf("bench soak: the curves are not flat: %s (figures above)", strings.Join(failed, ", ")),
				"a growth that lasts to the end is a leak or a table that outgrows its retention; a single noisy minute at either end can decide a short run, so run --duration 30m before you call it one")
		}
		return err
	}
}

// printBenchSoakTable prints a row per sample and the growth.
func printBenchSoakTable(w io.Writer, res *bench.SoakResult) error {
	c := res.Config
	fmt.Fprintf(w, "%s of %d runs/s and %d every-minute schedules (%d owners), retention %s, %d workers: %d runs started, %d failed\n\n",
		c.Duration, c.Rate, c.Schedules, c.Owners, c.Retention, c.Workers, res.Started, res.Failed)
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "AT\tRUNS/S\tSLOTS\tLAG P50\tLAG P99\tHEAP (LOW / PEAK)\tGOROUTINES\tRUNS\tSTEPS\tJOBS\tDEAD TUPLES")
	for _, s := range res.Samples {
		fmt.Fprintf(table, "%s\t%.1f\t%d\t%s\t%s\t%s / %s\t%d\t%d\t%d\t%d\t%d\n", s.At, s.RunsPerSecond, s.Slots,
			s.LagP50.Round(time.Millisecond), s.LagP99.Round(time.Millisecond), bench.FormatBytes(s.HeapBytes), bench.FormatBytes(s.HeapPeakBytes), s.Goroutines,
			s.Runs, s.Steps, s.Jobs, s.DeadTuples)
	}
	if err := table.Flush(); err != nil {
		return err
	}
	if len(res.Checks) == 0 {
		_, err := fmt.Fprintln(w, "\nToo few samples after the warm-up (a sixth of the run) to judge the curves: run longer, or sample more often.")
		return err
	}
	fmt.Fprintln(w, "\nFrom the end of the warm-up (a sixth of the run) to the end:")
	checks := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range res.Checks {
		verdict := "ok"
		if !c.OK {
			verdict = "FAILED"
		}
		fmt.Fprintf(checks, "  %s\t%s\t%s\t%s\n", c.Name, c.Figure, c.Limit, verdict)
	}
	return checks.Flush()
}
