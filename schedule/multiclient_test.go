package schedule

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// mcFireWindow is how long TestManyClientsFireEachSlotOnce fires its
// every-second schedule: about one slot per second of it.
const mcFireWindow = 30 * time.Second

// TestManyClientsFireEachSlotOnce runs N working clients against one
// database, all competing for the slots of one every-second schedule, for
// mcFireWindow. Every slot between the first and the last fires exactly
// once: consecutive fire_at one second apart, no gap, no duplicate, none
// skipped, and the schedule's run_count equals its runs. It logs how late
// the slots started (no assertion on time).
func TestManyClientsFireEachSlotOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("fires an every-second schedule for 30 s per subtest on 2 and 5 clients; skipped under -short")
	}
	t.Parallel()

	for _, tc := range []struct {
		name    string
		clients int
	}{
		{"TwoClients", 2},
		{"FiveClients", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.clients > 2 {
				testdb.ManyConnections(t)
			}
			testManyClientsFireEachSlotOnce(t, tc.clients)
		})
	}
}

func testManyClientsFireEachSlotOnce(t *testing.T, n int) {
	db := testdb.New(t)
	clients := startClients(t, db, n)
	ctx := ctxT(t, mcFireWindow+2*time.Minute)

	s, err := clients[0].Create(ctx, &Params{Name: "every second", Owner: "ops", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.NoError(t, err)
	require.NotNil(t, s.NextFireAt)

	// About mcFireWindow of firing: one slot per second. The deadline leaves
	// room for a slow (race-detector) run; a chain that stalls fails here.
	slots := int(mcFireWindow / time.Second)
	waitRuns(t, db, s.ID, slots, mcFireWindow+time.Minute)
	paused, err := clients[n-1].Pause(ctx, ByID(s.ID), "test over")
	require.NoError(t, err)
	require.True(t, paused.Paused)
	require.Nil(t, paused.NextFireAt)

	// Pause committed: the pending slot's job finds the schedule paused and
	// starts nothing, so the ledger is final.
	var runs, distinct, skipped int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT fire_at), count(*) FILTER (WHERE status = 'skipped')
		FROM workflow_runs WHERE schedule_id = $1`, s.ID).Scan(&runs, &distinct, &skipped))
	require.Equal(t, runs, distinct, "a slot fired twice")
	require.Zero(t, skipped, "a slot was skipped")
	require.GreaterOrEqual(t, runs, slots)

	fired := mcFireTimes(ctx, t, db, s.ID)
	require.Len(t, fired, runs)
	require.True(t, fired[0].Equal(*s.NextFireAt), "the first slot %s is the one Create scheduled (%s)", fired[0], *s.NextFireAt)
	for i := 1; i < len(fired); i++ {
		require.Equal(t, time.Second, fired[i].Sub(fired[i-1]), "slots %s and %s: a gap or a duplicate", fired[i-1], fired[i])
	}

	got, err := clients[0].Get(ctx, ByID(s.ID))
	require.NoError(t, err)
	require.EqualValues(t, runs, got.RunCount, "run_count")
	require.NotNil(t, got.LastFireAt)
	require.True(t, got.LastFireAt.Equal(fired[len(fired)-1]), "last_fire_at %s, last run's slot %s", got.LastFireAt, fired[len(fired)-1])

	// One fire job per instant (the test's database holds this schedule
	// alone), whichever client worked it; how the instants spread over the
	// clients, and whether any fire job had to retry.
	var fireJobs, fireJobSlots, fireJobErrors int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT args->>'fire_at'), count(*) FILTER (WHERE errors IS NOT NULL)
		FROM river_job WHERE kind = 'tributary:schedule_fire'`).Scan(&fireJobs, &fireJobSlots, &fireJobErrors))
	require.Equal(t, fireJobs, fireJobSlots, "one fire job per instant")
	perClient := map[string]int{}
	rows, err := db.Pool.Query(ctx, `SELECT coalesce(attempted_by[array_length(attempted_by, 1)], '-'), count(*)
		FROM river_job WHERE kind = 'tributary:schedule_fire' AND state = 'completed' GROUP BY 1`)
	require.NoError(t, err)
	for rows.Next() {
		var (
			by    string
			count int
		)
		require.NoError(t, rows.Scan(&by, &count))
		perClient[by] = count
	}
	require.NoError(t, rows.Err())

	// Accuracy: wait for the runs to finish (started_at is written then),
	// and measure each slot's lateness.
	waitDB(t, db, 30*time.Second, func(ctx context.Context) error {
		var unfinished int
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM workflow_runs WHERE schedule_id = $1 AND status <> 'completed'`, s.ID).Scan(&unfinished))
		if unfinished > 0 {
			return fmt.Errorf("%d runs not completed", unfinished)
		}
		return nil
	})
	lat := mcSlotLatencies(ctx, t, db, &s.ID)
	t.Logf("%d clients: %d slots fired once each, %s to %s; fire jobs %d (with errors: %d), worked per client %v",
		n, runs, fired[0].Format(time.TimeOnly), fired[len(fired)-1].Format(time.TimeOnly), fireJobs, fireJobErrors, perClient)
	t.Logf("%d clients: fire job attempted_at - fire_at: %s; first slots: %.1f ms; latest: slot %d of %d", n, lat.fire, lat.firstFire, lat.worstFire+1, runs)

	// A wake-up timer makes its fire job available with scheduled_at = the
	// moment it woke it. A fire job whose scheduled_at is still exactly its
	// slot was made available by River's scheduler instead, which moves jobs
	// due within its next interval (5 s) to available ahead of time; the
	// timer then finds it available and does nothing, and the producers
	// fetch it on their next poll.
	var notWoken int
	var notWokenMax, inserted, available, attempted float64
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*), coalesce(max(extract(epoch FROM attempted_at - scheduled_at) * 1000), 0)
		FROM river_job WHERE kind = 'tributary:schedule_fire' AND state = 'completed'
		AND scheduled_at = (args->>'fire_at')::timestamptz`).Scan(&notWoken, &notWokenMax))
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT extract(epoch FROM created_at - $1) * 1000, extract(epoch FROM scheduled_at - $1) * 1000,
		extract(epoch FROM attempted_at - $1) * 1000
		FROM river_job WHERE kind = 'tributary:schedule_fire' AND (args->>'fire_at')::timestamptz = $1 ORDER BY id LIMIT 1`,
		fired[lat.worstFire]).Scan(&inserted, &available, &attempted))
	t.Logf("%d clients: fire jobs not woken by a timer (scheduled_at still the slot): %d, the latest attempted %.1f ms after its slot", n, notWoken, notWokenMax)
	t.Logf("%d clients: latest slot %s: its fire job inserted %.1f ms, scheduled_at %.3f ms, attempted %.1f ms after the slot",
		n, fired[lat.worstFire].Format(time.TimeOnly), inserted, available, attempted)
	t.Logf("%d clients: run job attempted_at - fire_at:  %s", n, lat.run)
	t.Logf("%d clients: run started_at - fire_at:        %s", n, lat.started)
}

// mcFireTimes returns the fire_at of schedule id's runs, in order.
func mcFireTimes(ctx context.Context, t testing.TB, db *testdb.DB, id uuid.UUID) []time.Time {
	t.Helper()
	rows, err := db.Pool.Query(ctx, "SELECT fire_at FROM workflow_runs WHERE schedule_id = $1 ORDER BY fire_at", id)
	require.NoError(t, err)
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var at time.Time
		require.NoError(t, rows.Scan(&at))
		out = append(out, at)
	}
	require.NoError(t, rows.Err())
	return out
}

// mcLatencies are lateness distributions, in milliseconds after the slot.
type mcLatencies struct {
	fire    mcDist // the slot's instant's fire job: River's attempted_at
	run     mcDist // the run's job: River's attempted_at (its latest attempt)
	started mcDist // the run's started_at (written when it finishes)

	firstFire []float64 // fire lateness of the first slots, in slot order
	worstFire int       // the slot (index in slot order) whose fire job was latest
}

// mcSlotLatencies measures, for every run of schedule id (every scheduled
// run when id is nil), how long after its slot its fire job and its run's
// job were attempted, and the run started.
func mcSlotLatencies(ctx context.Context, t testing.TB, db *testdb.DB, id *uuid.UUID) mcLatencies {
	t.Helper()
	rows, err := db.Pool.Query(ctx, `
SELECT extract(epoch FROM fj.attempted_at - r.fire_at) * 1000,
	extract(epoch FROM j.attempted_at - r.fire_at) * 1000,
	extract(epoch FROM r.started_at - r.fire_at) * 1000
FROM workflow_runs r
LEFT JOIN river_job j ON j.id = r.job_id
LEFT JOIN LATERAL (
	SELECT min(attempted_at) AS attempted_at FROM river_job
	WHERE kind = 'tributary:schedule_fire' AND (args->>'fire_at')::timestamptz = r.fire_at
) fj ON true
WHERE r.schedule_id IS NOT NULL AND ($1::uuid IS NULL OR r.schedule_id = $1) AND r.status <> 'skipped'
ORDER BY r.fire_at, r.id`, id)
	require.NoError(t, err)
	defer rows.Close()
	var fire, run, started []float64
	for rows.Next() {
		var f, r, s *float64
		require.NoError(t, rows.Scan(&f, &r, &s))
		if f != nil {
			fire = append(fire, *f)
		}
		if r != nil {
			run = append(run, *r)
		}
		if s != nil {
			started = append(started, *s)
		}
	}
	require.NoError(t, rows.Err())
	worst := 0
	for i, f := range fire {
		if f > fire[worst] {
			worst = i
		}
	}
	return mcLatencies{fire: newMCDist(fire), run: newMCDist(run), started: newMCDist(started), firstFire: fire[:min(len(fire), 3)], worstFire: worst}
}

// mcDist summarizes a sample of milliseconds.
type mcDist struct {
	N                  int
	Min, P50, P99, Max float64
}

func newMCDist(ms []float64) mcDist {
	if len(ms) == 0 {
		return mcDist{}
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	return mcDist{N: len(s), Min: s[0], P50: mcPercentile(s, 0.50), P99: mcPercentile(s, 0.99), Max: s[len(s)-1]}
}

// mcPercentile is the nearest-rank percentile q of sorted s.
func mcPercentile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func (d mcDist) String() string {
	if d.N == 0 {
		return "no samples"
	}
	return fmt.Sprintf("n=%d min=%.1fms p50=%.1fms p99=%.1fms max=%.1fms", d.N, d.Min, d.P50, d.P99, d.Max)
}
