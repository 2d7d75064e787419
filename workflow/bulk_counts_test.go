package workflow

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBulkResultCounts: what a dry run leaves, by status in the order a
// run goes through them (or by fork's reasons), and the skipped runs by
// reason, as the CLI and the dashboard say them.
func TestBulkResultCounts(t *testing.T) {
	t.Parallel()

	byStatus := map[Status]int{StatusCancelled: 1, StatusCompleted: 3, StatusFailed: 2, StatusWaiting: 4}
	cancel := &BulkResult{Action: BulkCancel, Matched: 10, Eligible: 4, ByStatus: byStatus}
	require.Equal(t, []BulkCount{{"completed", 3}, {"failed", 2}, {"cancelled", 1}}, cancel.Left())
	retry := &BulkResult{Action: BulkRetry, Matched: 10, Eligible: 3, ByStatus: byStatus}
	require.Equal(t, []BulkCount{{"waiting", 4}, {"completed", 3}}, retry.Left())
	fork := &BulkResult{Action: BulkFork, Matched: 10, Eligible: 5, ByStatus: byStatus}
	require.Equal(t, []BulkCount{{SkipNotFinished, 4}, {SkipStepNotRecorded, 1}}, fork.Left())
	require.Empty(t, (&BulkResult{Action: BulkRetry, Matched: 2, Eligible: 2, ByStatus: map[Status]int{StatusFailed: 2}}).Left())

	done := &BulkResult{Skipped: []SkippedRun{{Reason: "not failed"}, {Reason: "already finished"}, {Reason: "not failed"}}}
	require.Equal(t, []BulkCount{{"already finished", 1}, {"not failed", 2}}, done.SkippedByReason())
}
