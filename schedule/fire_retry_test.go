package schedule

import (
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// A failed firing pass is retried within seconds, not on River's default
// backoff (16 s after the second failure, 81 s after the third): its slots
// are due now.
func TestFireRetryDelay(t *testing.T) {
	t.Parallel()

	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i, d := range want {
		require.Equal(t, d, fireRetryDelay(i+1), "after attempt %d", i+1)
	}
	require.Equal(t, fireRetryMax, fireRetryDelay(25))

	w := &fireWorker{}
	before := time.Now()
	next := w.NextRetry(&river.Job[fireArgs]{JobRow: &rivertype.JobRow{Attempt: 3}})
	require.WithinRange(t, next, before.Add(time.Second), time.Now().Add(time.Second))
}
