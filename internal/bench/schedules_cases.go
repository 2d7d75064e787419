package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

const (
	// tributaryLead and createCost place a Tributary case's slot: that far
	// ahead of creating its schedules, plus createCost per schedule, so
	// that creating them ends a few seconds before the slot. CreateMany,
	// which writes each schedule with its first slot's run and job
	// (prepared slots), took up to 133µs a schedule on the 2-core bench
	// machine (100,000 in 12.8 to 13.3 s in the runs where 100µs left them
	// past their slot: four of six in one hour); the lag is measured from
	// the slot, so a longer lead costs only the wait.
	tributaryLead = 3 * time.Second
	createCost    = 200 * time.Microsecond

	// riverLead places the River case's slot this far ahead of starting its
	// client: time to be elected leader and start the periodic job enqueuer
	// (which waits up to 1 s after the election).
	riverLead = 4 * time.Second

	// pollInterval is how often a case counts its finished slots, per
	// pollSlots slots (see pollEvery). It bounds how long a case waits
	// after the last slot finished, not what it measures: lags are read
	// from the database. The count reads every run or job of the case; at
	// 50 ms it took a fifth of the server's time sampled during a
	// 30,000-slot case, on both cases, and at 250 ms during a 100,000-slot
	// case still a tenth of Tributary's time.
	pollInterval = 250 * time.Millisecond
	pollSlots    = 25_000
)

// slotCase is one of the cases RunSchedules measures.
type slotCase struct {
	key  string // SlotCase.Key
	name string // SlotCase.Name

	// run measures the case on s: every field of the round but Schema.
	run func(ctx context.Context, s *scratch, config *SchedulesConfig) (*SlotRound, error)
}

var (
	tributaryWarm = slotCase{key: KeyTributaryWarm, name: "Tributary schedules, warm", run: runTributary(false)}
	tributaryCold = slotCase{key: KeyTributaryCold, name: "Tributary schedules, cold", run: runTributary(true)}
	riverPeriodic = slotCase{key: KeyRiverPeriodic, name: "River periodic jobs", run: runRiver}
)

// --- Tributary ----------------------------------------------------------------

// slotWorkflow is the workflow each schedule slot starts: it does nothing.
var slotWorkflow = workflow.Define("bench_slot", func(workflow.Context, struct{}) (struct{}, error) {
	return struct{}{}, nil
}, nil)

// tributarySlots reads the runs of a Tributary case; $1 is the slot.
var tributarySlots = &slotQueries{
	finished: `SELECT count(*) FROM workflow_runs
		WHERE schedule_id IS NOT NULL AND fire_at = $1 AND status IN ('completed', 'failed', 'cancelled', 'skipped')`,
	summary: `SELECT count(*) FILTER (WHERE status = 'completed' AND fire_at = $1), count(*),
		coalesce(extract(epoch FROM max(created_at) - $1::timestamptz) * 1000, 0)::float8,
		coalesce(string_agg(DISTINCT status || coalesce(' (' || skip_reason || ')', ''), ', ') FILTER (WHERE status <> 'completed'), '')
		FROM workflow_runs r WHERE schedule_id IS NOT NULL
			AND (status <> 'pending' OR NOT EXISTS (SELECT FROM river_job j WHERE j.id = r.job_id AND j.state = 'pending'))`,
	lags: `SELECT (extract(epoch FROM started_at - fire_at) * 1000)::float8 FROM workflow_runs
		WHERE schedule_id IS NOT NULL AND fire_at = $1 AND status = 'completed'`,
}

// runTributary returns the run function of the Tributary case, warm or
// cold.
func runTributary(cold bool) func(context.Context, *scratch, *SchedulesConfig) (*SlotRound, error) {
	return func(ctx context.Context, s *scratch, config *SchedulesConfig) (_ *SlotRound, err error) {
		// The insert-only client creates the schedules: it works no jobs,
		// so that nothing fires before the working client starts.
		inserting, err := workflow.NewClient(s.pool, &workflow.Config{Logger: config.Logger, Schema: s.schema})
		if err != nil {
			return nil, fmt.Errorf("building the insert-only client: %w", err)
		}
		inserter, err := schedule.New(inserting, &schedule.Config{Logger: config.Logger})
		if err != nil {
			return nil, fmt.Errorf("building the insert-only client: %w", err)
		}
		wf, err := workflow.NewClient(s.pool, &workflow.Config{
			Logger: config.Logger,
			River: &river.Config{
				Logger: config.Logger,
				Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: config.Workers}},
			},
			Schema:    s.schema,
			Workflows: []workflow.Registrable{slotWorkflow},
		})
		if err != nil {
			return nil, fmt.Errorf("building the working client: %w", err)
		}
		if _, err := schedule.New(wf, &schedule.Config{Logger: config.Logger}); err != nil {
			return nil, fmt.Errorf("building the working client: %w", err)
		}

		began := time.Now()
		slot := began.Add(tributaryLead + time.Duration(config.Due)*createCost).Truncate(time.Second).UTC()
		if err := createSlots(ctx, s, inserter, config.Due, config.Owners, config.RanBefore, slot); err != nil {
			return nil, err
		}
		created := time.Now()

		if cold {
			if err := sleepUntil(ctx, slot); err != nil {
				return nil, err
			}
		} else if !created.Before(slot) {
			return nil, fmt.Errorf("creating %d schedules took %s, past their slot %s after the start: the working client cannot start before it",
				config.Due, created.Sub(began).Round(time.Millisecond), slot.Sub(began).Round(time.Millisecond))
		}
		if err := wf.Start(ctx); err != nil {
			return nil, fmt.Errorf("starting the working client: %w", err)
		}
		lead := time.Until(slot)
		defer func() { err = errors.Join(err, stopWithin(ctx, wf.Stop)) }()

		r, err := measureSlots(ctx, s, tributarySlots, slot, config.Due)
		if err != nil {
			return nil, err
		}
		r.Lead = lead
		return r, nil
	}
}

// createSlots creates n schedules whose first slot is slot, spread in turn
// over owners owners, through an insert-only schedule client:
// schedule.MaxCreateMany to a CreateMany call, each in a transaction of its
// own. With ranBefore, it then marks them as having completed a run before
// (SchedulesConfig.RanBefore).
func createSlots(ctx context.Context, s *scratch, sc *schedule.Client, n, owners int, ranBefore bool, slot time.Time) error {
	cron := fmt.Sprintf("%d %d %d * * *", slot.Second(), slot.Minute(), slot.Hour())
	for from := 0; from < n; from += schedule.MaxCreateMany {
		params := make([]*schedule.Params, 0, min(schedule.MaxCreateMany, n-from))
		for i := from; i < min(from+schedule.MaxCreateMany, n); i++ {
			params = append(params, &schedule.Params{
				Name:     "slot " + strconv.Itoa(i),
				Owner:    "bench-" + strconv.Itoa(i%owners),
				Workflow: slotWorkflow.Name(),
				Cron:     cron,
				Overlap:  schedule.OverlapAllow,
			})
		}
		if _, err := sc.CreateMany(ctx, params); err != nil {
			return fmt.Errorf("creating schedules %d to %d: %w", from, from+len(params), err)
		}
	}
	if ranBefore {
		if _, err := s.pool.Exec(ctx, `UPDATE schedules SET last_run_status = 'completed'`); err != nil {
			return fmt.Errorf("marking the schedules as having run before: %w", err)
		}
	}
	due, err := s.count(ctx, `SELECT count(*) FROM schedules WHERE next_fire_at = $1`, slot)
	switch {
	case err != nil:
		return fmt.Errorf("counting the schedules due: %w", err)
	case due != n:
		return fmt.Errorf("%d schedules are due at %s, want %d", due, slot.Format(time.TimeOnly), n)
	}
	return nil
}

// --- River ---------------------------------------------------------------------

// riverSlots reads the jobs of the River case; $1 is the slot, at which
// River schedules each periodic job it inserts, and $2 the kind.
var riverSlots = &slotQueries{
	finished: `SELECT count(*) FROM river_job
		WHERE kind = $2 AND scheduled_at = $1 AND state IN ('completed', 'cancelled', 'discarded')`,
	summary: `SELECT count(*) FILTER (WHERE state = 'completed' AND scheduled_at = $1), count(*),
		coalesce(extract(epoch FROM max(created_at) - $1::timestamptz) * 1000, 0)::float8,
		coalesce(string_agg(DISTINCT state::text, ', ') FILTER (WHERE state <> 'completed'), '')
		FROM river_job WHERE kind = $2`,
	lags: `SELECT (extract(epoch FROM attempted_at - scheduled_at) * 1000)::float8 FROM river_job
		WHERE kind = $2 AND scheduled_at = $1 AND state = 'completed'`,
	args: []any{NoopArgs{}.Kind()},
}

// runRiver measures the River case: config.Due periodic jobs due at the same
// second, each inserting a NoopArgs job.
func runRiver(ctx context.Context, s *scratch, config *SchedulesConfig) (_ *SlotRound, err error) {
	slot := time.Now().Add(riverLead).Truncate(time.Second).UTC()
	periodic := make([]*river.PeriodicJob, config.Due)
	for i := range periodic {
		periodic[i] = river.NewPeriodicJob(&onceAt{at: slot}, func() (river.JobArgs, *river.InsertOpts) {
			return NoopArgs{N: i}, nil
		}, nil)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &NoopWorker{})
	client, err := river.NewClient(riverpgxv5.New(s.pool), &river.Config{
		// Tributary's defaults, which its case runs with.
		FetchCooldown:     workflow.DefaultFetchCooldown,
		FetchPollInterval: workflow.DefaultFetchPollInterval,
		Logger:            config.Logger,
		PeriodicJobs:      periodic,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: config.Workers}},
		Schema:            s.schema,
		Workers:           workers,
	})
	if err != nil {
		return nil, fmt.Errorf("building the River client: %w", err)
	}

	// The client works until stopped: cancelling ctx would stop River hard.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("starting the River client: %w", err)
	}
	lead := time.Until(slot)
	defer func() { err = errors.Join(err, stopWithin(ctx, client.Stop)) }()
	if err := waitLeader(ctx, s, client.ID(), slot); err != nil {
		return nil, err
	}

	r, err := measureSlots(ctx, s, riverSlots, slot, config.Due)
	if err != nil {
		return nil, err
	}
	r.Lead = lead
	return r, nil
}

// onceAt is a River periodic schedule due once, at at: its first Next
// returns at, every later one a time that never comes. A cron schedule
// would do the same as long as the enqueuer starts before at; this one
// fires even when it starts after, so that a slow start shows as lag
// rather than as a slot that never fires.
type onceAt struct {
	at   time.Time
	done bool // River calls Next from the enqueuer's goroutine only
}

func (s *onceAt) Next(current time.Time) time.Time {
	if s.done {
		return river.NeverSchedule().Next(current)
	}
	s.done = true
	return s.at
}

// waitLeader waits until the River client clientID is the leader, which
// alone enqueues periodic jobs, failing when the slot comes first.
func waitLeader(ctx context.Context, s *scratch, clientID string, slot time.Time) error {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		leaders, err := s.count(ctx, `SELECT count(*) FROM river_leader WHERE leader_id = $1`, clientID)
		switch {
		case err != nil:
			return fmt.Errorf("reading River's leader: %w", err)
		case leaders > 0:
			return nil
		case !time.Now().Before(slot):
			return errors.New("the River client was not elected leader before the slot: it would not enqueue the periodic jobs")
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// --- Measuring -----------------------------------------------------------------

// slotQueries read the runs or jobs of a case's slots. $1 of each is the
// slot; args are $2 and on.
type slotQueries struct {
	// finished counts the runs or jobs that ended, however they did.
	finished string

	// summary returns how many completed, how many exist, the start of the
	// last inserting transaction in milliseconds after the slot, and how
	// the others ended ("skipped (missed), failed").
	summary string

	// lags returns each completed one's lag, in milliseconds.
	lags string

	args []any
}

// measureSlots waits until the n slots' runs or jobs, due at slot, have
// finished, checks that each completed, and returns their lags.
func measureSlots(ctx context.Context, s *scratch, q *slotQueries, slot time.Time, n int) (*SlotRound, error) {
	args := append([]any{slot}, q.args...)
	if err := waitFinished(ctx, s, q.finished, args, slot, n, "slots"); err != nil {
		return nil, err
	}

	var (
		completed, total int
		lastInsert       float64
		others           string
	)
	if err := s.pool.QueryRow(ctx, q.summary, args...).Scan(&completed, &total, &lastInsert, &others); err != nil {
		return nil, fmt.Errorf("reading what the slots did: %w", err)
	}
	if completed != n || total != n {
		return nil, fmt.Errorf("%d of %d slots completed (%d runs or jobs in all); the others: %s", completed, n, total, others)
	}

	rows, err := s.pool.Query(ctx, q.lags, args...)
	if err != nil {
		return nil, fmt.Errorf("reading the lags: %w", err)
	}
	lags, err := pgx.CollectRows(rows, pgx.RowTo[float64])
	if err != nil {
		return nil, fmt.Errorf("reading the lags: %w", err)
	}
	if len(lags) != n {
		return nil, fmt.Errorf("read %d lags, want %d", len(lags), n)
	}
	slices.Sort(lags)
	lag := newLag(lags)
	return &SlotRound{
		Slots:      n,
		Lag:        lag,
		Rate:       divide(float64(n), lag.Max/1000),
		LastInsert: time.Duration(lastInsert * float64(time.Millisecond)),
		lags:       lags,
	}, nil
}

// waitFinished polls finished until it counts n of what ("slots", "runs"),
// failing when the count stays the same for stallTimeout after since.
func waitFinished(ctx context.Context, s *scratch, finished string, args []any, since time.Time, n int, what string) error {
	ticker := time.NewTicker(pollEvery(n))
	defer ticker.Stop()
	last, changed := 0, since
	for {
		done, err := s.count(ctx, finished, args...)
		switch now := time.Now(); {
		case err != nil:
			return fmt.Errorf("counting the finished %s: %w", what, err)
		case done >= n:
			return nil
		case done != last:
			last, changed = done, now
		case now.Sub(changed) > stallTimeout:
			return fmt.Errorf("%d of %d %s finished, %s in; none for %s", done, n, what, now.Sub(since).Round(time.Millisecond), stallTimeout)
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// pollEvery is how often waitFinished counts n slots: pollInterval per
// pollSlots slots begun, so that the count, whose cost grows with n, takes
// the same small share of the server at every n.
func pollEvery(n int) time.Duration {
	return pollInterval * time.Duration(max(1, (n+pollSlots-1)/pollSlots))
}

// sleepUntil waits until t, or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stopWithin stops a client within stopTimeout, also after ctx is
// cancelled.
func stopWithin(ctx context.Context, stop func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	if err := stop(ctx); err != nil {
		return fmt.Errorf("stopping the client: %w", err)
	}
	return nil
}
