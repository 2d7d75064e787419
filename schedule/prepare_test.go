package schedule

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// preparedSlot is schedule id's prepared slot, read from the tables: its
// run, that run's slot and its job's state and time. ok is false when it
// has none.
func preparedSlot(ctx context.Context, t *testing.T, db *testdb.DB, id uuid.UUID) (run uuid.UUID, fireAt, jobAt time.Time, ok bool) {
	t.Helper()
	err := db.Pool.QueryRow(ctx, `SELECT r.id, r.fire_at, j.scheduled_at FROM workflow_runs r JOIN river_job j ON j.id = r.job_id
		WHERE r.schedule_id = $1 AND r.status = 'pending' AND j.state = 'pending'`, id).Scan(&run, &fireAt, &jobAt)
	if err != nil {
		require.ErrorContains(t, err, "no rows")
		return uuid.Nil, time.Time{}, time.Time{}, false
	}
	return run, fireAt.UTC(), jobAt.UTC(), true
}

// TestPreparedSlots: a schedule's next slot is prepared ahead (its run and
// a pending River job, scheduled at the slot), which no listing shows; at
// the slot the firing pass starts that very run, only making its job
// available; the slot after it is prepared after the firing; and Pause,
// Resume, Update and Delete drop the prepared slot (Resume and Update
// prepare their new one when it is due within prepareOnChange), so that
// nothing prepared outlives the schedule it was prepared from.
func TestPreparedSlots(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, 2*time.Minute)
	at, cron := dueTogether(3 * time.Second)
	sc := insertOnly(t, db)
	s, err := sc.Create(ctx, &Params{Name: "prepared", Workflow: "tick", Cron: cron, Input: map[string]int{"n": 1}})
	require.NoError(t, err)

	run, fireAt, jobAt, ok := preparedSlot(ctx, t, db, s.ID)
	require.True(t, ok, "Create prepares the first slot")
	require.Equal(t, at, fireAt)
	require.Equal(t, at, jobAt, "the job waits for the slot")
	history, err := sc.History(ctx, ByID(s.ID), nil)
	require.NoError(t, err)
	require.Empty(t, history, "a prepared slot is not a run until its slot is decided")
	runs, err := sc.wf.ListRuns(ctx, &workflow.ListParams{})
	require.NoError(t, err)
	require.Empty(t, runs)

	// At the slot, a working client's pass starts the prepared run itself.
	startClient(t, db, nil)
	waitDB(t, db, 30*time.Second, func(ctx context.Context) error {
		got, err := sc.wf.GetRun(ctx, run)
		if err != nil {
			return err
		}
		if got.Status != workflow.StatusCompleted {
			return fmt.Errorf("the prepared run is %s", got.Status)
		}
		return nil
	})
	var output []byte
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT metadata->'output' FROM river_job WHERE kind = 'tributary:schedule_fire' AND state = 'completed'
		AND (args->>'fire_at')::timestamptz = $1`, at).Scan(&output))
	var stats passStats
	require.NoError(t, json.Unmarshal(output, &stats))
	require.Equal(t, 1, stats.Started)
	require.Equal(t, 1, stats.Prepared, "the pass made the prepared job available")
	history, err = sc.History(ctx, ByID(s.ID), nil)
	require.NoError(t, err)
	require.Len(t, history, 1)
	require.Equal(t, run, history[0].ID)

	// The next day's slot is prepared after the firing.
	waitDB(t, db, time.Minute, func(ctx context.Context) error {
		if _, fireAt, _, ok := preparedSlot(ctx, t, db, s.ID); !ok || !fireAt.Equal(at.Add(24*time.Hour)) {
			return fmt.Errorf("the next slot is not prepared (prepared: %t, at %s)", ok, fireAt)
		}
		return nil
	})

	// Pause drops it. Resume prepares a slot due within prepareOnChange
	// only: not the next day's.
	_, err = sc.Pause(ctx, ByID(s.ID), "")
	require.NoError(t, err)
	_, _, _, ok = preparedSlot(ctx, t, db, s.ID)
	require.False(t, ok, "Pause drops the prepared slot")
	_, err = sc.Resume(ctx, ByID(s.ID), nil)
	require.NoError(t, err)
	_, _, _, ok = preparedSlot(ctx, t, db, s.ID)
	require.False(t, ok, "a slot a day ahead is prepared after a firing, not by Resume")

	// A schedule due within prepareOnChange: Pause drops its slot, Resume
	// prepares it again.
	_, soonCron := dueTogether(prepareOnChange / 2)
	s, err = sc.Create(ctx, &Params{Name: "soon", Workflow: "tick", Cron: soonCron, Input: map[string]int{"n": 1}})
	require.NoError(t, err)
	_, err = sc.Pause(ctx, ByID(s.ID), "")
	require.NoError(t, err)
	_, _, _, ok = preparedSlot(ctx, t, db, s.ID)
	require.False(t, ok, "Pause drops the prepared slot")
	_, err = sc.Resume(ctx, ByID(s.ID), nil)
	require.NoError(t, err)
	before, _, _, ok := preparedSlot(ctx, t, db, s.ID)
	require.True(t, ok, "Resume prepares the next slot")

	// Update drops it and prepares one from the new input.
	_, err = sc.Update(ctx, ByID(s.ID), &UpdateParams{Input: map[string]int{"n": 2}})
	require.NoError(t, err)
	after, _, _, ok := preparedSlot(ctx, t, db, s.ID)
	require.True(t, ok, "Update prepares the next slot")
	require.NotEqual(t, before, after, "Update prepared a new run")
	var input string
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT input::text FROM workflow_runs WHERE id = $1", after).Scan(&input))
	require.JSONEq(t, `{"n": 2}`, input)

	// Delete takes the prepared run and its job with it.
	var jobID int64
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT job_id FROM workflow_runs WHERE id = $1", after).Scan(&jobID))
	require.NoError(t, sc.Delete(ctx, ByID(s.ID)))
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM workflow_runs WHERE id = $1", after))
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM river_job WHERE id = $1", jobID))
}

// TestPreparedSlotDecidedAtItsTime: what a slot does is decided at its
// time, whatever was prepared. A prepared slot whose schedule's grant is
// revoked before it, or whose overlap policy skips it because a run is
// unfinished, is recorded as skipped, and its prepared run and job are
// gone; River never runs a prepared job before its slot is decided.
func TestPreparedSlotDecidedAtItsTime(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, time.Minute)
	at, cron := dueTogether(4 * time.Second)
	sc := insertOnly(t, db)

	grant, err := sc.CreateGrant(ctx, &GrantParams{Subject: "svc", Scopes: []string{"*"}})
	require.NoError(t, err)
	granted, err := sc.Create(ctx, &Params{Name: "granted", Workflow: "tick", Cron: cron, GrantID: &grant.ID})
	require.NoError(t, err)
	busy, err := sc.Create(ctx, &Params{Name: "busy", Workflow: "stuck", Cron: cron, Overlap: OverlapSkip})
	require.NoError(t, err)
	grantedRun, _, _, ok := preparedSlot(ctx, t, db, granted.ID)
	require.True(t, ok)
	busyRun, _, _, ok := preparedSlot(ctx, t, db, busy.ID)
	require.True(t, ok)

	_, err = sc.RevokeGrant(ctx, grant.ID, "revoked before the slot")
	require.NoError(t, err)
	// An unfinished run of "busy", started by hand before the slot.
	_, err = sc.Trigger(ctx, ByID(busy.ID), nil)
	require.NoError(t, err)

	startClient(t, db, nil)
	outcome := func(id uuid.UUID) string {
		var status, reason string
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT status, coalesce(skip_reason, '') FROM workflow_runs WHERE schedule_id = $1 AND fire_at = $2`,
			id, at).Scan(&status, &reason))
		return status + ": " + reason
	}
	waitDB(t, db, 30*time.Second, func(ctx context.Context) error {
		n := countOf(t, db, "SELECT count(*) FROM workflow_runs WHERE fire_at = $1 AND status = 'skipped'", at)
		if n < 2 {
			return fmt.Errorf("%d of 2 slots recorded", n)
		}
		return nil
	})
	require.Equal(t, "skipped: "+SkipReasonGrantRevoked, outcome(granted.ID))
	require.Equal(t, "skipped: "+SkipReasonOverlap, outcome(busy.ID))
	for _, id := range []uuid.UUID{grantedRun, busyRun} {
		require.Zero(t, countOf(t, db, "SELECT count(*) FROM workflow_runs WHERE id = $1", id), "the prepared run was dropped")
	}
	require.Zero(t, countOf(t, db, `SELECT count(*) FROM river_job WHERE kind LIKE 'workflow:%' AND scheduled_at = $1 AND state <> 'running'`, at),
		"no prepared job of the slot is left, and none ran")
}

// TestPreparedSlotPassedOver: a client of a version before prepared slots
// fires a prepared slot by advancing its schedule without starting the
// prepared run, or pauses or deletes the schedule without dropping it. The
// reconciler starts the first (late, with a warning) and drops the others,
// so that no prepared job stays pending for good.
func TestPreparedSlotPassedOver(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, time.Minute)
	at, cron := dueTogether(time.Second)
	sc := insertOnly(t, db)
	create := func(name string) (*Schedule, uuid.UUID) {
		t.Helper()
		s, err := sc.Create(ctx, &Params{Name: name, Workflow: "tick", Cron: cron})
		require.NoError(t, err)
		run, _, _, ok := preparedSlot(ctx, t, db, s.ID)
		require.True(t, ok)
		return s, run
	}
	fired, firedRun := create("fired by an earlier version")
	paused, pausedRun := create("paused by an earlier version")
	deleted, deletedRun := create("deleted by an earlier version")
	// What that version's firing, Pause and Delete wrote.
	_, err := db.Pool.Exec(ctx, `UPDATE schedules SET last_fire_at = next_fire_at, next_fire_at = next_fire_at + interval '1 day' WHERE id = $1`, fired.ID)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `UPDATE schedules SET paused = true, next_fire_at = NULL WHERE id = $1`, paused.ID)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `DELETE FROM schedules WHERE id = $1`, deleted.ID)
	require.NoError(t, err)

	jobState := func(run uuid.UUID) string {
		var state string
		err := db.Pool.QueryRow(ctx, `SELECT j.state::text FROM river_job j JOIN workflow_runs r ON r.job_id = j.id WHERE r.id = $1`, run).Scan(&state)
		if err != nil {
			require.ErrorContains(t, err, "no rows")
			return "gone"
		}
		return state
	}
	// Before the slot and its grace, nothing is repaired.
	_, err = sc.Reconcile(ctx)
	require.NoError(t, err)
	require.Equal(t, "pending", jobState(firedRun))

	waitUntil(t, at.Add(reconcileGrace+100*time.Millisecond))
	_, err = sc.Reconcile(ctx)
	require.NoError(t, err)
	require.Equal(t, "available", jobState(firedRun), "the slot its client took as started starts now")
	require.Equal(t, "gone", jobState(pausedRun), "a paused schedule's prepared slot is dropped")
	require.Equal(t, "gone", jobState(deletedRun), "a deleted schedule's prepared slot is dropped")
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM workflow_runs WHERE id = ANY($1)", []uuid.UUID{pausedRun, deletedRun}))
}

// TestPrepareDefersToABacklog: a prepare job snoozes, prepareRecheck at a
// time, while a River job of any queue has waited prepareBacklog or more
// for a worker, until its WaitUntil; then it prepares all the same, and so
// it does at once with no backlog.
func TestPrepareDefersToABacklog(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, time.Minute)
	_, cron := dueTogether(3 * time.Hour)
	sc := insertOnly(t, db)
	create := func(name string) uuid.UUID {
		t.Helper()
		s, err := sc.Create(ctx, &Params{Name: name, Workflow: "tick", Cron: cron})
		require.NoError(t, err)
		_, _, _, ok := preparedSlot(ctx, t, db, s.ID)
		require.False(t, ok, "Create does not prepare a slot hours ahead")
		return s.ID
	}
	w := &prepareWorker{c: sc}
	work := func(id uuid.UUID, waitUntil time.Time) error {
		return w.Work(ctx, &river.Job[prepareArgs]{JobRow: &rivertype.JobRow{}, Args: prepareArgs{ScheduleIDs: []uuid.UUID{id}, WaitUntil: waitUntil}})
	}
	prepared := func(id uuid.UUID) bool {
		_, _, _, ok := preparedSlot(ctx, t, db, id)
		return ok
	}

	none := create("no backlog")
	require.NoError(t, work(none, time.Now().Add(time.Minute)))
	require.True(t, prepared(none), "with no backlog the job prepares at once")

	// A backlog: a job of a queue that no client works, ready for a minute.
	_, err := db.Pool.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at)
		VALUES ('{}', 'other', 1, 'elsewhere', 'available', now() - interval '1 minute')`)
	require.NoError(t, err)
	behind := create("backlog")
	var snooze *rivertype.JobSnoozeError
	require.ErrorAs(t, work(behind, time.Now().Add(time.Minute)), &snooze)
	require.Equal(t, prepareRecheck, snooze.Duration)
	require.False(t, prepared(behind), "the job defers to the backlog")

	require.NoError(t, work(behind, time.Now().Add(-time.Second)))
	require.True(t, prepared(behind), "past its WaitUntil the job prepares all the same")
}
