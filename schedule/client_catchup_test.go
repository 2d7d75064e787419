package schedule

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestReconcileRepairsBrokenChain(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := startClients(t, db, 1)[0]
	ctx := ctxT(t, 60*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "fragile", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow, CatchUpWindow: time.Hour})
	require.NoError(t, err)
	waitRuns(t, db, s.ID, 1, 30*time.Second)

	n, err := sc.Reconcile(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "a healthy chain is not touched")

	// Break the chain the way an operator can: delete the pending slot's job
	// from River's table (River UI's delete does the same). A fire job
	// running meanwhile inserts the next instant's job when it ends, so
	// delete until, with none running, none is left.
	breakDeadline := time.Now().Add(30 * time.Second)
	for {
		_, err = db.Pool.Exec(ctx, "DELETE FROM river_job WHERE kind = 'tributary:schedule_fire' AND state IN ('scheduled', 'available', 'retryable')")
		require.NoError(t, err)
		var running, pending int
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'running'), count(*) FILTER (WHERE state IN ('scheduled', 'available', 'retryable'))
			FROM river_job WHERE kind = 'tributary:schedule_fire'`).Scan(&running, &pending))
		if running == 0 && pending == 0 {
			break
		}
		require.True(t, time.Now().Before(breakDeadline), "a fire job kept running or coming back for 30 s")
		time.Sleep(20 * time.Millisecond)
	}
	var (
		before int
		next   time.Time
	)
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*), (SELECT next_fire_at FROM schedules WHERE id = $1) FROM workflow_runs WHERE schedule_id = $1",
		s.ID).Scan(&before, &next))

	// Once the next slot is overdue (by reconcileGrace), Reconcile re-seeds
	// it and firing resumes; the slots missed meanwhile run once each (the
	// catch-up window is an hour), none twice.
	waitUntil(t, next.Add(reconcileGrace+100*time.Millisecond))
	n, err = sc.Reconcile(ctx)
	require.NoError(t, err)
	require.Positive(t, n, "the chain was not found broken")
	waitRuns(t, db, s.ID, before+3, 30*time.Second)
	var runs, distinct int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*), count(DISTINCT fire_at) FROM workflow_runs WHERE schedule_id = $1", s.ID).Scan(&runs, &distinct))
	require.Equal(t, runs, distinct)
}

// TestDowntimeSkipsMissedSlots: slots found later than the catch-up window
// are recorded as skipped ("missed") and the chain jumps to the next future
// slot: a restart never mass-fires.
func TestDowntimeSkipsMissedSlots(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, 60*time.Second)
	s, err := insertOnly(t, db).Create(ctx, &Params{Name: "d", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow, CatchUpWindow: time.Second})
	require.NoError(t, err)
	// Downtime: nobody works jobs until the first slot is three seconds
	// overdue.
	waitUntil(t, s.NextFireAt.Add(3*time.Second))

	startClients(t, db, 1)
	waitRuns(t, db, s.ID, 3, 30*time.Second)
	var (
		missed []string
		ran    int
	)
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT array_agg(skip_reason) FILTER (WHERE skip_reason LIKE 'missed%'), count(*) FILTER (WHERE status <> 'skipped')
		FROM workflow_runs WHERE schedule_id = $1`, s.ID).Scan(&missed, &ran))
	require.Len(t, missed, 1, "the overdue slot is recorded as missed; the slots in between never get a job")
	var first time.Time
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT min(fire_at) FROM workflow_runs WHERE schedule_id = $1 AND status <> 'skipped'`, s.ID).Scan(&first))
	require.Greater(t, first.Sub(*s.NextFireAt), 3*time.Second, "firing resumed at a future slot")

	// The missed row accounts for every slot the chain passed over: from the
	// one after it to the one before the first that ran.
	from, to := s.NextFireAt.Add(time.Second).UTC(), first.Add(-time.Second).UTC()
	require.Equal(t, fmt.Sprintf("missed; the chain also passed over %d later slots, from %s to %s",
		int(to.Sub(from)/time.Second)+1, from.Format(time.RFC3339), to.Format(time.RFC3339)), missed[0])
}

func TestMissedReason(t *testing.T) {
	t.Parallel()

	everySecond, err := ParseSpec("* * * * * *", "UTC")
	require.NoError(t, err)
	at := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	require.Equal(t, "missed", missedReason(everySecond, followingOf(everySecond, at), at.Add(500*time.Millisecond)), "no later slot passed over")
	require.Equal(t, "missed; the chain also passed over 1 later slot, from 2026-11-25T08:00:01Z to 2026-11-25T08:00:01Z",
		missedReason(everySecond, followingOf(everySecond, at), at.Add(1500*time.Millisecond)))
	require.Equal(t, "missed; the chain also passed over more than 1000 later slots, from 2026-11-25T08:00:01Z to 2026-11-26T08:00:00Z",
		missedReason(everySecond, followingOf(everySecond, at), at.Add(24*time.Hour)), "a day of a per-second schedule: one row, the count bounded")
	require.Equal(t, SkipReasonMissed, skipKind(missedReason(everySecond, followingOf(everySecond, at), at.Add(time.Hour))))
}

func TestResumeMissedPolicies(t *testing.T) {
	t.Parallel()

	for _, missed := range []MissedPolicy{MissedSkip, MissedLatest, MissedBackfill} {
		t.Run(string(missed), func(t *testing.T) {
			t.Parallel()

			db := testdb.New(t)
			sc := insertOnly(t, db)
			ctx := ctxT(t, 60*time.Second)
			s, err := sc.Create(ctx, &Params{Name: "m", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow, Paused: true})
			require.NoError(t, err)
			// Three slots pass while it is paused.
			waitUntil(t, s.PausedAt.Add(3500*time.Millisecond))
			_, err = sc.Resume(ctx, ByID(s.ID), &ResumeOpts{Missed: missed})
			require.NoError(t, err)
			// The slots missed by the time Resume returned: a slow Resume
			// (CI under -race) may find the latest missed slot a second
			// later than the test's clock before the call. A slot
			// prepared by Resume is not one of them.
			resumedBy := time.Now()

			var n int
			require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM workflow_runs r WHERE schedule_id = $1 AND fire_at <= $2 AND "+notPreparedRun, s.ID, resumedBy).Scan(&n))
			switch missed {
			case MissedSkip:
				require.Zero(t, n)
			case MissedLatest:
				require.Equal(t, 1, n)
			case MissedBackfill:
				require.GreaterOrEqual(t, n, 3)
				// No slot twice, among all the runs.
				var all, distinct int
				require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*), count(DISTINCT fire_at) FROM workflow_runs WHERE schedule_id = $1", s.ID).Scan(&all, &distinct))
				require.Equal(t, all, distinct)
			}
		})
	}
}

func TestCatchUpLatest(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, 60*time.Second)
	s, err := insertOnly(t, db).Create(ctx, &Params{Name: "l", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow,
		CatchUpWindow: time.Second, CatchUp: CatchUpLatest})
	require.NoError(t, err)
	waitUntil(t, s.NextFireAt.Add(4*time.Second))
	startedAt := time.Now()
	startClients(t, db, 1)
	waitRuns(t, db, s.ID, 3, 30*time.Second)

	// The overdue slot is recorded as missed, the most recent missed slot
	// runs once, and nothing in between.
	var missed, ranBefore int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE skip_reason LIKE 'missed%'),
		count(*) FILTER (WHERE status <> 'skipped' AND fire_at < $2)
		FROM workflow_runs WHERE schedule_id = $1`, s.ID, startedAt.Add(-500*time.Millisecond)).Scan(&missed, &ranBefore))
	if missed != 1 {
		rows, _ := db.Pool.Query(ctx, "SELECT fire_at, status, coalesce(skip_reason,''), created_at FROM workflow_runs WHERE schedule_id = $1 ORDER BY fire_at", s.ID)
		for rows.Next() {
			var a, c time.Time
			var st, r string
			_ = rows.Scan(&a, &st, &r, &c)
			t.Logf("%s %s %s created %s", a.Format("15:04:05.000"), st, r, c.Format("15:04:05.000"))
		}
		t.Logf("next was %s, clients started %s", s.NextFireAt.Format("15:04:05.000"), startedAt.Format("15:04:05.000"))
	}
	require.Equal(t, 1, missed)
	require.LessOrEqual(t, ranBefore, 1, "at most the latest missed slot ran")
}
