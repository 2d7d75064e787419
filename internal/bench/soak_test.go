package bench

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestSoakShort is the soak's CI version: two minutes of the mixed load
// (SoakFlow with its sleep and signal, 200 every-minute schedules over 20
// owners, retention and River's cleaner deleting what is 30 s old): no
// start, signal or run fails, and the tables stay bounded by the
// retention. The curves are logged; `tributary bench soak` runs the long
// version.
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a load for two minutes; skipped under -short")
	}
	t.Parallel()

	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := RunSoak(ctx, db.Pool, &SoakConfig{
		Duration: 2 * time.Minute, Sample: 20 * time.Second, Rate: 10, Schedules: 200, Owners: 20,
		Retention: 30 * time.Second, Workers: 10,
	}, io.Discard)
	require.NoError(t, err)
	require.Len(t, res.Samples, 6)
	require.Positive(t, res.Started)
	require.Zero(t, res.Failed, "starts, signals or runs failed")
	for _, s := range res.Samples {
		require.Positive(t, s.HeapBytes)
		require.LessOrEqual(t, s.HeapBytes, s.HeapPeakBytes, "the lowest heap of a sample's interval is not above its highest")
		t.Logf("%s: %.1f runs/s, %d slots (lag p50 %s, p99 %s), heap %s, %d goroutines, rows: %d runs, %d steps, %d jobs, %d dead tuples",
			s.At, s.RunsPerSecond, s.Slots, s.LagP50.Round(time.Millisecond), s.LagP99.Round(time.Millisecond), FormatBytes(s.HeapBytes),
			s.Goroutines, s.Runs, s.Steps, s.Jobs, s.DeadTuples)
	}
	// With a retention of 30 s, deleting every few seconds, a run lives at
	// most a minute or so: the last sample holds no more runs than about
	// a minute and a half of the load (10 runs/s and 200 slots a minute).
	last := res.Samples[len(res.Samples)-1]
	require.Less(t, last.Runs, 90*10+2*200, "workflow_runs is bounded by the retention")
	// The checks are logged, not asserted: in a two-minute run beside the
	// package's other tests, the process's heap and goroutines are theirs
	// too (TestSoakChecks tests the verdicts).
	for _, c := range res.Checks {
		t.Logf("%s: %s, limit %s, ok %t", c.Name, c.Figure, c.Limit, c.OK)
	}
}

// TestSoakChecks judges made-up curves: flat ones pass every check; a
// heap that keeps growing, a throughput that sags, a lag that climbs and
// dead tuples that pile up each fail their own check, and only theirs.
func TestSoakChecks(t *testing.T) {
	t.Parallel()

	curve := func(change func(minute int, s *SoakSample)) *SoakResult {
		res := &SoakResult{}
		for minute := 1; minute <= 30; minute++ {
			s := &SoakSample{At: time.Duration(minute) * time.Minute, RunsPerSecond: 20, Slots: 1000, LagP50: 200 * time.Millisecond,
				HeapBytes: 8 << 20, Goroutines: 60, Runs: 7000, Steps: 15000, Jobs: 11000, DeadTuples: 300 + 200*(minute%3)}
			if change != nil {
				change(minute, s)
			}
			res.Samples = append(res.Samples, s)
		}
		res.check(5 * time.Minute)
		return res
	}
	failed := func(res *SoakResult) []string {
		var names []string
		for _, c := range res.Checks {
			if !c.OK {
				names = append(names, c.Name)
			}
		}
		return names
	}

	flat := curve(nil)
	require.Len(t, flat.Checks, 8)
	require.Empty(t, failed(flat))
	require.True(t, flat.OK())

	for _, tt := range []struct {
		check  string
		change func(minute int, s *SoakSample)
	}{
		{"heap", func(m int, s *SoakSample) { s.HeapBytes += uint64(m) << 18 }},
		{"goroutines", func(m int, s *SoakSample) { s.Goroutines += m }},
		{"workflow_runs rows", func(m int, s *SoakSample) { s.Runs += 100 * m }},
		{"throughput", func(m int, s *SoakSample) { s.RunsPerSecond -= float64(m) / 5 }},
		{"slot lag p50", func(m int, s *SoakSample) { s.LagP50 += time.Duration(m) * 10 * time.Millisecond }},
		{"dead tuples", func(m int, s *SoakSample) { s.DeadTuples += 3000 * m }},                     // autovacuum off
		{"dead tuples", func(m int, s *SoakSample) { s.DeadTuples += 10000 * min(max(m-20, 0), 1) }}, // it stopped
	} {
		res := curve(tt.change)
		require.Equal(t, []string{tt.check}, failed(res), tt.check)
		require.False(t, res.OK())
	}

	// Noise within the limits: a lag that wobbles by 80 ms, a heap by 5 %,
	// and dead tuples that peak higher and higher between autovacuum's
	// visits.
	noisy := curve(func(m int, s *SoakSample) {
		s.LagP50 += time.Duration(m%2) * 80 * time.Millisecond
		s.HeapBytes += uint64(m%2) * (8 << 20) / 20
		if m%4 == 0 {
			s.DeadTuples = 1000 * m
		}
	})
	require.Empty(t, failed(noisy))
}

// TestHeapReads: a sample's heap is the lowest and the highest read since
// the sample before, its own read included.
func TestHeapReads(t *testing.T) {
	t.Parallel()

	var h heapReads
	h.add(9 << 20)
	h.add(7 << 20)
	h.add(8 << 20)
	low, high := h.take(10 << 20)
	require.Equal(t, uint64(7<<20), low)
	require.Equal(t, uint64(10<<20), high)
	// The next sample starts afresh.
	low, high = h.take(6 << 20)
	require.Equal(t, uint64(6<<20), low)
	require.Equal(t, uint64(6<<20), high)
}
