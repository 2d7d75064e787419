package workflow_test

// Benchmarks of the engine against raw River on the same server, so that the
// cost of a workflow run and of a step reads as a ratio:
//
//	go test -run '^$' -bench . -benchtime=5000x -count=3 ./workflow/
//
// The workflows and River jobs are those tributary bench runs
// (internal/bench: ZeroSteps, ThreeSteps, NoopArgs, CheckpointArgs).
//
// Start benchmarks time starting runs (Start, from one caller and from
// many at once, and StartMany, 100 runs a call) next to River inserting a
// trivial job (Insert, InsertMany): the twins of `tributary bench starts`. Throughput benchmarks insert b.N items before the
// timer starts, then start a client with one queue of benchWorkers workers
// and River's own benchmark fetch tuning, and time until River has reported
// every job completed (its event subscription fires after the job's final
// state is committed, for raw jobs and workflow runs alike). They report
// jobs/s next to ns/op. Every benchmark also reports the CPU time used per
// item in the timed section, by the whole machine (cpu-µs/op: Postgres, this
// process and whatever else runs) and by this process (gocpu-µs/op); Linux
// only.
//
// Setting TRIBUTARY_BENCH_TRACE=1 counts, in the timed section, every SQL
// round trip the benchmark's pool makes (River's and the engine's), the
// transactions they open, and the server's WAL bytes and WAL syncs, and
// reports them per item (rt/op, xact/op, walB/op, walsync/op) with a
// per-statement breakdown in the log (run with -v to see all of it), and how
// often Postgres planned each prepared statement anew (custom plans) rather
// than reusing a generic plan. Tracing costs some throughput: time with it
// off.

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/tributary-go/tributary/internal/bench"
	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

const (
	benchWorkers       = 20                    // MaxWorkers of the one queue
	benchFetchCooldown = 2 * time.Millisecond  // as River's riverbench
	benchFetchPoll     = 20 * time.Millisecond // as River's riverbench
	benchPoolConns     = 40                    // pgxpool MaxConns
	benchParallelism   = 10                    // RunParallel goroutines per GOMAXPROCS
	benchWaitTimeout   = 5 * time.Minute       // guard against a hung benchmark
)

var benchTrace = os.Getenv("TRIBUTARY_BENCH_TRACE") != ""

// benchPerfWindow logs the timed section of a throughput benchmark as
// CLOCK_MONOTONIC seconds when TRIBUTARY_BENCH_PERF is set, for a
// system-wide profile of just that section:
//
//	TRIBUTARY_BENCH_PERF=1 perf record -a -g -k CLOCK_MONOTONIC -- ./workflow.test -test.bench ... -test.v
//	perf report --time <from>,<to>
func benchPerfWindow(b *testing.B, from, to float64) {
	if os.Getenv("TRIBUTARY_BENCH_PERF") != "" {
		b.Logf("perf window: --time %.6f,%.6f", from, to)
	}
}

func benchLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// benchCheckpoints is the table of bench.CheckpointWorker, in the
// benchmark's schema.
const benchCheckpoints = "bench_checkpoints"

// benchEnv is a fresh schema and a pool big enough for benchWorkers workers
// plus River's own connections.
type benchEnv struct {
	db     *testdb.DB
	pool   *pgxpool.Pool
	tracer *benchTracer // nil unless TRIBUTARY_BENCH_TRACE is set
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	db := testdb.New(b)
	config, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		b.Fatal(err)
	}
	config.MaxConns = benchPoolConns
	config.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{db.Schema}.Sanitize()
	env := &benchEnv{db: db}
	if benchTrace {
		env.tracer = newBenchTracer(db.Schema)
		config.ConnConfig.Tracer = env.tracer
	}
	ctx := context.Background()
	if env.pool, err = pgxpool.NewWithConfig(ctx, config); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(env.pool.Close) // runs before testdb drops the schema

	// Open every connection now, so that connecting is not timed.
	conns := make([]*pgxpool.Conn, 0, benchPoolConns)
	for range benchPoolConns {
		conn, err := env.pool.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, conn)
	}
	for _, conn := range conns {
		conn.Release()
	}
	return env
}

// riverConfig is the River configuration of every benchmark: quiet, fetch
// tuned as River's own benchmark tunes it, and one queue of benchWorkers
// workers when working (else insert-only).
func (env *benchEnv) riverConfig(working bool) *river.Config {
	config := &river.Config{
		FetchCooldown:     benchFetchCooldown,
		FetchPollInterval: benchFetchPoll,
		Logger:            benchLogger(),
		Schema:            env.db.Schema,
	}
	if working {
		config.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: benchWorkers}}
	}
	return config
}

// newRiverClient builds a plain River client working workers, or an
// insert-only one when workers is nil.
func (env *benchEnv) newRiverClient(b *testing.B, workers *river.Workers) *river.Client[pgx.Tx] {
	b.Helper()
	config := env.riverConfig(workers != nil)
	config.Workers = workers
	rc, err := river.NewClient(riverpgxv5.New(env.pool), config)
	if err != nil {
		b.Fatal(err)
	}
	return rc
}

// clientConfig is the configuration of a workflow client working defs, or
// of an insert-only one.
func (env *benchEnv) clientConfig(working bool, defs ...workflow.Registrable) *workflow.Config {
	config := &workflow.Config{Logger: benchLogger(), Schema: env.db.Schema, Workflows: defs}
	if working {
		config.River = env.riverConfig(true)
	}
	return config
}

// newClient builds a workflow client on the benchmark's pool.
func (env *benchEnv) newClient(b *testing.B, config *workflow.Config) *workflow.Client {
	b.Helper()
	c, err := workflow.NewClient(env.pool, config)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func (env *benchEnv) count(b *testing.B, sql string) int {
	b.Helper()
	var n int
	if err := env.pool.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

func reportRate(b *testing.B, elapsed time.Duration) {
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
}

// benchCPU is CPU time used so far: by the whole machine (Postgres, this
// process and anything else running), by this process, and stolen from this
// machine by its hypervisor. Linux only; ok is false elsewhere.
//
// Steal is kept apart from the machine's CPU: it is time the machine did not
// run at all, not work it did.
type benchCPU struct {
	machine, self, steal time.Duration
	ok                   bool
}

const benchClockTick = 10 * time.Millisecond // USER_HZ is 100 on Linux

func readBenchCPU() benchCPU {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return benchCPU{}
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	fields := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(fields) < 9 || fields[0] != "cpu" {
		return benchCPU{}
	}
	var machine int64
	for _, i := range []int{1, 2, 3, 6, 7} { // user nice system irq softirq
		v, err := strconv.ParseInt(fields[i], 10, 64)
		if err != nil {
			return benchCPU{}
		}
		machine += v
	}
	steal, err := strconv.ParseInt(fields[8], 10, 64)
	if err != nil {
		return benchCPU{}
	}
	self, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return benchCPU{}
	}
	i := strings.LastIndexByte(string(self), ')')
	if i < 0 {
		return benchCPU{}
	}
	fields = strings.Fields(string(self)[i+1:]) // state ppid ... utime(12th) stime(13th)
	if len(fields) < 13 {
		return benchCPU{}
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return benchCPU{}
	}
	return benchCPU{
		machine: time.Duration(machine) * benchClockTick,
		self:    time.Duration(utime+stime) * benchClockTick,
		steal:   time.Duration(steal) * benchClockTick,
		ok:      true,
	}
}

// reportCPU reports the CPU used per item since from: cpu-µs/op for the
// whole machine (mostly Postgres plus this process), gocpu-µs/op for this
// process, and steal-µs/op for the time the hypervisor gave to others.
func reportCPU(b *testing.B, from benchCPU) {
	to := readBenchCPU()
	if !from.ok || !to.ok {
		return
	}
	n := float64(b.N)
	b.ReportMetric(float64((to.machine-from.machine).Microseconds())/n, "cpu-µs/op")
	b.ReportMetric(float64((to.self-from.self).Microseconds())/n, "gocpu-µs/op")
	b.ReportMetric(float64((to.steal-from.steal).Microseconds())/n, "steal-µs/op")
}

// --- Starting runs --------------------------------------------------------

func BenchmarkRiverInsert(b *testing.B) {
	env := newBenchEnv(b)
	rc := env.newRiverClient(b, nil)
	ctx := context.Background()
	env.tracer.reset(b, env)
	b.ResetTimer()
	cpu := readBenchCPU()
	for i := 0; i < b.N; i++ {
		if _, err := rc.Insert(ctx, bench.NoopArgs{N: i}, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, cpu)
	reportRate(b, b.Elapsed())
	env.tracer.report(b, env)
}

func BenchmarkRiverInsertParallel(b *testing.B) {
	env := newBenchEnv(b)
	rc := env.newRiverClient(b, nil)
	ctx := context.Background()
	var n atomic.Int64
	env.tracer.reset(b, env)
	b.SetParallelism(benchParallelism)
	b.ResetTimer()
	cpu := readBenchCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := rc.Insert(ctx, bench.NoopArgs{N: int(n.Add(1))}, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	reportCPU(b, cpu)
	reportRate(b, b.Elapsed())
	env.tracer.report(b, env)
}

func BenchmarkStart(b *testing.B) {
	env := newBenchEnv(b)
	c := env.newClient(b, env.clientConfig(false, bench.ZeroSteps))
	ctx := context.Background()
	env.tracer.reset(b, env)
	b.ResetTimer()
	cpu := readBenchCPU()
	for i := 0; i < b.N; i++ {
		if _, err := bench.ZeroSteps.Start(ctx, c, i, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, cpu)
	reportRate(b, b.Elapsed())
	env.tracer.report(b, env)
}

func BenchmarkStartParallel(b *testing.B) {
	env := newBenchEnv(b)
	c := env.newClient(b, env.clientConfig(false, bench.ZeroSteps))
	ctx := context.Background()
	var n atomic.Int64
	env.tracer.reset(b, env)
	b.SetParallelism(benchParallelism)
	b.ResetTimer()
	cpu := readBenchCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := bench.ZeroSteps.Start(ctx, c, int(n.Add(1)), nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	reportCPU(b, cpu)
	reportRate(b, b.Elapsed())
	env.tracer.report(b, env)
}

// benchManyBatch is how many items a call of BenchmarkRiverInsertMany and
// BenchmarkStartMany inserts, as `tributary bench starts`; b.N counts items.
const benchManyBatch = 100

func BenchmarkRiverInsertMany(b *testing.B) {
	env := newBenchEnv(b)
	rc := env.newRiverClient(b, nil)
	benchMany(b, env, func(ctx context.Context, items []int) error {
		params := make([]river.InsertManyParams, len(items))
		for i, n := range items {
			params[i] = river.InsertManyParams{Args: bench.NoopArgs{N: n}}
		}
		_, err := rc.InsertMany(ctx, params)
		return err
	})
}

func BenchmarkStartMany(b *testing.B) {
	env := newBenchEnv(b)
	c := env.newClient(b, env.clientConfig(false, bench.ZeroSteps))
	benchMany(b, env, func(ctx context.Context, items []int) error {
		params := make([]workflow.StartManyParams[int], len(items))
		for i, n := range items {
			params[i] = workflow.StartManyParams[int]{Input: n}
		}
		_, err := bench.ZeroSteps.StartMany(ctx, c, params)
		return err
	})
}

// benchMany times b.N items inserted by insert, benchManyBatch a call, from
// benchParallelism goroutines a CPU.
func benchMany(b *testing.B, env *benchEnv, insert func(ctx context.Context, items []int) error) {
	ctx := context.Background()
	var n atomic.Int64
	env.tracer.reset(b, env)
	b.SetParallelism(benchParallelism)
	b.ResetTimer()
	cpu := readBenchCPU()
	b.RunParallel(func(pb *testing.PB) {
		items := make([]int, 0, benchManyBatch)
		for pb.Next() {
			items = append(items, int(n.Add(1)))
			if len(items) < benchManyBatch {
				continue
			}
			if err := insert(ctx, items); err != nil {
				b.Error(err)
				return
			}
			items = items[:0]
		}
		if len(items) > 0 {
			if err := insert(ctx, items); err != nil {
				b.Error(err)
			}
		}
	})
	b.StopTimer()
	reportCPU(b, cpu)
	reportRate(b, b.Elapsed())
	env.tracer.report(b, env)
}

// --- Throughput -----------------------------------------------------------

// benchRunner is what a throughput benchmark starts and stops: a River
// client or a workflow client.
type benchRunner struct {
	river *river.Client[pgx.Tx]
	kind  string // the job kind of the items
	start func(context.Context) error
	stop  func(context.Context) error
}

// measureThroughput starts r with b.N items already inserted and times until
// River has reported b.N jobs of r's kind completed; then it stops r and
// calls verify. Jobs of other kinds (the workflow client's own maintenance
// jobs) are ignored.
func measureThroughput(b *testing.B, env *benchEnv, r benchRunner, verify func()) {
	b.Helper()
	events, cancelSub := r.river.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: b.N + 1000,
		Kinds: []river.EventKind{
			river.EventKindJobCompleted, river.EventKindJobFailed,
			river.EventKindJobCancelled, river.EventKindJobSnoozed,
		},
	})
	done := make(chan struct{})
	var unexpected atomic.Pointer[river.Event]
	go func() {
		completed := 0
		for ev := range events {
			if ev.Job.Kind != r.kind {
				continue
			}
			if ev.Kind != river.EventKindJobCompleted {
				unexpected.CompareAndSwap(nil, ev)
				close(done)
				return
			}
			if completed++; completed == b.N {
				close(done)
				return
			}
		}
	}()

	ctx := context.Background()
	env.tracer.reset(b, env)
	b.ResetTimer()
	perfFrom := monotonicSeconds()
	cpu := readBenchCPU()
	began := time.Now()
	if err := r.start(ctx); err != nil {
		b.Fatal(err)
	}
	var timedOut bool
	select {
	case <-done:
	case <-time.After(benchWaitTimeout):
		timedOut = true
	}
	elapsed := time.Since(began)
	b.StopTimer()
	benchPerfWindow(b, perfFrom, monotonicSeconds())
	reportCPU(b, cpu)

	stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := r.stop(stopCtx); err != nil {
		b.Fatal(err)
	}
	cancelSub() // closes events: the counting goroutine ends
	switch {
	case timedOut:
		b.Fatalf("%d jobs not done after %s", b.N, benchWaitTimeout)
	case unexpected.Load() != nil:
		ev := unexpected.Load()
		b.Fatalf("job %d (%s) ended %s: %v", ev.Job.ID, ev.Job.Kind, ev.Kind, ev.Job.Errors)
	}
	reportRate(b, elapsed)
	verify()
	env.tracer.report(b, env) // closes the pool
}

// riverRunner runs rc, whose items are jobs of kind.
func riverRunner(rc *river.Client[pgx.Tx], kind string) benchRunner {
	return benchRunner{river: rc, kind: kind, start: rc.Start, stop: rc.Stop}
}

// workflowRunner runs c, whose items are runs of def.
func workflowRunner(c *workflow.Client, def *workflow.Definition[int, int]) benchRunner {
	return benchRunner{river: c.River(), kind: def.Kind(), start: c.Start, stop: c.Stop}
}

func benchInsertRiver(b *testing.B, rc *river.Client[pgx.Tx], args func(i int) river.JobArgs) {
	b.Helper()
	const chunk = 5000
	for from := 0; from < b.N; from += chunk {
		params := make([]river.InsertManyParams, 0, chunk)
		for i := from; i < min(from+chunk, b.N); i++ {
			params = append(params, river.InsertManyParams{Args: args(i)})
		}
		if _, err := rc.InsertMany(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
}

func benchStartRuns(b *testing.B, env *benchEnv, c *workflow.Client, def *workflow.Definition[int, int]) {
	b.Helper()
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, env.pool, func(tx pgx.Tx) error {
		for i := 0; i < b.N; i++ {
			if _, err := def.StartTx(ctx, c, tx, i, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func BenchmarkRiverJobs0Steps(b *testing.B) {
	env := newBenchEnv(b)
	workers := river.NewWorkers()
	river.AddWorker(workers, &bench.NoopWorker{})
	rc := env.newRiverClient(b, workers)
	benchInsertRiver(b, rc, func(i int) river.JobArgs { return bench.NoopArgs{N: i} })

	measureThroughput(b, env, riverRunner(rc, bench.NoopArgs{}.Kind()), func() {
		if n := env.count(b, `SELECT count(*) FROM river_job WHERE state = 'completed'`); n != b.N {
			b.Fatalf("%d jobs completed, want %d", n, b.N)
		}
	})
}

func BenchmarkRiverJobs3Checkpoints(b *testing.B) {
	env := newBenchEnv(b)
	if _, err := env.pool.Exec(context.Background(), bench.CheckpointTableSQL(benchCheckpoints)); err != nil {
		b.Fatal(err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &bench.CheckpointWorker{Pool: env.pool, Table: benchCheckpoints})
	rc := env.newRiverClient(b, workers)
	benchInsertRiver(b, rc, func(i int) river.JobArgs { return bench.CheckpointArgs{N: i} })

	measureThroughput(b, env, riverRunner(rc, bench.CheckpointArgs{}.Kind()), func() {
		if n := env.count(b, `SELECT count(*) FROM river_job WHERE state = 'completed'`); n != b.N {
			b.Fatalf("%d jobs completed, want %d", n, b.N)
		}
		if n := env.count(b, `SELECT count(*) FROM `+benchCheckpoints); n != bench.Steps*b.N {
			b.Fatalf("%d checkpoints, want %d", n, bench.Steps*b.N)
		}
	})
}

func BenchmarkWorkflow0Steps(b *testing.B) {
	benchWorkflow(b, bench.ZeroSteps, 0, false)
}

func BenchmarkWorkflow3Steps(b *testing.B) {
	benchWorkflow(b, bench.ThreeSteps, bench.Steps, false)
}

// The same with Config.AsyncCompletion: completions do not wait for their
// WAL flush.

func BenchmarkWorkflow0StepsAsyncCompletion(b *testing.B) {
	benchWorkflow(b, bench.ZeroSteps, 0, true)
}

func BenchmarkWorkflow3StepsAsyncCompletion(b *testing.B) {
	benchWorkflow(b, bench.ThreeSteps, bench.Steps, true)
}

func benchWorkflow(b *testing.B, def *workflow.Definition[int, int], steps int, asyncCompletion bool) {
	env := newBenchEnv(b)
	config := env.clientConfig(true, def)
	config.AsyncCompletion = asyncCompletion
	c := env.newClient(b, config)
	benchStartRuns(b, env, c, def)

	measureThroughput(b, env, workflowRunner(c, def), func() {
		if n := env.count(b, `SELECT count(*) FROM workflow_runs WHERE status = 'completed'`); n != b.N {
			b.Fatalf("%d runs completed, want %d", n, b.N)
		}
		if n := env.count(b, `SELECT count(*) FROM step_runs WHERE status = 'completed'`); n != steps*b.N {
			b.Fatalf("%d steps completed, want %d", n, steps*b.N)
		}
	})
}
