package riverui

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

func TestDescribeCatchUp(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct {
		policy schedule.CatchUpPolicy
		window time.Duration
		want   string
	}{
		{schedule.CatchUpWindow, time.Minute, "a slot found late still runs if it is at most 1m past its time (each such slot once, oldest first); a later one is recorded as skipped (missed)"},
		{schedule.CatchUpWindow, 0, "a slot found late does not run: it is recorded as skipped (missed), and the schedule goes on from its next slot"},
		{schedule.CatchUpLatest, time.Hour, "a slot found late still runs if it is at most 1h past its time; beyond that, only the most recent missed slot runs, once, and older ones are recorded as skipped (missed)"},
		{schedule.CatchUpLatest, 0, "only the most recent missed slot runs, once; older missed slots are recorded as skipped (missed)"},
	} {
		require.Equal(t, tt.want, describeCatchUp(tt.policy, tt.window), "%s %s", tt.policy, tt.window)
	}
}
