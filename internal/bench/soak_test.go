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
		t.Logf("%s: %.1f runs/s, %d slots (lag p50 %s, p99 %s), heap %s, %d goroutines, rows: %d runs, %d steps, %d jobs, %d dead tuples",
			s.At, s.RunsPerSecond, s.Slots, s.LagP50.Round(time.Millisecond), s.LagP99.Round(time.Millisecond), FormatBytes(s.HeapBytes),
			s.Goroutines, s.Runs, s.Steps, s.Jobs, s.DeadTuples)
	}
	// With a retention of 30 s, deleting every few seconds, a run lives at
	// most a minute or so: the last sample holds no more runs than about
	// a minute and a half of the load (10 runs/s and 200 slots a minute).
	last := res.Samples[len(res.Samples)-1]
	require.Less(t, last.Runs, 90*10+2*200, "workflow_runs is bounded by the retention")
	t.Logf("growth from the warm-up to the end: %v", res.Growth)
}
