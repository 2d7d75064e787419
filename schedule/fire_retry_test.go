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

	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	w := &fireWorker{c: &Client{clock: func() time.Time { return now }}}
	next := w.NextRetry(&river.Job[fireArgs]{JobRow: &rivertype.JobRow{Attempt: 3}})
	require.Equal(t, now.Add(time.Second), next, "by the client's clock, which River's executor compares it with")
}
