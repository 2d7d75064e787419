package schedule

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestLeaderDeathCostsSeconds is issue 16's item 3: the client that leads
// River's maintenance is SIGKILLed (a process of its own) while an
// every-second schedule fires across two clients. Before the worker
// registry, the next slots waited for a new leader (16 s): only the dead
// client had timed them, and River's scheduler runs on the leader only.
// Now the survivor times every slot due next (each heartbeat arms the
// schedule queue's timers), rescues the dead client's running fire job
// and resigns its leadership: every slot after the kill runs within the
// schedule's catch-up window of 8 s (none is recorded as missed), and the
// survivor leads.
func TestLeaderDeathCostsSeconds(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, 2*time.Minute)

	helper := startFiringHelper(t, db)
	waitForOutput(t, helper, "firing helper: started")
	var helperID string
	pollFor(t, "the helper to lead", func(ctx context.Context) bool {
		return db.Pool.QueryRow(ctx, "SELECT leader_id FROM river_leader").Scan(&helperID) == nil
	})

	survivor := startClient(t, db, nil)
	survivorID := survivor.wf.River().ID()
	require.NotEqual(t, helperID, survivorID)

	s, err := survivor.Create(ctx, &Params{Name: "every second", Workflow: "tick", Cron: "* * * * * *",
		Overlap: OverlapAllow, CatchUpWindow: 8 * time.Second})
	require.NoError(t, err)
	pollFor(t, "3 runs of the schedule, which the helper may fire", func(ctx context.Context) bool {
		return countOf(t, db, "SELECT count(*) FROM workflow_runs WHERE schedule_id = $1", s.ID) >= 3
	})

	// Kill the helper right after it fired a slot: it queued the next
	// instant's fire job, and before the registry only it had timed it.
	pollFor(t, "the helper to fire a slot", func(ctx context.Context) bool {
		return countOf(t, db, `SELECT count(*) FROM river_job
			WHERE kind = 'tributary:schedule_fire' AND state = 'completed' AND attempted_by[cardinality(attempted_by)] = $1
				AND finalized_at > now() - interval '300 ms'`, helperID) >= 1
	})
	require.NoError(t, helper.cmd.Process.Kill())
	<-helper.exited
	killedAt := time.Now()

	// Ten slots after the kill.
	from, to := killedAt.Truncate(time.Second).Add(time.Second), killedAt.Truncate(time.Second).Add(10*time.Second)
	waitCount(t, db, time.Minute, 1, "SELECT count(*) FROM workflow_runs WHERE schedule_id = $1 AND fire_at > $2", s.ID, to)

	rows, err := db.Pool.Query(ctx, `SELECT fire_at, status, coalesce(skip_reason, ''), extract(epoch FROM created_at - fire_at)
		FROM workflow_runs WHERE schedule_id = $1 AND fire_at BETWEEN $2 AND $3 ORDER BY fire_at`, s.ID, from, to)
	require.NoError(t, err)
	var (
		lags    []float64
		skipped []string
	)
	for rows.Next() {
		var (
			at             time.Time
			status, reason string
			lag            float64
		)
		require.NoError(t, rows.Scan(&at, &status, &reason, &lag))
		if status == "skipped" {
			skipped = append(skipped, at.UTC().Format(time.TimeOnly)+" "+reason)
			continue
		}
		lags = append(lags, lag)
	}
	require.NoError(t, rows.Err())
	require.Empty(t, skipped, "a slot after the kill was skipped")
	require.Len(t, lags, 10, "every slot after the kill has its run")
	slices.Sort(lags)
	t.Logf("slot lag after the leader's death (fired minus due): p50 %.2fs, max %.2fs", lags[len(lags)/2], lags[len(lags)-1])

	var leader string
	pollFor(t, "the survivor to lead", func(ctx context.Context) bool {
		return db.Pool.QueryRow(ctx, "SELECT leader_id FROM river_leader").Scan(&leader) == nil && leader == survivorID
	})
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM tributary_workers WHERE client_id = $1", helperID), "the dead client's row is gone")
}

func countOf(t *testing.T, db *testdb.DB, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, db.Pool.QueryRow(ctxT(t, 10*time.Second), query, args...).Scan(&n))
	return n
}
