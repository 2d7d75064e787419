package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/jobs"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// The soak's defaults: half an hour at a steady mixed load, a sample a
// minute.
const (
	DefaultSoakDuration  = 30 * time.Minute
	DefaultSoakSample    = time.Minute
	DefaultSoakRate      = 20
	DefaultSoakSchedules = 1000
	DefaultSoakOwners    = 100
	DefaultSoakRetention = 3 * time.Minute
)

// SoakFlow is the soak's workflow: a step, a one-second sleep, a wait for
// the signal "go" (sent right after the start: a signal sent before its
// wait is kept), and a last step.
var SoakFlow = workflow.Define("bench_soak", func(ctx workflow.Context, n int) (int, error) {
	a, err := workflow.Step(ctx, "one", func(context.Context) (int, error) { return n, nil })
	if err != nil {
		return 0, err
	}
	if err := workflow.Sleep(ctx, "nap", time.Second); err != nil {
		return 0, err
	}
	b, err := workflow.WaitSignal[int](ctx, "go", &workflow.WaitOpts{Timeout: time.Minute})
	if err != nil {
		return 0, err
	}
	return workflow.Step(ctx, "two", func(context.Context) (int, error) { return a + b, nil })
}, nil)

// SoakTick is what the soak's schedules start.
var SoakTick = workflow.Define("bench_soak_tick", func(_ workflow.Context, _ struct{}) (int, error) { return 1, nil }, nil)

// SoakConfig configures RunSoak.
type SoakConfig struct {
	// Duration is how long the load runs. Defaults to DefaultSoakDuration.
	Duration time.Duration
	// Sample is how often a sample is taken. Defaults to DefaultSoakSample.
	Sample time.Duration
	// Rate is how many SoakFlow runs start per second. Defaults to
	// DefaultSoakRate.
	Rate int
	// Schedules is how many every-minute schedules fire, across Owners
	// owners. Default to DefaultSoakSchedules and DefaultSoakOwners.
	Schedules int
	Owners    int
	// Retention is how long finished runs, and River's finished jobs,
	// are kept; the retention runs every quarter of it, so that it deletes
	// while the load runs. Defaults to DefaultSoakRetention.
	Retention time.Duration
	// Workers is the MaxWorkers of the default queue. Defaults to
	// DefaultWorkers.
	Workers int
	// Logger receives River's and the engine's logs. Defaults to none.
	Logger *slog.Logger
	// ProfileDir, when set, receives a heap profile at each sample
	// (heap-<minutes>m<seconds>s.pprof), to find what grows with
	// `go tool pprof -base`.
	ProfileDir string
}

// SoakSample is the state of the soak at one moment, and what happened
// since the sample before.
type SoakSample struct {
	// At is how long the load had run.
	At time.Duration `json:"at"`
	// RunsPerSecond is how many SoakFlow runs completed per second since
	// the last sample; Slots how many slots fired.
	RunsPerSecond float64 `json:"runs_per_second"`
	Slots         int     `json:"slots"`
	// LagP50 and LagP99 are how late those slots' runs started.
	LagP50 time.Duration `json:"lag_p50"`
	LagP99 time.Duration `json:"lag_p99"`
	// HeapBytes is the client process's live heap after a GC at its
	// lowest since the sample before (read every soakHeapEvery), what a
	// leak raises; HeapPeakBytes at its highest, which is what was in
	// flight at a read (a minute's slots being started) as much as what
	// is kept. Goroutines are its goroutines at the sample.
	HeapBytes     uint64 `json:"heap_bytes"`
	HeapPeakBytes uint64 `json:"heap_peak_bytes"`
	Goroutines    int    `json:"goroutines"`
	// Runs, Steps and Jobs are the rows of workflow_runs, step_runs and
	// river_job; DeadTuples their dead tuples (pg_stat_user_tables).
	Runs       int `json:"runs"`
	Steps      int `json:"steps"`
	Jobs       int `json:"jobs"`
	DeadTuples int `json:"dead_tuples"`
}

// SoakResult is what RunSoak measured.
type SoakResult struct {
	Config  *SoakConfig   `json:"-"`
	Samples []*SoakSample `json:"samples"`
	// Started and Failed count the SoakFlow runs started, and the starts,
	// signals and runs that failed.
	Started int `json:"started"`
	Failed  int `json:"failed"`
	// Checks are the soak's verdicts (see SoakResult.check): memory,
	// goroutines, tables, throughput and slot lag flat from the end of the
	// warm-up to the end, and dead tuples bounded.
	Checks []*SoakCheck `json:"checks"`
}

// SoakCheck is one verdict of a soak: a figure against its limit.
type SoakCheck struct {
	// Name says what is checked; Figure what was measured; Limit what it
	// must stay within.
	Name   string `json:"name"`
	Figure string `json:"figure"`
	Limit  string `json:"limit"`
	OK     bool   `json:"ok"`
}

// OK reports whether every check passed.
func (r *SoakResult) OK() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// RunSoak runs a steady mixed load on one working client, on a schema of
// its own, for config.Duration and samples it every config.Sample: the
// client's memory and goroutines, throughput, slot lag, and the tables'
// rows and dead tuples, with the retention and River's job cleaner
// deleting meanwhile.
func RunSoak(ctx context.Context, admin *pgxpool.Pool, config *SoakConfig, progress io.Writer) (_ *SoakResult, err error) {
	c := SoakConfig{}
	if config != nil {
		c = *config
	}
	if err := countDefaults("SoakConfig", []countField{
		{"Rate", &c.Rate, DefaultSoakRate},
		{"Schedules", &c.Schedules, DefaultSoakSchedules},
		{"Owners", &c.Owners, DefaultSoakOwners},
		{"Workers", &c.Workers, DefaultWorkers},
	}); err != nil {
		return nil, err
	}
	if err := durationDefaults("SoakConfig", []durationField{
		{"Duration", &c.Duration, DefaultSoakDuration},
		{"Sample", &c.Sample, DefaultSoakSample},
		{"Retention", &c.Retention, DefaultSoakRetention},
	}); err != nil {
		return nil, err
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ProfileDir != "" {
		// Finer than the default 512 KiB, so that a structure that grows
		// by a few kilobytes a minute shows in the profiles.
		runtime.MemProfileRate = 16 << 10
	}
	s, err := newScratch(ctx, admin, &Config{Items: 1, Logger: c.Logger, Rounds: 1, Workers: c.Workers})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, s.drop(ctx, admin)) }()

	wf, err := workflow.NewClient(s.pool, &workflow.Config{
		Logger: c.Logger, Schema: s.schema, Workflows: []workflow.Registrable{SoakFlow, SoakTick},
		CompletedRunRetention: c.Retention, FailedRunRetention: c.Retention,
		Maintenance: &jobs.Config{RetentionInterval: max(c.Retention/4, jobs.MinInterval)},
		River: &river.Config{
			Logger: c.Logger, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: c.Workers}},
			CompletedJobRetentionPeriod: c.Retention, CancelledJobRetentionPeriod: c.Retention, DiscardedJobRetentionPeriod: c.Retention,
		},
	})
	if err != nil {
		return nil, err
	}
	sc, err := schedule.New(wf, nil)
	if err != nil {
		return nil, err
	}
	params := make([]*schedule.Params, c.Schedules)
	for i := range params {
		params[i] = &schedule.Params{Name: "soak", Owner: fmt.Sprintf("owner-%d", i%c.Owners), Key: fmt.Sprintf("soak-%d", i),
			Workflow: SoakTick.Name(), Cron: "* * * * *"}
	}
	if _, err := sc.CreateMany(ctx, params); err != nil {
		return nil, err
	}
	if err := wf.Start(ctx); err != nil {
		return nil, err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		err = errors.Join(err, wf.Stop(stopCtx))
	}()

	res := &SoakResult{Config: &c}
	var started, failed atomic.Int64
	loadCtx, stopLoad := context.WithCancel(ctx)
	var load sync.WaitGroup
	load.Go(func() {
		tick := time.NewTicker(time.Second / time.Duration(c.Rate))
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-loadCtx.Done():
				return
			case <-tick.C:
			}
			h, err := SoakFlow.Start(loadCtx, wf, n, nil)
			if err == nil {
				err = wf.Signal(loadCtx, h.ID, "go", 1)
			}
			if err != nil {
				if loadCtx.Err() == nil {
					failed.Add(1)
				}
				continue
			}
			started.Add(1)
		}
	})

	begin := time.Now()
	last := begin
	heap := &heapReads{}
	for time.Since(begin) < c.Duration {
		select {
		case <-ctx.Done():
			stopLoad()
			load.Wait()
			return nil, ctx.Err()
		case <-heap.until(ctx, min(c.Sample, c.Duration-time.Since(begin))):
		}
		now := time.Now()
		sample, err := soakSample(ctx, s, last, now)
		if err != nil {
			stopLoad()
			load.Wait()
			return nil, err
		}
		sample.HeapBytes, sample.HeapPeakBytes = heap.take(sample.HeapBytes)
		sample.At = now.Sub(begin).Round(time.Second)
		if c.ProfileDir != "" {
			if err := writeHeapProfile(filepath.Join(c.ProfileDir, "heap-"+sample.At.String()+".pprof")); err != nil {
				stopLoad()
				load.Wait()
				return nil, err
			}
		}
		sample.RunsPerSecond /= now.Sub(last).Seconds()
		res.Samples = append(res.Samples, sample)
		last = now
		fmt.Fprintf(progress, "%s: %.0f runs/s, %d slots (lag p99 %s), heap %s, %d goroutines, %d runs, %d jobs, %d dead tuples\n",
			sample.At, sample.RunsPerSecond, sample.Slots, sample.LagP99.Round(time.Millisecond), FormatBytes(sample.HeapBytes),
			sample.Goroutines, sample.Runs, sample.Jobs, sample.DeadTuples)
	}
	stopLoad()
	load.Wait()
	if failedRuns, err := s.count(ctx, "SELECT count(*) FROM workflow_runs WHERE status IN ('failed', 'cancelled')"); err == nil {
		failed.Add(int64(failedRuns))
	} else {
		return nil, err
	}
	res.Started, res.Failed = int(started.Load()), int(failed.Load())
	res.check(c.Duration / 6)
	return res, nil
}

// soakHeapEvery is how often the soak reads the client's live heap
// between samples. A sample taken at one moment measured whatever was in
// flight then: a sample that fell on the minute's slots being started read
// about 1 MiB more than one a few seconds later, and the samples' moments
// drift across the minute.
const soakHeapEvery = 5 * time.Second

// heapReads keeps the lowest and highest live heap read since the last
// take.
type heapReads struct {
	low, high uint64
}

// until returns a channel that is closed after d, reading the live heap
// every soakHeapEvery until then, or until ctx ends.
func (h *heapReads) until(ctx context.Context, d time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		end := time.Now().Add(d)
		for wait := time.Until(end); wait > 0; wait = time.Until(end) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(min(wait, soakHeapEvery)):
			}
			if time.Now().Before(end) {
				h.add(liveHeap())
			}
		}
	}()
	return done
}

func (h *heapReads) add(bytes uint64) {
	if h.low == 0 || bytes < h.low {
		h.low = bytes
	}
	h.high = max(h.high, bytes)
}

// take adds the sample's own read and returns the lowest and highest
// reads since the last take.
func (h *heapReads) take(atSample uint64) (low, high uint64) {
	h.add(atSample)
	low, high = h.low, h.high
	*h = heapReads{}
	return low, high
}

// liveHeap is the process's live heap after a GC.
func liveHeap() uint64 {
	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	return mem.HeapAlloc
}

// writeHeapProfile writes the heap profile (after the GC soakSample ran)
// to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("bench: heap profile: %w", err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("bench: heap profile: %w", err)
	}
	return f.Close()
}

// soakSample reads what the soak did between from and to, and its state.
func soakSample(ctx context.Context, s *scratch, from, to time.Time) (*SoakSample, error) {
	sample := &SoakSample{}
	var p50, p99 *float64
	var completed int
	err := s.scanRow(ctx, `SELECT
		(SELECT count(*) FROM workflow_runs WHERE workflow_type = $1 AND status = 'completed' AND finished_at > $3 AND finished_at <= $4),
		(SELECT count(*) FROM workflow_runs WHERE schedule_id IS NOT NULL AND fire_at > $3 AND fire_at <= $4),
		(SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - fire_at)) FROM workflow_runs
			WHERE workflow_type = $2 AND fire_at > $3 AND fire_at <= $4 AND started_at IS NOT NULL),
		(SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - fire_at)) FROM workflow_runs
			WHERE workflow_type = $2 AND fire_at > $3 AND fire_at <= $4 AND started_at IS NOT NULL),
		(SELECT count(*) FROM workflow_runs), (SELECT count(*) FROM step_runs), (SELECT count(*) FROM river_job),
		(SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables
			WHERE schemaname = current_schema() AND relname IN ('workflow_runs', 'step_runs', 'river_job', 'schedules'))`,
		[]any{SoakFlow.Name(), SoakTick.Name(), from, to}, &completed, &sample.Slots, &p50, &p99, &sample.Runs, &sample.Steps, &sample.Jobs, &sample.DeadTuples)
	if err != nil {
		return nil, fmt.Errorf("bench: soak sample: %w", err)
	}
	sample.RunsPerSecond = float64(completed)
	if p50 != nil {
		sample.LagP50 = time.Duration(*p50 * float64(time.Second))
	}
	if p99 != nil {
		sample.LagP99 = time.Duration(*p99 * float64(time.Second))
	}
	sample.HeapBytes, sample.Goroutines = liveHeap(), runtime.NumGoroutine()
	return sample, nil
}

// soakFlat is how much a figure may move from the end of the warm-up to
// the end of the soak: 10 %.
const soakFlat = 0.10

// soakVacuumWindow is how many samples in a row may find the dead tuples
// high before the soak says that autovacuum does not keep up.
const soakVacuumWindow = 5

// soakLagSlack is how much the slot lag may grow beyond soakFlat: a
// minute's median lag moves by tens of milliseconds with what else the
// machine does, which is noise, not a trend.
const soakLagSlack = 100 * time.Millisecond

// check fills Checks. The warm-up is the samples before warmup (a sixth of
// the run: the 5th minute of 30), when the retention window is still
// filling. Each flat figure compares the median of the last three
// samples with the median of the first three after the warm-up, so that
// one noisy minute does not decide; it must not grow by more than
// soakFlat, and the throughput must not move by more than soakFlat either
// way. The slot lag (p50) may also grow by soakLagSlack. Dead tuples are
// bounded when autovacuum keeps coming back (see soakVacuumWindow).
func (r *SoakResult) check(warmup time.Duration) {
	var steady []*SoakSample
	for _, s := range r.Samples {
		if s.At >= warmup {
			steady = append(steady, s)
		}
	}
	if len(steady) < 2 {
		return
	}
	window := min(3, len(steady)/2)
	head, tail := steady[:window], steady[len(steady)-window:]
	median := func(samples []*SoakSample, value func(*SoakSample) float64) float64 {
		values := make([]float64, len(samples))
		for i, s := range samples {
			values[i] = value(s)
		}
		slices.Sort(values)
		return values[len(values)/2]
	}
	flat := func(name string, format func(float64) string, value func(*SoakSample) float64) {
		from, to := median(head, value), median(tail, value)
		ratio := divide(to, from)
		r.Checks = append(r.Checks, &SoakCheck{Name: name, Figure: fmt.Sprintf("%s → %s (%.2f×)", format(from), format(to), ratio),
			Limit: fmt.Sprintf("≤ %.2f×", 1+soakFlat), OK: ratio <= 1+soakFlat})
	}
	count := FormatCount
	flat("heap", func(v float64) string { return FormatBytes(uint64(v)) }, func(s *SoakSample) float64 { return float64(s.HeapBytes) })
	flat("goroutines", count, func(s *SoakSample) float64 { return float64(s.Goroutines) })
	flat("workflow_runs rows", count, func(s *SoakSample) float64 { return float64(s.Runs) })
	flat("step_runs rows", count, func(s *SoakSample) float64 { return float64(s.Steps) })
	flat("river_job rows", count, func(s *SoakSample) float64 { return float64(s.Jobs) })

	runsPerSecond := func(s *SoakSample) float64 { return s.RunsPerSecond }
	from, to := median(head, runsPerSecond), median(tail, runsPerSecond)
	ratio := divide(to, from)
	r.Checks = append(r.Checks, &SoakCheck{Name: "throughput", Figure: fmt.Sprintf("%.1f → %.1f runs/s (%.2f×)", from, to, ratio),
		Limit: fmt.Sprintf("%.2f× to %.2f×", 1-soakFlat, 1+soakFlat), OK: ratio >= 1-soakFlat && ratio <= 1+soakFlat})

	// The lag of the samples in which slots fired (with a sample shorter
	// than a minute, some saw none).
	var fired []*SoakSample
	for _, s := range steady {
		if s.Slots > 0 {
			fired = append(fired, s)
		}
	}
	if len(fired) >= 2 {
		window := min(3, len(fired)/2)
		lag := func(s *SoakSample) float64 { return float64(s.LagP50) }
		lagFrom, lagTo := time.Duration(median(fired[:window], lag)), time.Duration(median(fired[len(fired)-window:], lag))
		lagLimit := time.Duration(float64(lagFrom)*(1+soakFlat)) + soakLagSlack
		r.Checks = append(r.Checks, &SoakCheck{Name: "slot lag p50",
			Figure: fmt.Sprintf("%s → %s", lagFrom.Round(time.Millisecond), lagTo.Round(time.Millisecond)),
			Limit:  fmt.Sprintf("≤ %s (%.2f× + %s)", lagLimit.Round(time.Millisecond), 1+soakFlat, soakLagSlack), OK: lagTo <= lagLimit})
	}

	// Autovacuum keeps up when it keeps coming back: within every
	// soakVacuumWindow samples, one finds the dead tuples below a fifth of
	// the live rows (its default scale factor). Between two visits they
	// pile up at the rate of the load (a peak a minute apart can be tens of
	// thousands), so the peaks say little; a table it cannot keep up with
	// never comes back down.
	longest, run, most := 0, 0, 0
	for _, s := range steady {
		most = max(most, s.DeadTuples)
		if s.DeadTuples*5 < s.Runs+s.Steps+s.Jobs {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	r.Checks = append(r.Checks, &SoakCheck{Name: "dead tuples",
		Figure: fmt.Sprintf("at most %s; at most %d samples in a row over a fifth of the live rows", FormatCount(float64(most)), longest),
		Limit:  fmt.Sprintf("fewer than %d in a row (autovacuum comes back)", soakVacuumWindow),
		OK:     longest < soakVacuumWindow})
}
