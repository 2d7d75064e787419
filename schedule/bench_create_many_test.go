package schedule

import (
	"testing"

	"github.com/tributary-go/tributary/internal/testdb"
)

// BenchmarkCreateMany creates MaxCreateMany (10,000) yearly schedules in one
// CreateMany, once per invocation whatever b.N is (run it with
// -benchtime=1x, like the benchmarks of bench_db_test.go), and reports
// schedules/s. They share one first slot: one fire job.
func BenchmarkCreateMany(b *testing.B) {
	if b.N > 1 {
		b.Logf("b.N = %d: creating %d schedules once all the same; use -benchtime=1x", b.N, MaxCreateMany)
	}
	db := testdb.New(b)
	pool := dbBenchPool(b, db)
	sc := dbBenchInsertOnly(b, pool, db.Schema)
	ctx := dbBenchCtx(b)
	params := make([]*Params, MaxCreateMany)
	for i := range params {
		params[i] = dbBenchYearlyParams(i)
	}

	b.ResetTimer()
	created, err := sc.CreateMany(ctx, params)
	b.StopTimer()
	took := b.Elapsed()
	if err != nil {
		b.Fatal(err)
	}
	var schedules, jobs int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM schedules), (SELECT count(*) FROM river_job WHERE kind = 'tributary:schedule_fire')`).Scan(&schedules, &jobs); err != nil {
		b.Fatal(err)
	}
	if len(created) != MaxCreateMany || schedules != MaxCreateMany || jobs != 1 {
		b.Fatalf("%d schedules returned, %d stored and %d fire jobs, want %d, %d and 1", len(created), schedules, jobs, MaxCreateMany, MaxCreateMany)
	}
	b.ReportMetric(took.Seconds(), "total-s")
	b.ReportMetric(float64(MaxCreateMany)/took.Seconds(), "schedules/s")
	b.ReportMetric(0, "ns/op")
}
