package schedule

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/wfruntime"
	"github.com/tributary-go/tributary/workflow"
)

// dueTogether is a whole second at least lead ahead, and a daily cron
// expression (with seconds, in UTC) whose next slot is that second: the
// schedules created with it are all due together.
func dueTogether(lead time.Duration) (time.Time, string) {
	at := time.Now().Add(lead + time.Second).Truncate(time.Second).UTC()
	return at, fmt.Sprintf("%d %d %d * * *", at.Second(), at.Minute(), at.Hour())
}

// burstParams are n schedules of workflow "tick" on cron, OverlapAllow.
func burstParams(n int, cron string) []*Params {
	params := make([]*Params, n)
	for i := range params {
		params[i] = &Params{Name: "burst " + strconv.Itoa(i), Owner: "burst", Workflow: "tick", Cron: cron, Overlap: OverlapAllow}
	}
	return params
}

// TestBurstFiresEachSlotOnce has 3 working clients race for 2,000 slots due
// in the same second, with three fire jobs for the instant (as when several
// transactions seed it at once), so that three firing passes claim from the
// same due schedules: every slot fires exactly once, each schedule's chain
// moves to its next day, and the counters agree with the ledger.
func TestBurstFiresEachSlotOnce(t *testing.T) {
	t.Parallel()
	testdb.ManyConnections(t)

	const n = 2000
	db := testdb.New(t)
	clients := startClients(t, db, 3)
	ctx := ctxT(t, 2*time.Minute)

	at, cron := dueTogether(3 * time.Second)
	created, err := clients[0].CreateMany(ctx, burstParams(n, cron))
	require.NoError(t, err)
	for _, s := range created {
		require.True(t, s.NextFireAt.Equal(at))
	}
	// Two more fire jobs for the instant, as two clients seeding it at once
	// would insert: three passes race for the same slots.
	for _, sc := range clients[1:] {
		require.NoError(t, pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			res, err := sc.wf.River().InsertTx(ctx, tx, fireArgs{FireAt: at}, &river.InsertOpts{Queue: Queue, Priority: 1, ScheduledAt: at})
			if err != nil {
				return err
			}
			return sc.rt.WakeAtTx(ctx, tx, &wfruntime.Wake{At: at, JobID: res.Job.ID, Queue: Queue})
		}))
	}

	waitCount(t, db, time.Minute, n, "SELECT count(*) FROM workflow_runs WHERE schedule_id IS NOT NULL AND status = 'completed'")
	waitCount(t, db, time.Minute, 3, "SELECT count(*) FROM river_job WHERE kind = 'tributary:schedule_fire' AND state = 'completed'")

	var runs, schedules, atSlot, notCompleted int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT schedule_id), count(*) FILTER (WHERE fire_at = $1),
		count(*) FILTER (WHERE status <> 'completed') FROM workflow_runs WHERE schedule_id IS NOT NULL`, at).
		Scan(&runs, &schedules, &atSlot, &notCompleted))
	require.Equal(t, n, runs, "a slot fired twice")
	require.Equal(t, n, schedules)
	require.Equal(t, n, atSlot)
	require.Zero(t, notCompleted)

	var advanced, counted int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE next_fire_at = $2 AND last_fire_at = $1),
		count(*) FILTER (WHERE run_count = 1) FROM schedules`, at, at.Add(24*time.Hour)).Scan(&advanced, &counted))
	require.Equal(t, n, advanced, "every chain moves to the next day")
	require.Equal(t, n, counted, "run_count")

	// What each fire job did, as River UI shows it: a pass per instant and
	// client, the batches and the runs it started.
	rows, err := db.Pool.Query(ctx, `SELECT attempted_by[array_length(attempted_by, 1)], coalesce(metadata->>'output', ''),
		coalesce((metadata->'output'->>'started')::int, 0)
		FROM river_job WHERE kind = 'tributary:schedule_fire' AND state = 'completed' ORDER BY id`)
	require.NoError(t, err)
	started, passes := 0, 0
	for rows.Next() {
		var (
			by, output string
			k          int
		)
		require.NoError(t, rows.Scan(&by, &output, &k))
		t.Logf("fire job worked by %s: %s", by, output)
		started += k
		passes++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 3, passes)
	require.Equal(t, n, started, "the fire jobs' recorded output accounts for every run")
}

// TestBatchDecidesEachSlot fires one instant at which schedules of every
// kind are due together with 150 ordinary ones, so that they share
// batches: overlap skip, queue and replace with a run in flight, a grant
// that allows and one revoked, an input over the working client's limit, a
// time zone that no longer evaluates, a schedule deleted before its slot
// and one whose run cannot be inserted at all. Each slot gets its own
// decision, none holds up the others, and every chain but the deleted and
// the broken one moves on.
func TestBatchDecidesEachSlot(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := startClients(t, db, 1)[0]
	ctx := ctxT(t, 2*time.Minute)
	at, cron := dueTogether(4 * time.Second)

	good, err := sc.CreateMany(ctx, burstParams(150, cron))
	require.NoError(t, err)
	create := func(name, typ string, overlap OverlapPolicy, grant *uuid.UUID) *Schedule {
		t.Helper()
		s, err := sc.Create(ctx, &Params{Name: name, Workflow: typ, Cron: cron, Overlap: overlap, GrantID: grant})
		require.NoError(t, err)
		return s
	}
	skip := create("skip", "stuck", OverlapSkip, nil)
	queue := create("queue", "stuck", OverlapQueue, nil)
	replace := create("replace", "stuck", OverlapReplace, nil)
	busy := map[uuid.UUID]uuid.UUID{} // schedule → its run in flight
	for _, s := range []*Schedule{skip, queue, replace} {
		runID, err := sc.Trigger(ctx, ByID(s.ID), nil)
		require.NoError(t, err)
		busy[s.ID] = runID
	}
	allowed, err := sc.CreateGrant(ctx, &GrantParams{Subject: "user-1", Scopes: []string{ScopeExecute("whoami")}})
	require.NoError(t, err)
	revoked, err := sc.CreateGrant(ctx, &GrantParams{Subject: "user-2", Scopes: []string{"*"}})
	require.NoError(t, err)
	granted := create("granted", "whoami", OverlapAllow, &allowed.ID)
	revokedS := create("revoked", "whoami", OverlapAllow, &revoked.ID)
	_, err = sc.RevokeGrant(ctx, revoked.ID, "user left")
	require.NoError(t, err)
	bigInput := create("big input", "tick", OverlapAllow, nil)
	_, err = db.Pool.Exec(ctx, "UPDATE schedules SET input = to_jsonb(repeat('x', 1100000)) WHERE id = $1", bigInput.ID)
	require.NoError(t, err)
	badZone := create("bad zone", "tick", OverlapAllow, nil)
	_, err = db.Pool.Exec(ctx, "UPDATE schedules SET time_zone = 'Mars/Olympus' WHERE id = $1", badZone.ID)
	require.NoError(t, err)
	deleted := create("deleted", "tick", OverlapAllow, nil)
	require.NoError(t, sc.Delete(ctx, ByID(deleted.ID)))
	poison := create("poison", "tick", OverlapAllow, nil)
	_, err = db.Pool.Exec(ctx, fmt.Sprintf(`
CREATE FUNCTION refuse_run() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'the test refuses this run'; END $$;
CREATE TRIGGER refuse_run BEFORE INSERT ON workflow_runs FOR EACH ROW
	WHEN (NEW.schedule_id = '%s' AND NEW.status <> 'skipped') EXECUTE FUNCTION refuse_run();`, poison.ID))
	require.NoError(t, err)
	// Its slot was prepared before the trigger: without its prepared run,
	// the slot's run is inserted at the slot, and refused.
	dropPrepared(t, db, poison.ID)
	require.True(t, time.Now().Before(at), "setting up took past the slot; raise the lead")

	// Every slot of the instant has its run or its skip (the deleted one
	// none), and the ordinary ones completed.
	want := len(good) + 8
	waitCount(t, db, time.Minute, want, "SELECT count(*) FROM workflow_runs WHERE fire_at = $1", at)
	waitCount(t, db, time.Minute, len(good), "SELECT count(*) FROM workflow_runs WHERE fire_at = $1 AND workflow_type = 'tick' AND status = 'completed'", at)

	slotOf := func(s *Schedule) slotRun {
		t.Helper()
		var r slotRun
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT id, status, coalesce(skip_reason, ''), metadata FROM workflow_runs
			WHERE schedule_id = $1 AND fire_at = $2`, s.ID, at).Scan(&r.id, &r.status, &r.reason, &r.meta))
		return r
	}
	runStatus := func(id uuid.UUID) string {
		var status string
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT status FROM workflow_runs WHERE id = $1", id).Scan(&status))
		return status
	}

	require.Equal(t, "skipped: "+SkipReasonOverlap, slotOf(skip).outcome())
	q := slotOf(queue)
	require.Equal(t, "pending", q.status)
	require.Contains(t, string(q.meta), `"schedule_queued": true`)
	r := slotOf(replace)
	require.NotEqual(t, "skipped", r.status)
	require.Equal(t, "cancelled", runStatus(busy[replace.ID]), "replace cancels the run in flight")
	require.NotEqual(t, "cancelled", runStatus(busy[skip.ID]))
	require.NotEqual(t, "cancelled", runStatus(busy[queue.ID]))

	waitDB(t, db, 30*time.Second, func(context.Context) error {
		if status := slotOf(granted).status; status != "completed" {
			return fmt.Errorf("the granted slot's run is %s, want completed", status)
		}
		return nil
	})
	require.Equal(t, "user-1", metaField(t, slotOf(granted).meta, "grant_subject"))
	require.Equal(t, "skipped: "+SkipReasonGrantRevoked, slotOf(revokedS).outcome())

	big := slotOf(bigInput)
	require.Equal(t, "skipped", big.status)
	require.True(t, strings.HasPrefix(big.reason, SkipReasonCannotStart+": "), big.reason)
	require.Contains(t, big.reason, "MaxInputBytes")

	zone := slotOf(badZone)
	require.Equal(t, "skipped", zone.status)
	require.True(t, strings.HasPrefix(zone.reason, SkipReasonCannotFire+": "), zone.reason)
	gotZone, err := sc.Get(ctx, ByID(badZone.ID))
	require.NoError(t, err)
	require.True(t, gotZone.Paused, "a schedule that cannot be evaluated is paused")
	require.Contains(t, gotZone.PauseNote, "Mars/Olympus")

	p := slotOf(poison)
	require.Equal(t, "skipped", p.status)
	require.True(t, strings.HasPrefix(p.reason, SkipReasonCannotFire+": "), p.reason)
	require.Contains(t, p.reason, "the test refuses this run")

	var deletedRuns int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM workflow_runs WHERE metadata->>'schedule_fire_at' IS NOT NULL AND schedule_id IS NULL").Scan(&deletedRuns))
	require.Zero(t, deletedRuns, "the deleted schedule's slot fired")

	// Every chain but the deleted and the broken one moves to the next day.
	var moved int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM schedules WHERE next_fire_at = $1", at.Add(24*time.Hour)).Scan(&moved))
	require.Equal(t, want-1, moved)
}

// slotRun is what a slot's run says of the slot.
type slotRun struct {
	id             uuid.UUID
	status, reason string
	meta           []byte
}

// outcome is the run's status, and its skip reason if any.
func (r slotRun) outcome() string {
	if r.reason == "" {
		return r.status
	}
	return r.status + ": " + r.reason
}

// TestReconcileLateRepairKeepsTheSlot checks the rule by which the
// reconciler holds a repaired slot against its catch-up window: a chain
// that broke while the client's repair passes ran (the previous pass less
// than two intervals ago) counts its slot as found at that previous pass,
// so a slot repaired a minute late still runs although its catch-up window
// is shorter. A client with no recent pass (a start-up after downtime)
// counts lateness from the slot's time: the slot is recorded as missed
// (SKIP_MISSED_BY_DEFAULT).
func TestReconcileLateRepairKeepsTheSlot(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, time.Minute)
	slot := time.Date(2030, 1, 1, 8, 0, 0, 0, time.UTC)
	var now atomic.Pointer[time.Time]
	setNow := func(at time.Time) { now.Store(&at) }
	setNow(slot.Add(-time.Hour))

	// Insert-only clients: no fire job is ever worked, so only Reconcile
	// fires, at the injected time.
	newClient := func() *Client {
		wf, err := workflow.NewClient(db.Pool, &workflow.Config{Clock: func() time.Time { return *now.Load() }, Schema: db.Schema})
		require.NoError(t, err)
		sc, err := New(wf, nil)
		require.NoError(t, err)
		return sc
	}
	watching := newClient()
	create := func(name string) *Schedule {
		s, err := watching.Create(ctx, &Params{Name: name, Workflow: "tick", Cron: "0 8 * * *", CatchUpWindow: 30 * time.Second})
		require.NoError(t, err)
		require.True(t, s.NextFireAt.Equal(slot))
		return s
	}
	outcome := func(s *Schedule) string {
		var r slotRun
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT status, coalesce(skip_reason, '') FROM workflow_runs WHERE schedule_id = $1 AND fire_at = $2",
			s.ID, slot).Scan(&r.status, &r.reason))
		return r.outcome()
	}

	// The watching client's passes run every interval; the slot's job is
	// lost before the slot; the next pass finds it a minute late, beyond
	// its 30 s window.
	s := create("watched")
	_, err := db.Pool.Exec(ctx, "DELETE FROM river_job WHERE kind = 'tributary:schedule_fire'")
	require.NoError(t, err)
	setNow(slot.Add(-10 * time.Second))
	n, err := watching.Reconcile(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	setNow(slot.Add(DefaultReconcileInterval - 10*time.Second + reconcileGrace))
	n, err = watching.Reconcile(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, "pending", outcome(s), "the slot was due while the reconciler watched: it runs")

	// A client that starts after downtime has no previous pass: the same
	// lateness is a missed slot.
	setNow(slot.Add(-time.Hour))
	other := create("after downtime")
	_, err = db.Pool.Exec(ctx, "DELETE FROM river_job WHERE kind = 'tributary:schedule_fire'")
	require.NoError(t, err)
	setNow(slot.Add(DefaultReconcileInterval - 10*time.Second + reconcileGrace))
	n, err = newClient().Reconcile(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, "skipped: "+SkipReasonMissed, outcome(other))
}

// TestTriggerRefusesWhatTheEngineRefuses: an operator's trigger whose input
// is over the working client's limit is an error that says so, and writes
// no run; a slot fired with others is recorded as skipped instead (see
// TestBatchDecidesEachSlot).
func TestTriggerRefusesWhatTheEngineRefuses(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := startClients(t, db, 1)[0]
	ctx := ctxT(t, 30*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "t", Workflow: "tick", Cron: "0 0 1 1 *"})
	require.NoError(t, err)
	_, err = sc.Trigger(ctx, ByID(s.ID), &TriggerOpts{Input: strings.Repeat("x", 1100000)})
	require.ErrorContains(t, err, "MaxInputBytes")
	var runs int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM workflow_runs r WHERE "+notPreparedRun).Scan(&runs))
	require.Zero(t, runs)
}

// TestBackfillRunsEverySlot (issue 12, trap 1): a backfill of a schedule
// whose overlap policy is skip used to start its first slot and record all
// the others as skipped for good. It now runs every slot of the range, one
// after the other, says so, and can run again slots skipped before.
func TestBackfillRunsEverySlot(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := startClients(t, db, 1)[0]
	ctx := ctxT(t, 2*time.Minute)
	s, err := sc.Create(ctx, &Params{Name: "bf", Workflow: "tick", Cron: "* * * * *"}) // overlap skip, the default
	require.NoError(t, err)
	from := time.Now().Truncate(time.Minute).Add(-time.Hour).UTC()
	to := from.Add(20 * time.Minute)

	res, err := sc.Backfill(ctx, ByID(s.ID), from, to, nil)
	require.NoError(t, err)
	require.Equal(t, &BackfillResult{Slots: 20, Started: 1, Queued: 19}, res)
	waitCount(t, db, time.Minute, 20, "SELECT count(*) FROM workflow_runs WHERE schedule_id = $1 AND status = 'completed'", s.ID)

	// One after the other, oldest first: each started once the one before
	// it had finished. (The schedule's live slots, each minute from now,
	// may fire meanwhile: they are not the backfill's.)
	rows, err := db.Pool.Query(ctx, `SELECT fire_at, started_at, finished_at FROM workflow_runs WHERE schedule_id = $1 AND fire_at < $2 ORDER BY fire_at`, s.ID, to)
	require.NoError(t, err)
	var prevFinished time.Time
	n := 0
	for rows.Next() {
		var fireAt, startedAt, finishedAt time.Time
		require.NoError(t, rows.Scan(&fireAt, &startedAt, &finishedAt))
		require.False(t, startedAt.Before(prevFinished), "slot %s started before the one before it finished", fireAt)
		prevFinished = finishedAt
		n++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 20, n)

	// Overlap skip, asked for: the slots after the first are skipped, and
	// the result says so. Another backfill leaves them, unless told to run
	// them again.
	from2 := to.Add(10 * time.Minute)
	to2 := from2.Add(5 * time.Minute)
	res, err = sc.Backfill(ctx, ByID(s.ID), from2, to2, &BackfillOpts{Overlap: OverlapSkip})
	require.NoError(t, err)
	require.Equal(t, &BackfillResult{Slots: 5, Started: 1, Skipped: map[string]int{SkipReasonOverlap: 4}}, res)
	res, err = sc.Backfill(ctx, ByID(s.ID), from2, to2, &BackfillOpts{Overlap: OverlapAllow})
	require.NoError(t, err)
	require.Equal(t, &BackfillResult{Slots: 5, Existing: 5}, res)
	res, err = sc.Backfill(ctx, ByID(s.ID), from2, to2, &BackfillOpts{RerunSkipped: true})
	require.NoError(t, err)
	require.Equal(t, 5, res.Slots)
	require.Equal(t, 1, res.Existing)
	require.Equal(t, 4, res.Started+res.Queued)
	require.Equal(t, 4, res.Rerun)
	waitCount(t, db, time.Minute, 5, "SELECT count(*) FROM workflow_runs WHERE schedule_id = $1 AND status = 'completed' AND fire_at >= $2", s.ID, from2)
	var rerun int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM workflow_runs WHERE schedule_id = $1 AND metadata->>'schedule_rerun_of' = 'overlap'`, s.ID).Scan(&rerun))
	require.Equal(t, 4, rerun)

	// The backfills' 25 runs, and those of the live slots that fired
	// meanwhile (read again if one fired while the count was read).
	liveRuns := func() (n int64) {
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM workflow_runs r WHERE schedule_id = $1 AND fire_at > $2 AND `+notPreparedRun, s.ID, to2).Scan(&n))
		return n
	}
	for {
		before := liveRuns()
		got, err := sc.Get(ctx, ByID(s.ID))
		require.NoError(t, err)
		if liveRuns() == before {
			require.EqualValues(t, 25+before, got.RunCount, "the backfills' 25 runs and the %d of the live slots", before)
			break
		}
	}
}
