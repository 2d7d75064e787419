package bench

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunRetention runs both phases twice on a small scale: the retention
// deletes old runs while the workflows run, and the workflows all complete
// either way.
func TestRunRetention(t *testing.T) {
	t.Parallel()

	admin := adminPool(t)
	var progress bytes.Buffer
	res, err := RunRetention(context.Background(), admin, &RetentionConfig{OldRuns: 20_000, Items: 300, Rounds: 2, Workers: testWorkers}, &progress)
	require.NoError(t, err, progress.String())
	require.Len(t, res.Rounds, 4)
	require.False(t, res.Rounds[0].Retention, "the first round runs without, then with")
	require.True(t, res.Rounds[2].Retention, "the second round runs with, then without")
	for _, r := range res.Rounds {
		require.Positive(t, r.Rate)
		if r.Retention {
			require.Positive(t, r.Deleted, "the retention deleted old runs meanwhile")
		} else {
			require.Zero(t, r.Deleted)
		}
	}
	require.Positive(t, res.Ratio)
	require.Contains(t, progress.String(), "seeding 20000 old runs")
}
