package bench

// BenchmarkRate is `tributary bench rate` as a Go benchmark: RunRate with
// its defaults (a rate of 50 a second for one tenant over 30 s, across 3
// clients of 20 workers; with -short over 10 s), on the test server. It
// makes no timed assertions, and its work is one run whatever b.N is; run
// it with -benchtime=1x:
//
//	go test -run '^$' -bench Rate -benchtime=1x ./internal/bench/
//
// Its metrics are the starts per second, the most and the fewest starts in
// any one-second window, and the whole seconds above the rate plus 10 %.

import (
	"context"
	"strings"
	"testing"
	"time"
)

func BenchmarkRate(b *testing.B) {
	if b.N > 1 {
		b.Logf("b.N = %d: running the bench once all the same; use -benchtime=1x", b.N)
	}
	config := &RateConfig{}
	if testing.Short() {
		config.Duration = 10 * time.Second
	}
	admin := adminPool(b)
	var progress strings.Builder
	b.ResetTimer()
	res, err := RunRate(context.Background(), admin, config, &progress)
	b.StopTimer()
	if err != nil {
		b.Fatalf("%v\n%s", err, progress.String())
	}
	b.Log(strings.TrimSpace(progress.String()))
	b.Logf("starts per second: %v; per client: %v", res.PerSecond, res.PerClient)

	b.ReportMetric(res.StartsPerSecond, "starts/s")
	b.ReportMetric(float64(res.MaxInAnySecond), "max_in_any_second")
	b.ReportMetric(float64(res.MinInAnySecond), "min_in_any_second")
	b.ReportMetric(float64(res.SecondsOverLimit), "seconds_over_limit")
	b.ReportMetric(0, "ns/op")
}
