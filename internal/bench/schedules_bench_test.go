package bench

// BenchmarkSchedulesDue is `tributary bench schedules` as a Go benchmark:
// RunSchedules with 1,000 and 10,000 slots due in the same second and 20
// workers, on the test server. It makes no timed assertions, and its work
// is one round whatever b.N is; run it with -benchtime=1x:
//
//	go test -run '^$' -bench SchedulesDue -benchtime=1x ./internal/bench/
//
// Its metrics are the lags in milliseconds of Tributary's warm case and of
// River's periodic jobs (p50, p99, max), their slots per second, and
// Tributary's p99 over River's.

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

func BenchmarkSchedulesDue(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchSchedulesDue(b, n) })
	}
}

func benchSchedulesDue(b *testing.B, n int) {
	if b.N > 1 {
		b.Logf("b.N = %d: firing %d slots once all the same; use -benchtime=1x", b.N, n)
	}
	admin := adminPool(b)
	var progress strings.Builder
	b.ResetTimer()
	res, err := RunSchedules(context.Background(), admin, &SchedulesConfig{Due: n}, &progress)
	b.StopTimer()
	if err != nil {
		b.Fatalf("%v\n%s", err, progress.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(progress.String()), "\n") {
		b.Log(line)
	}

	for _, c := range res.Cases {
		short, _, _ := strings.Cut(c.Key, "_") // tributary or river
		b.ReportMetric(c.Lag.P50, short+"-p50-ms")
		b.ReportMetric(c.Lag.P99, short+"-p99-ms")
		b.ReportMetric(c.Lag.Max, short+"-max-ms")
		b.ReportMetric(c.Rate, short+"-slots/s")
	}
	b.ReportMetric(res.Ratios[0].Value, "p99-ratio")
	b.ReportMetric(0, "ns/op")
}
