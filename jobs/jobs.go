// Package jobs holds the River jobs Tributary runs for its own upkeep: the
// repair of runs whose River job ended outside Tributary, the retention that
// deletes old finished runs, and the schedule reconciler that repairs broken
// slot chains. Each is a River periodic job, run on River's elected leader
// only, once when a client starts leading and then every interval, and
// unique per interval so that clients that lead one after the other do not
// run it twice.
//
// Applications do not call this package to run them: workflow.NewClient adds
// the repair and retention jobs to a working client (configured by
// workflow.Config.Maintenance, a *Config), and schedule.New adds the
// reconciler. It is public so that their kinds, defaults and limits are
// documented in one place, and so that an operator who sees a
// "tributary:run_retention" job in River UI can look it up.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/riverqueue/river"
)

// The kinds of Tributary's maintenance jobs, as River UI shows them.
const (
	KindRepairRuns        = "tributary:repair_runs"
	KindRunRetention      = "tributary:run_retention"
	KindScheduleReconcile = "tributary:schedule_reconcile"
)

// Defaults of Config, like River's maintenance services'.
const (
	// DefaultRepairInterval is how often runs whose River job ended outside
	// Tributary (rescued and discarded, cancelled or deleted in River UI)
	// are repaired. River UI's actions reach a run within a second through
	// triggers (migration 006); this pass catches what those miss.
	DefaultRepairInterval = time.Minute

	// DefaultRetentionInterval is how often finished runs past their
	// retention are deleted.
	DefaultRetentionInterval = 10 * time.Minute

	// DefaultRetentionBatchSize is how many runs one DELETE statement of
	// the retention removes, with their steps and signals: small enough
	// that each statement holds its row locks for milliseconds.
	DefaultRetentionBatchSize = 5_000

	// DefaultReconcileInterval is how often the schedule reconciler repairs
	// broken chains.
	DefaultReconcileInterval = time.Minute
)

// Limits of Config's values.
const (
	MinInterval           = time.Second
	MaxRetentionBatchSize = 100_000
)

// Config configures the maintenance jobs of a workflow client. The zero
// value is valid: every field has a default.
type Config struct {
	// RepairInterval is how often the leader repairs runs whose River job
	// ended outside Tributary.
	//
	// Defaults to DefaultRepairInterval (one minute).
	RepairInterval time.Duration

	// RetentionInterval is how often the leader deletes finished runs past
	// their retention (workflow.Config.CompletedRunRetention and
	// FailedRunRetention).
	//
	// Defaults to DefaultRetentionInterval (ten minutes).
	RetentionInterval time.Duration

	// RetentionBatchSize is how many runs one statement of the retention
	// deletes.
	//
	// Defaults to DefaultRetentionBatchSize (5,000).
	RetentionBatchSize int
}

// WithDefaults returns a copy of c (which may be nil) with its zero fields
// set to their defaults.
func (c *Config) WithDefaults() *Config {
	out := Config{}
	if c != nil {
		out = *c
	}
	if out.RepairInterval == 0 {
		out.RepairInterval = DefaultRepairInterval
	}
	if out.RetentionInterval == 0 {
		out.RetentionInterval = DefaultRetentionInterval
	}
	if out.RetentionBatchSize == 0 {
		out.RetentionBatchSize = DefaultRetentionBatchSize
	}
	return &out
}

// Validate reports the first field of c out of its limits, as an error that
// names the field and says what it accepts.
func (c *Config) Validate() error {
	for _, d := range []struct {
		name  string
		value time.Duration
	}{{"RepairInterval", c.RepairInterval}, {"RetentionInterval", c.RetentionInterval}} {
		if d.value != 0 && d.value < MinInterval {
			return fmt.Errorf("jobs: Config.%s is %s; use at least %s, or 0 for the default", d.name, d.value, MinInterval)
		}
	}
	if c.RetentionBatchSize < 0 || c.RetentionBatchSize > MaxRetentionBatchSize {
		return fmt.Errorf("jobs: Config.RetentionBatchSize is %d; use 1 to %d, or 0 for the default (%d)",
			c.RetentionBatchSize, MaxRetentionBatchSize, DefaultRetentionBatchSize)
	}
	return nil
}

// Job is one maintenance job.
type Job struct {
	// Kind is the job's River kind, one of the Kind constants.
	Kind string

	// Interval is how often River's leader runs it.
	Interval time.Duration

	// Queue is the River queue it runs in; "" is River's default queue.
	Queue string

	// Run does one pass and returns how many items it handled (runs
	// repaired or deleted, chains repaired), which the job logs when
	// non-zero.
	Run func(ctx context.Context) (int, error)

	// Logger receives the job's logs. Nil discards them.
	Logger *slog.Logger
}

// args are the arguments of every maintenance job: none, but a kind of
// their own.
type args struct{ kind string }

func (a args) Kind() string { return a.kind }

// worker runs a Job's pass.
type worker struct {
	river.WorkerDefaults[args]
	job Job
}

func (w *worker) Work(ctx context.Context, _ *river.Job[args]) error {
	n, err := w.job.Run(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", w.job.Kind, err)
	}
	if n > 0 && w.job.Logger != nil {
		w.job.Logger.InfoContext(ctx, "tributary: Maintenance pass done", slog.String("kind", w.job.Kind), slog.Int("items", n))
	}
	return nil
}

// Worker registers job's worker in workers.
func (job Job) Worker(workers *river.Workers) error {
	if job.Kind == "" || job.Run == nil || job.Interval < MinInterval {
		return errors.New("jobs: a Job needs a Kind, a Run function and an Interval of at least a second")
	}
	return addWorkerArgsSafely(workers, args{kind: job.Kind}, &worker{job: job})
}

// addWorkerArgsSafely is river.AddWorkerArgs, which panics on a kind
// registered twice, returning an error instead. River registers a worker
// under the Kind of the args it is given; these args carry their kind.
func addWorkerArgsSafely(workers *river.Workers, a args, w river.Worker[args]) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("jobs: register %s: %v", a.kind, r)
		}
	}()
	river.AddWorkerArgs(workers, a, w)
	return nil
}

// Periodic is job's River periodic job: run when a client starts leading,
// then every Interval, unique per Interval.
func (job Job) Periodic() *river.PeriodicJob {
	return river.NewPeriodicJob(
		river.PeriodicInterval(job.Interval),
		func() (river.JobArgs, *river.InsertOpts) {
			return args{kind: job.Kind}, &river.InsertOpts{Queue: job.Queue, UniqueOpts: river.UniqueOpts{ByPeriod: job.Interval}}
		},
		&river.PeriodicJobOpts{ID: job.Kind, RunOnStart: true},
	)
}

// Add adds jobs to a River configuration before its client is built: their
// workers to config.Workers (made when nil) and, unless the configuration
// takes no part in leader elections (and so never runs periodic jobs),
// their periodic jobs to config.PeriodicJobs.
func Add(config *river.Config, jobs ...Job) error {
	if config.Workers == nil {
		config.Workers = river.NewWorkers()
	}
	for _, job := range jobs {
		if err := job.Worker(config.Workers); err != nil {
			return err
		}
		if !config.LeaderElectionDisabled {
			config.PeriodicJobs = append(slices.Clip(config.PeriodicJobs), job.Periodic())
		}
	}
	return nil
}
