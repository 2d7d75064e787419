package schedule

import (
	"fmt"
	"testing"
	"time"

	"github.com/tributary-go/tributary/internal/testdb"
)

// BenchmarkKeys measures what keys cost where a service meets them at
// start-up, once per invocation whatever b.N is (run it with
// -benchtime=1x): CreateMany of MaxCreateMany (10,000) keyed schedules, one
// per user, on an empty table; the same CreateMany again, a restart, where
// every key exists; and Declare of 1,000 schedules, created, then unchanged
// at the next start. It reports each one's seconds and schedules/s; compare
// the first with BenchmarkCreateMany (the same schedules without keys).
func BenchmarkKeys(b *testing.B) {
	db := testdb.New(b)
	pool := dbBenchPool(b, db)
	sc := dbBenchInsertOnly(b, pool, db.Schema)
	ctx := dbBenchCtx(b)
	params := make([]*Params, MaxCreateMany)
	for i := range params {
		params[i] = dbBenchYearlyParams(i)
		params[i].Owner, params[i].Key = fmt.Sprintf("user-%d", i), "digest"
	}
	timed := func(name string, n int, fn func() error) {
		start := time.Now()
		if err := fn(); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		took := time.Since(start)
		b.ReportMetric(took.Seconds(), name+"-s")
		b.ReportMetric(float64(n)/took.Seconds(), name+"-schedules/s")
	}
	b.ResetTimer()
	timed("create", MaxCreateMany, func() error { _, err := sc.CreateMany(ctx, params); return err })
	timed("restart", MaxCreateMany, func() error {
		found, err := sc.CreateMany(ctx, params)
		for _, s := range found {
			if err == nil && !s.Existing {
				err = fmt.Errorf("schedule %s of %s was made again", s.Key, s.Owner)
			}
		}
		return err
	})
	decl := &Declaration{Service: "bench"}
	for i := range 1000 {
		decl.Schedules = append(decl.Schedules, &Params{Name: "report", Key: fmt.Sprintf("report-%d", i), Workflow: "tick", Cron: "0 2 * * *"})
	}
	timed("declare", 1000, func() error { _, err := sc.Declare(ctx, decl); return err })
	timed("redeclare", 1000, func() error {
		res, err := sc.Declare(ctx, decl)
		if err == nil && res.String() != "1000 unchanged" {
			err = fmt.Errorf("the second declaration did %s", res)
		}
		return err
	})
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
}
