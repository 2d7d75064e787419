package bench

// BenchmarkFairness is `tributary bench fairness` as a Go benchmark:
// RunFairness with its defaults (5,000 runs of key A, 10 of key B a second
// later, 100 ms steps, 20 workers; with -short 1,000 runs of A), on the
// test server. It makes no timed assertions, and its work is one run of
// the cases whatever b.N is; run it with -benchtime=1x:
//
//	go test -run '^$' -bench Fairness -benchtime=1x ./internal/bench/
//
// Its metrics are B's p99 latency in seconds with keys and without, A's
// makespan with keys over without, and the limit violations (0: no limit
// is checked).

import (
	"context"
	"strings"
	"testing"
)

func BenchmarkFairness(b *testing.B) {
	if b.N > 1 {
		b.Logf("b.N = %d: running the cases once all the same; use -benchtime=1x", b.N)
	}
	config := &FairnessConfig{}
	if testing.Short() {
		config.Big = 1000
	}
	admin := adminPool(b)
	var progress strings.Builder
	b.ResetTimer()
	res, err := RunFairness(context.Background(), admin, config, &progress)
	b.StopTimer()
	if err != nil {
		b.Fatalf("%v\n%s", err, progress.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(progress.String()), "\n") {
		b.Log(line)
	}

	b.ReportMetric(res.SmallKeyP99, "small_key_p99_s")
	b.ReportMetric(res.SmallKeyP99Unkeyed, "small_key_p99_s_unkeyed")
	b.ReportMetric(res.BigKeySlowdown, "big_key_slowdown")
	b.ReportMetric(float64(res.LimitViolations), "limit_violations")
	b.ReportMetric(0, "ns/op")
}
