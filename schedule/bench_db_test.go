package schedule

// Benchmarks of schedules on a real Postgres: creating them and reconciling
// many healthy ones. They make no timed
// assertions. The big ones do their work once per invocation whatever b.N
// is; run them with -benchtime=1x:
//
//	go test -run '^$' -bench 'Create|Reconcile' -benchtime=1x ./schedule/
//
// Slots due in the same second are measured against River's periodic jobs
// by internal/bench (BenchmarkSchedulesDue, tributary bench schedules).
//
// BenchmarkCreate/Each and BenchmarkReconcileHealthy/Pass are ordinary
// per-op benchmarks (-benchtime=2000x and -benchtime=50x give steady
// figures; ReconcileHealthy seeds its 100,000 schedules once, in the parent).

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

const (
	dbBenchMany      = 100_000     // schedules of Create/Tx100k and ReconcileHealthy
	dbBenchBatch     = 1_000       // schedules per CreateTx transaction
	dbBenchPoolConns = 40          // MaxConns of the benchmarks' pool
	dbBenchWorkers   = 20          // MaxWorkers of the working client
	dbBenchYearly    = "0 0 1 1 *" // next slot weeks away: no wake timer, never due
	dbBenchTimeout   = 10 * time.Minute
)

// dbBenchPool opens a pool on db's schema big enough for a working client,
// closed before testdb drops the schema.
func dbBenchPool(b *testing.B, db *testdb.DB) *pgxpool.Pool {
	b.Helper()
	config, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		b.Fatal(err)
	}
	config.MaxConns = dbBenchPoolConns
	config.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{db.Schema}.Sanitize()
	pool, err := pgxpool.NewWithConfig(context.Background(), config)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return pool
}

// dbBenchInsertOnly is a schedule client on an insert-only workflow client:
// it creates schedules, and nothing works their slots.
func dbBenchInsertOnly(b *testing.B, pool *pgxpool.Pool, schema string) *Client {
	b.Helper()
	wf, err := workflow.NewClient(pool, &workflow.Config{Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	sc, err := New(wf, nil)
	if err != nil {
		b.Fatal(err)
	}
	return sc
}

// dbBenchCreate creates n schedules with CreateTx, batch to a transaction,
// and returns how long that took.
func dbBenchCreate(ctx context.Context, b *testing.B, sc *Client, pool *pgxpool.Pool, n, batch int, params func(i int) *Params) time.Duration {
	b.Helper()
	start := time.Now()
	for done := 0; done < n; {
		k := min(batch, n-done)
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			for i := range k {
				if _, err := sc.CreateTx(ctx, tx, params(done+i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatalf("creating schedules %d to %d: %v", done, done+k, err)
		}
		done += k
	}
	return time.Since(start)
}

func dbBenchYearlyParams(i int) *Params {
	return &Params{Name: "yearly " + strconv.Itoa(i), Owner: "bench", Workflow: "tick", Cron: dbBenchYearly}
}

func dbBenchCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), dbBenchTimeout)
	b.Cleanup(cancel)
	return ctx
}

// BenchmarkCreate creates schedules: Each one per Create (its own
// transaction), b.N of them; Tx100k 100,000 in transactions of
// dbBenchBatch, once per invocation (run it with -benchtime=1x).
func BenchmarkCreate(b *testing.B) {
	b.Run("Each", func(b *testing.B) {
		db := testdb.New(b)
		pool := dbBenchPool(b, db)
		sc := dbBenchInsertOnly(b, pool, db.Schema)
		ctx := dbBenchCtx(b)
		i := 0
		for b.Loop() {
			if _, err := sc.Create(ctx, dbBenchYearlyParams(i)); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "creates/s")
	})

	b.Run("Tx100k", func(b *testing.B) {
		if b.N > 1 {
			b.Logf("b.N = %d: creating %d schedules once all the same; use -benchtime=1x", b.N, dbBenchMany)
		}
		db := testdb.New(b)
		pool := dbBenchPool(b, db)
		sc := dbBenchInsertOnly(b, pool, db.Schema)
		ctx := dbBenchCtx(b)
		b.ResetTimer()
		took := dbBenchCreate(ctx, b, sc, pool, dbBenchMany, dbBenchBatch, dbBenchYearlyParams)
		b.StopTimer()
		var schedules, jobs int
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM schedules), (SELECT count(*) FROM river_job WHERE kind = 'tributary:schedule_fire')`).Scan(&schedules, &jobs); err != nil {
			b.Fatal(err)
		}
		if schedules != dbBenchMany || jobs != dbBenchMany {
			b.Fatalf("%d schedules and %d fire jobs, want %d of each", schedules, jobs, dbBenchMany)
		}
		b.ReportMetric(took.Seconds(), "total-s")
		b.ReportMetric(float64(dbBenchMany)/took.Seconds(), "creates/s")
		b.ReportMetric(0, "ns/op")
	})
}

// BenchmarkReconcileHealthy times Reconcile over 100,000 healthy schedules
// (their next slot is weeks away): it must read only overdue ones, through
// the schedules_next_fire index. The parent seeds them once and EXPLAINs the
// reconciler's query; Pass times b.N passes.
func BenchmarkReconcileHealthy(b *testing.B) {
	db := testdb.New(b)
	pool := dbBenchPool(b, db)
	sc := dbBenchInsertOnly(b, pool, db.Schema)
	ctx := dbBenchCtx(b)
	took := dbBenchCreate(ctx, b, sc, pool, dbBenchMany, 5*dbBenchBatch, dbBenchYearlyParams)
	// A parent benchmark's log is shown only with -v: Pass logs these.
	logs := []string{fmt.Sprintf("seeded %d healthy schedules in %s (%.0f/s)", dbBenchMany, took.Round(time.Millisecond), float64(dbBenchMany)/took.Seconds())}
	logs = append(logs, dbBenchExplainOverdue(ctx, b, pool, sc, "before ANALYZE")...)
	if _, err := pool.Exec(ctx, "ANALYZE schedules"); err != nil {
		b.Fatal(err)
	}
	logs = append(logs, dbBenchExplainOverdue(ctx, b, pool, sc, "after ANALYZE")...)

	logged := false
	b.Run("Pass", func(b *testing.B) {
		if !logged {
			for _, l := range logs {
				b.Log(l)
			}
			logged = true
		}
		for b.Loop() {
			n, err := sc.Reconcile(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if n != 0 {
				b.Fatalf("Reconcile found %d overdue schedules among healthy ones", n)
			}
		}
	})
}

// dbBenchExplainOverdue EXPLAINs the reconciler's query with a custom and a
// generic plan (pgx prepares it; Postgres may switch to the generic one),
// returns the plans and whether they use schedules_next_fire, and fails the
// benchmark when one scans the schedules table.
func dbBenchExplainOverdue(ctx context.Context, b *testing.B, pool *pgxpool.Pool, sc *Client, when string) []string {
	b.Helper()
	var logs []string
	for _, mode := range []string{"custom plan", "generic plan"} {
		var plan []string
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			due := time.Now().Add(-reconcileGrace)
			explain, args := "EXPLAIN (ANALYZE, BUFFERS) "+sc.q.AnyDueSQL(), []any{due, nil}
			if mode == "generic plan" {
				// A plan for any $1, as a prepared statement gets after
				// a few executions.
				if _, err := tx.Exec(ctx, "PREPARE dbbench_overdue(timestamptz, uuid[]) AS "+sc.q.AnyDueSQL()); err != nil {
					return err
				}
				defer func() { _, _ = tx.Exec(ctx, "DEALLOCATE dbbench_overdue") }()
				if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_generic_plan"); err != nil {
					return err
				}
				explain, args = "EXPLAIN (ANALYZE, BUFFERS) EXECUTE dbbench_overdue($1, NULL)", []any{due}
			}
			rows, err := tx.Query(ctx, explain, args...)
			if err != nil {
				return err
			}
			plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if err != nil {
			b.Fatalf("EXPLAIN the overdue query: %v", err)
		}
		text := strings.Join(plan, "\n")
		usesIndex := strings.Contains(text, "schedules_next_fire")
		seqScan := strings.Contains(text, "Seq Scan")
		// Benchmark logs keep 10 lines: one line per plan, its nodes and
		// timings.
		var brief []string
		for _, line := range plan {
			line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "->"))
			if strings.Contains(line, "(cost=") {
				line = line[:strings.Index(line, "(cost=")] + "rows " + dbBenchActualRows(line)
			}
			if !strings.HasPrefix(line, "Buffers:") && !strings.HasPrefix(line, "Planning:") {
				brief = append(brief, strings.TrimSpace(line))
			}
		}
		logs = append(logs, fmt.Sprintf("overdue query, %s, %s: uses schedules_next_fire: %t, seq scan: %t: %s",
			when, mode, usesIndex, seqScan, strings.Join(brief, "; ")))
		if seqScan || !usesIndex {
			b.Errorf("the reconciler's query (%s, %s) does not read through schedules_next_fire: it scans all schedules\n%s", when, mode, text)
		}
	}
	return logs
}

// dbBenchActualRows is the "actual … rows=N" of an EXPLAIN ANALYZE node.
func dbBenchActualRows(line string) string {
	_, actual, ok := strings.Cut(line, "(actual ")
	if !ok {
		return "?"
	}
	_, rows, _ := strings.Cut(actual, "rows=")
	rows, _, _ = strings.Cut(rows, " ")
	return rows
}
