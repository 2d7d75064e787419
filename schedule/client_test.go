package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

var tick = workflow.Define("tick", func(ctx workflow.Context, _ struct{}) (string, error) {
	return ctx.Run().FireAt.UTC().Format(time.RFC3339), nil
}, nil)

var stuck = workflow.Define("stuck", func(ctx workflow.Context, _ struct{}) (string, error) {
	return workflow.WaitSignal[string](ctx, "never", nil)
}, nil)

// startClients starts n working clients on db, each with its own schedule
// Client; they stop when the test ends.
func startClients(t *testing.T, db *testdb.DB, n int) []*Client {
	t.Helper()
	var out []*Client
	for range n {
		out = append(out, startClient(t, db, nil))
	}
	return out
}

// startClient starts a working client on db with a schedule Client of
// config; it stops when the test ends.
func startClient(t *testing.T, db *testdb.DB, config *Config) *Client {
	t.Helper()
	sc := New(config)
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Extensions: []workflow.Extension{sc},
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		River: &river.Config{
			Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
			TestOnly: true,
		},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{tick, stuck, failing, whoami},
	})
	require.NoError(t, err)
	require.NoError(t, wf.Start(context.Background()))
	track(t, db, wf)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, wf.Stop(ctx))
	})
	return sc
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestCreateValidation(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := startClients(t, db, 1)[0]
	ctx := ctxT(t, 30*time.Second)
	valid := func() *Params {
		return &Params{Name: "n", Workflow: "tick", Cron: "0 9 * * *", TimeZone: "Europe/Paris"}
	}
	// An end in the past says so, not that the cron has no occurrence.
	_, err := sc.Create(ctx, &Params{Name: "ended", Workflow: "tick", Cron: "* * * * *", EndAt: time.Now().Add(-time.Hour)})
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "EndAt", verr.Field)
	require.Contains(t, verr.Problem, "is in the past")

	for name, mutate := range map[string]func(p *Params){
		"bad cron":      func(p *Params) { p.Cron = "61 * * * *" },
		"unknown zone":  func(p *Params) { p.TimeZone = "Mars/Olympus" },
		"no occurrence": func(p *Params) { p.Cron = "0 0 31 2 *" },
		"end before start": func(p *Params) {
			p.StartAt, p.EndAt = time.Now().Add(48*time.Hour), time.Now().Add(24*time.Hour)
		},
		"empty range":      func(p *Params) { p.EndAt = time.Now().Add(time.Minute); p.Cron = "0 0 1 1 *" },
		"unknown workflow": func(p *Params) { p.Workflow = "nope" },
		"empty name":       func(p *Params) { p.Name = " " },
		"bad input":        func(p *Params) { p.Input = make(chan int) },
		"bad overlap":      func(p *Params) { p.Overlap = "sometimes" },
	} {
		p := valid()
		mutate(p)
		_, err := sc.Create(ctx, p)
		require.ErrorIs(t, err, ErrInvalid, name)
	}
	var schedules, jobs int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM schedules").Scan(&schedules))
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE kind = 'tributary:schedule_fire'").Scan(&jobs))
	require.Zero(t, schedules)
	require.Zero(t, jobs)

	s, err := sc.Create(ctx, valid())
	require.NoError(t, err)
	require.Equal(t, "Europe/Paris", s.TimeZone)
	require.Equal(t, OverlapSkip, s.Overlap)
	require.NotNil(t, s.NextFireAt)
	next, err := sc.Next(ctx, s.ID, 3)
	require.NoError(t, err)
	require.Len(t, next, 3)
	require.True(t, next[0].At.Equal(*s.NextFireAt))
}

// TestFiresEverySlotOnce fires a every-second schedule on two clients: every
// slot runs exactly once, none is missing.
func TestFiresEverySlotOnce(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	clients := startClients(t, db, 2)
	ctx := ctxT(t, 60*time.Second)
	s, err := clients[0].Create(ctx, &Params{Name: "every second", Owner: "ops", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.NoError(t, err)

	const slots = 6
	waitRuns(t, db, s.ID, slots, 30*time.Second)
	_, err = clients[1].Pause(ctx, s.ID, "test over")
	require.NoError(t, err)

	rows, err := db.Pool.Query(ctx, "SELECT fire_at, status FROM workflow_runs WHERE schedule_id = $1 ORDER BY fire_at", s.ID)
	require.NoError(t, err)
	var fired []time.Time
	for rows.Next() {
		var (
			at     time.Time
			status string
		)
		require.NoError(t, rows.Scan(&at, &status))
		require.NotEqual(t, "skipped", status, "slot %s", at)
		fired = append(fired, at)
	}
	require.NoError(t, rows.Err())
	require.GreaterOrEqual(t, len(fired), slots)
	require.True(t, fired[0].Equal(*s.NextFireAt), "the first slot is the one Create scheduled")
	for i := 1; i < len(fired); i++ {
		require.Equal(t, time.Second, fired[i].Sub(fired[i-1]), "slots %s and %s", fired[i-1], fired[i])
	}

	got, err := clients[0].Get(ctx, s.ID)
	require.NoError(t, err)
	require.EqualValues(t, len(fired), got.RunCount)
	require.True(t, got.Paused)
	require.Nil(t, got.NextFireAt)
}

func TestOverlapSkip(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := startClients(t, db, 1)[0]
	ctx := ctxT(t, 60*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "slow", Workflow: "stuck", Cron: "* * * * * *"})
	require.NoError(t, err)
	waitRuns(t, db, s.ID, 3, 30*time.Second)
	_, err = sc.Pause(ctx, s.ID, "")
	require.NoError(t, err)

	var waiting, skipped int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status <> 'skipped'),
		count(*) FILTER (WHERE status = 'skipped' AND skip_reason = 'overlap')
		FROM workflow_runs WHERE schedule_id = $1`, s.ID).Scan(&waiting, &skipped))
	require.Equal(t, 1, waiting, "one run at a time")
	require.GreaterOrEqual(t, skipped, 2)
}

func TestPauseResumeDelete(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := startClients(t, db, 1)[0]
	ctx := ctxT(t, 60*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "p", Owner: "alice", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.NoError(t, err)
	waitRuns(t, db, s.ID, 2, 30*time.Second)

	paused, err := sc.Pause(ctx, s.ID, "maintenance")
	require.NoError(t, err)
	require.True(t, paused.Paused)
	require.Equal(t, "maintenance", paused.PauseNote)

	before := time.Now()
	resumed, err := sc.Resume(ctx, s.ID, nil)
	require.NoError(t, err)
	require.False(t, resumed.Paused)
	require.NotNil(t, resumed.NextFireAt)
	require.True(t, resumed.NextFireAt.After(before), "resume skips the slots missed while paused")

	listed, err := sc.List(ctx, &ListParams{Owner: "alice"})
	require.NoError(t, err)
	require.Len(t, listed, 1)
	none, err := sc.List(ctx, &ListParams{Owner: "bob"})
	require.NoError(t, err)
	require.Empty(t, none)

	require.NoError(t, sc.Delete(ctx, s.ID))
	require.ErrorIs(t, sc.Delete(ctx, s.ID), ErrNotFound)
	_, err = sc.Get(ctx, s.ID)
	require.ErrorIs(t, err, ErrNotFound)
	var kept int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM workflow_runs WHERE schedule_id IS NULL AND fire_at IS NOT NULL").Scan(&kept))
	require.GreaterOrEqual(t, kept, 2, "past runs stay, unlinked")
}

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
	// from River's table (River UI's delete does the same).
	_, err = db.Pool.Exec(ctx, "DELETE FROM river_job WHERE kind = 'tributary:schedule_fire' AND state IN ('scheduled', 'available')")
	require.NoError(t, err)
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

// TestDeleteWhileARunFinishes deletes a schedule while one of its runs is
// finishing. The run's status trigger locks the run, then the schedule;
// Delete must take its locks in the same order, or Postgres detects a
// deadlock and one of them fails.
func TestDeleteWhileARunFinishes(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "d", Workflow: "tick", Cron: "0 0 1 1 *"})
	require.NoError(t, err)
	runID, err := sc.Trigger(ctx, s.ID, nil)
	require.NoError(t, err)

	finishing, err := db.Pool.Begin(ctx) // a run's completion, in progress: the run is locked
	require.NoError(t, err)
	defer finishing.Rollback(ctx) //nolint:errcheck // committed below
	_, err = finishing.Exec(ctx, "UPDATE workflow_runs SET updated_at = now() WHERE id = $1", runID)
	require.NoError(t, err)

	deleted := make(chan error, 1)
	go func() { deleted <- sc.Delete(ctx, s.ID) }()
	db.WaitForLockWait(t, "%DELETE FROM%schedules%") // Delete waits for a lock
	_, err = finishing.Exec(ctx, "UPDATE workflow_runs SET status = 'completed', finished_at = now() WHERE id = $1", runID)
	require.NoError(t, err, "the finishing run's trigger must get the schedule")
	require.NoError(t, finishing.Commit(ctx))
	require.NoError(t, <-deleted)
}

// TestBackfillWhileARunFinishes backfills a range again while one of its
// slots' runs is finishing. Backfill holds the schedule; a run's status
// trigger needs it. Backfill must not wait on that run (by inserting a
// conflicting run), or Postgres detects a deadlock.
func TestBackfillWhileARunFinishes(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "b", Workflow: "tick", Cron: "0 6 * * *", TimeZone: "America/New_York", Overlap: OverlapAllow})
	require.NoError(t, err)
	from, to := time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC)
	res, err := sc.Backfill(ctx, s.ID, from, to, nil)
	require.NoError(t, err)
	require.Equal(t, &BackfillResult{Slots: 3, Started: 1, Queued: 2}, res, "all of them, one after the other")
	var runID uuid.UUID
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT id FROM workflow_runs WHERE schedule_id = $1 ORDER BY fire_at LIMIT 1", s.ID).Scan(&runID))

	finishing, err := db.Pool.Begin(ctx) // the run's completion, in progress
	require.NoError(t, err)
	defer finishing.Rollback(ctx) //nolint:errcheck // committed below
	_, err = finishing.Exec(ctx, "UPDATE workflow_runs SET updated_at = now() WHERE id = $1", runID)
	require.NoError(t, err)

	type result struct {
		res *BackfillResult
		err error
	}
	again := make(chan result, 1)
	go func() {
		res, err := sc.Backfill(ctx, s.ID, from, to, nil)
		again <- result{res, err}
	}()
	select {
	case r := <-again:
		require.NoError(t, r.err)
		require.Equal(t, &BackfillResult{Slots: 3, Existing: 3}, r.res, "each slot at most once")
	case <-time.After(10 * time.Second):
		t.Fatal("Backfill waits for the finishing run")
	}
	_, err = finishing.Exec(ctx, "UPDATE workflow_runs SET status = 'completed', finished_at = now() WHERE id = $1", runID)
	require.NoError(t, err)
	require.NoError(t, finishing.Commit(ctx))
}

// TestReplaceWhileARunFinishes triggers a run under OverlapReplace, which
// cancels the unfinished run, while that run is finishing: the trigger must
// take the run before the schedule, as the run's status trigger does, or
// Postgres detects a deadlock.
func TestReplaceWhileARunFinishes(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "r", Workflow: "tick", Cron: "0 0 1 1 *", Overlap: OverlapReplace})
	require.NoError(t, err)
	first, err := sc.Trigger(ctx, s.ID, nil)
	require.NoError(t, err)

	finishing, err := db.Pool.Begin(ctx) // the first run's completion, in progress
	require.NoError(t, err)
	defer finishing.Rollback(ctx) //nolint:errcheck // committed below
	_, err = finishing.Exec(ctx, "UPDATE workflow_runs SET updated_at = now() WHERE id = $1", first)
	require.NoError(t, err)

	type result struct {
		id  uuid.UUID
		err error
	}
	second := make(chan result, 1)
	go func() {
		id, err := sc.Trigger(ctx, s.ID, nil)
		second <- result{id, err}
	}()
	db.WaitForLockWait(t, "%") // the second trigger waits for the first run
	_, err = finishing.Exec(ctx, "UPDATE workflow_runs SET status = 'completed', finished_at = now() WHERE id = $1", first)
	require.NoError(t, err, "the finishing run's trigger must get the schedule")
	require.NoError(t, finishing.Commit(ctx))
	r := <-second
	require.NoError(t, r.err)
	require.NotEqual(t, first, r.id)
}

var failing = workflow.Define("failing", func(ctx workflow.Context, _ struct{}) (string, error) {
	return "", workflow.NonRetryable(errors.New("report generator is down"))
}, nil)

// insertOnly returns a schedule client bound to a workflow client that
// works nothing: slots wait until a working client starts.
func insertOnly(t *testing.T, db *testdb.DB) *Client {
	t.Helper()
	sc := New(nil)
	_, err := workflow.NewClient(db.Pool, &workflow.Config{Extensions: []workflow.Extension{sc}, Schema: db.Schema})
	require.NoError(t, err)
	return sc
}

func TestLedger(t *testing.T) {
	t.Parallel()

	t.Run("FailureCountAndLastStatus", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		sc := startClients(t, db, 1)[0]
		ctx := ctxT(t, 60*time.Second)
		s, err := sc.Create(ctx, &Params{Name: "f", Workflow: "failing", Cron: "* * * * * *", Overlap: OverlapAllow})
		require.NoError(t, err)
		waitRuns(t, db, s.ID, 2, 30*time.Second)
		_, err = sc.Pause(ctx, s.ID, "")
		require.NoError(t, err)
		waitDB(t, db, 30*time.Second, func(ctx context.Context) error {
			got, err := sc.Get(ctx, s.ID)
			require.NoError(t, err)
			if got.FailureCount < 2 || got.LastRunStatus != "failed" {
				return fmt.Errorf("failure count %d, last run %s; want 2 or more, failed", got.FailureCount, got.LastRunStatus)
			}
			return nil
		})
		history, err := sc.History(ctx, s.ID, nil)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(history), 2)
		require.JSONEq(t, `"UTC"`, mustJSON(t, metaField(t, history[0].Metadata, "schedule_zone")))
	})

	t.Run("TriggerAndBackfill", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		sc := startClients(t, db, 1)[0]
		ctx := ctxT(t, 60*time.Second)
		s, err := sc.Create(ctx, &Params{Name: "daily", Workflow: "tick", Cron: "0 6 * * *", TimeZone: "America/New_York", Overlap: OverlapAllow})
		require.NoError(t, err)

		runID, err := sc.Trigger(ctx, s.ID, &TriggerOpts{Input: map[string]int{"n": 1}})
		require.NoError(t, err)
		require.NotEqual(t, uuid.Nil, runID)

		// A past week: 7 slots. Backfill twice: the second adds nothing.
		from := time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)
		to := time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC)
		res, err := sc.Backfill(ctx, s.ID, from, to, nil)
		require.NoError(t, err)
		require.Equal(t, 7, res.Started+res.Queued)
		res, err = sc.Backfill(ctx, s.ID, from, to, nil)
		require.NoError(t, err)
		require.Equal(t, &BackfillResult{Slots: 7, Existing: 7}, res, "each slot at most once")

		waitRuns(t, db, s.ID, 8, 30*time.Second)
		got, err := sc.Get(ctx, s.ID)
		require.NoError(t, err)
		require.EqualValues(t, 8, got.RunCount)
	})

	t.Run("DSTNoteOnTheRun", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		sc := startClients(t, db, 1)[0]
		ctx := ctxT(t, 60*time.Second)
		s, err := sc.Create(ctx, &Params{Name: "night", Workflow: "tick", Cron: "30 2 * * *", TimeZone: "America/New_York", Overlap: OverlapAllow})
		require.NoError(t, err)
		_, err = sc.Backfill(ctx, s.ID, time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC), nil)
		require.NoError(t, err)
		history, err := sc.History(ctx, s.ID, nil)
		require.NoError(t, err)
		require.Len(t, history, 1)
		require.Equal(t, "2026-03-08T07:00:00Z", history[0].FireAt.UTC().Format(time.RFC3339), "03:00 EDT, right after the jump")
		require.Equal(t, "2026-03-08T02:30:00", metaField(t, history[0].Metadata, "schedule_nominal"))
		require.Contains(t, metaField(t, history[0].Metadata, "schedule_dst_note"), "does not exist")
	})
}

func TestUpdateTakesEffectAtNextSlot(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "u", Workflow: "tick", Cron: "0 9 * * *", TimeZone: "Europe/Paris"})
	require.NoError(t, err)

	cron := "0 18 * * *"
	updated, err := sc.Update(ctx, s.ID, &UpdateParams{Cron: &cron})
	require.NoError(t, err)
	require.Equal(t, cron, updated.Cron)
	require.Equal(t, 18, updated.NextFireAt.In(mustZone(t, "Europe/Paris")).Hour())

	var jobs int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE kind = 'tributary:schedule_fire'").Scan(&jobs))
	require.Equal(t, 2, jobs, "the old slot's job stays and finds itself stale; the new one is seeded")

	bad := "not cron"
	_, err = sc.Update(ctx, s.ID, &UpdateParams{Cron: &bad})
	require.ErrorIs(t, err, ErrInvalid)
	again, err := sc.Get(ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, cron, again.Cron, "a failed update changes nothing")
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
	require.Equal(t, "missed", missedReason(everySecond, at, at.Add(500*time.Millisecond)), "no later slot passed over")
	require.Equal(t, "missed; the chain also passed over 1 later slot, from 2026-11-25T08:00:01Z to 2026-11-25T08:00:01Z",
		missedReason(everySecond, at, at.Add(1500*time.Millisecond)))
	require.Equal(t, "missed; the chain also passed over more than 1000 later slots, from 2026-11-25T08:00:01Z to 2026-11-26T08:00:00Z",
		missedReason(everySecond, at, at.Add(24*time.Hour)), "a day of a per-second schedule: one row, the count bounded")
	require.Equal(t, SkipReasonMissed, skipKind(missedReason(everySecond, at, at.Add(time.Hour))))
}

func metaField(t *testing.T, raw []byte, key string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	v, _ := m[key].(string)
	return v
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

func TestOverlapQueueAndReplace(t *testing.T) {
	t.Parallel()

	t.Run("Queue", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		sc := startClients(t, db, 1)[0]
		ctx := ctxT(t, 60*time.Second)
		s, err := sc.Create(ctx, &Params{Name: "q", Workflow: "stuck", Cron: "* * * * * *", Overlap: OverlapQueue})
		require.NoError(t, err)
		waitRuns(t, db, s.ID, 4, 30*time.Second)
		_, err = sc.Pause(ctx, s.ID, "")
		require.NoError(t, err)

		history, err := sc.History(ctx, s.ID, nil)
		require.NoError(t, err)
		var first, queued *workflow.Run
		skipped := 0
		for _, run := range history { // newest first
			switch {
			case run.Status == workflow.StatusSkipped:
				require.Equal(t, SkipReasonOverlap, run.SkipReason)
				skipped++
			case jsonHas(t, run.Metadata, "schedule_queued"):
				require.Nil(t, queued, "at most one run waits")
				queued = run
			default:
				first = run
			}
		}
		require.NotNil(t, first)
		require.NotNil(t, queued, "the second slot waits for the first run")
		require.GreaterOrEqual(t, skipped, 2)

		// The first run finishing releases the queued one.
		wf := sc.wf
		require.NoError(t, wf.Signal(ctx, first.ID, "never", "done"))
		waitDB(t, db, 30*time.Second, func(ctx context.Context) error {
			run, err := wf.GetRun(ctx, queued.ID)
			require.NoError(t, err)
			if run.Status != workflow.StatusWaiting {
				return fmt.Errorf("the queued run is %s, want waiting", run.Status)
			}
			return nil
		})
	})

	t.Run("Replace", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		sc := startClients(t, db, 1)[0]
		ctx := ctxT(t, 60*time.Second)
		s, err := sc.Create(ctx, &Params{Name: "r", Workflow: "stuck", Cron: "* * * * * *", Overlap: OverlapReplace})
		require.NoError(t, err)
		waitRuns(t, db, s.ID, 3, 30*time.Second)
		_, err = sc.Pause(ctx, s.ID, "")
		require.NoError(t, err)

		var unfinished, cancelled int
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status IN ('pending', 'running', 'sleeping', 'waiting')),
			count(*) FILTER (WHERE status = 'cancelled') FROM workflow_runs WHERE schedule_id = $1`, s.ID).Scan(&unfinished, &cancelled))
		require.Equal(t, 1, unfinished, "only the newest run is left")
		require.GreaterOrEqual(t, cancelled, 2)
	})
}

func jsonHas(t *testing.T, raw []byte, key string) bool {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	_, ok := m[key]
	return ok
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
			resumedAt := time.Now()
			_, err = sc.Resume(ctx, s.ID, &ResumeOpts{Missed: missed})
			require.NoError(t, err)

			var n int
			require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM workflow_runs WHERE schedule_id = $1 AND fire_at <= $2", s.ID, resumedAt).Scan(&n))
			switch missed {
			case MissedSkip:
				require.Zero(t, n)
			case MissedLatest:
				require.Equal(t, 1, n)
			case MissedBackfill:
				require.GreaterOrEqual(t, n, 3)
				var distinct int
				require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(DISTINCT fire_at) FROM workflow_runs WHERE schedule_id = $1", s.ID).Scan(&distinct))
				require.Equal(t, n, distinct)
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

var whoami = workflow.Define("whoami", func(ctx workflow.Context, _ struct{}) (string, error) {
	return ctx.Run().GrantSubject, nil
}, nil)

func TestExecutionGrants(t *testing.T) {
	t.Parallel()

	// setup's grant expires expiresIn after it is created (0: never): the
	// database and client take a while to set up on a loaded machine.
	setup := func(t *testing.T, scopes []string, expiresIn time.Duration) (*testdb.DB, *Client, *Schedule, *Grant) {
		t.Helper()
		db := testdb.New(t)
		sc := startClients(t, db, 1)[0]
		ctx := ctxT(t, 30*time.Second)
		var expires time.Time
		if expiresIn > 0 {
			expires = time.Now().Add(expiresIn)
		}
		g, err := sc.CreateGrant(ctx, &GrantParams{Subject: "user-42", Scopes: scopes, ExpiresAt: expires})
		require.NoError(t, err)
		s, err := sc.Create(ctx, &Params{Name: "g", Workflow: "whoami", Cron: "* * * * * *", Overlap: OverlapAllow, GrantID: &g.ID})
		require.NoError(t, err)
		return db, sc, s, g
	}
	skipReasons := func(t *testing.T, db *testdb.DB, id uuid.UUID) map[string]int {
		t.Helper()
		rows, err := db.Pool.Query(context.Background(), "SELECT coalesce(skip_reason, status) FROM workflow_runs WHERE schedule_id = $1", id)
		require.NoError(t, err)
		out := map[string]int{}
		for rows.Next() {
			var r string
			require.NoError(t, rows.Scan(&r))
			out[r]++
		}
		return out
	}
	waitSkips := func(t *testing.T, db *testdb.DB, id uuid.UUID, reason string, n int) {
		t.Helper()
		waitDB(t, db, 30*time.Second, func(context.Context) error {
			if got := skipReasons(t, db, id); got[reason] < n {
				return fmt.Errorf("outcomes %v, want %d %q", got, n, reason)
			}
			return nil
		})
	}

	t.Run("SubjectReachesTheRunAndRevokeSkips", func(t *testing.T) {
		t.Parallel()

		db, sc, s, g := setup(t, []string{ScopeExecute("whoami")}, 0)
		ctx := ctxT(t, 30*time.Second)
		waitSkips(t, db, s.ID, "completed", 1)
		runs, err := sc.History(ctx, s.ID, &workflow.ListParams{Status: workflow.StatusCompleted})
		require.NoError(t, err)
		require.JSONEq(t, `"user-42"`, string(runs[0].Output))

		_, err = sc.RevokeGrant(ctx, g.ID, "user left")
		require.NoError(t, err)
		waitSkips(t, db, s.ID, SkipReasonGrantRevoked, 2)
		got, err := sc.Get(ctx, s.ID)
		require.NoError(t, err)
		require.NotNil(t, got.NextFireAt, "the chain stays alive")
	})

	t.Run("OutOfScope", func(t *testing.T) {
		t.Parallel()

		// Create and Update refuse a grant that would skip every slot.
		db := testdb.New(t)
		sc := insertOnly(t, db)
		ctx := ctxT(t, 30*time.Second)
		other, err := sc.CreateGrant(ctx, &GrantParams{Subject: "user-42", Scopes: []string{ScopeExecute("other")}})
		require.NoError(t, err)
		_, err = sc.Create(ctx, &Params{Name: "g", Workflow: "whoami", Cron: "* * * * * *", GrantID: &other.ID})
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, `would skip every slot ("grant out of scope"); use a grant that is live and has scope "workflow:execute:whoami"`)
		s, err := sc.Create(ctx, &Params{Name: "g", Workflow: "whoami", Cron: "0 0 1 1 *"})
		require.NoError(t, err)
		_, err = sc.Update(ctx, s.ID, &UpdateParams{GrantID: &other.ID})
		require.ErrorIs(t, err, ErrInvalid)
		got, err := sc.Get(ctx, s.ID)
		require.NoError(t, err)
		require.Nil(t, got.GrantID, "nothing written")

		// A grant's scopes changed behind Tributary's back: the slots skip.
		db, _, s, g := setup(t, []string{"*"}, 0)
		_, err = db.Pool.Exec(ctx, "UPDATE execution_grants SET scopes = ARRAY['workflow:execute:other'] WHERE id = $1", g.ID)
		require.NoError(t, err)
		waitSkips(t, db, s.ID, SkipReasonGrantOutOfScope, 2)
	})

	t.Run("Expired", func(t *testing.T) {
		t.Parallel()

		db, _, s, _ := setup(t, []string{"*"}, 1500*time.Millisecond)
		waitSkips(t, db, s.ID, SkipReasonGrantExpired, 1)
	})

	t.Run("BadInput", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		sc := insertOnly(t, db)
		ctx := ctxT(t, 30*time.Second)
		_, err := sc.CreateGrant(ctx, &GrantParams{Subject: "", Scopes: []string{"*"}})
		require.ErrorIs(t, err, ErrInvalid)
		_, err = sc.CreateGrant(ctx, &GrantParams{Subject: "u", Scopes: nil})
		require.ErrorIs(t, err, ErrInvalid)
		missing := uuid.New()
		_, err = sc.Create(ctx, &Params{Name: "x", Workflow: "whoami", Cron: "@daily", GrantID: &missing})
		require.ErrorIs(t, err, ErrInvalid)
	})
}

func TestUpdatePolicies(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "p", Owner: "a", Workflow: "tick", Cron: "0 9 * * *"})
	require.NoError(t, err)
	g, err := sc.CreateGrant(ctx, &GrantParams{Subject: "u", Scopes: []string{"*"}})
	require.NoError(t, err)

	latest, owner := CatchUpLatest, "b"
	start := time.Now().Add(72 * time.Hour).Truncate(time.Second)
	updated, err := sc.Update(ctx, s.ID, &UpdateParams{CatchUp: &latest, Owner: &owner, StartAt: &start, GrantID: &g.ID})
	require.NoError(t, err)
	require.Equal(t, CatchUpLatest, updated.CatchUp)
	require.Equal(t, "b", updated.Owner)
	require.Equal(t, g.ID, *updated.GrantID)
	require.False(t, updated.NextFireAt.Before(start), "the new start moves the pending slot")

	none := uuid.Nil
	updated, err = sc.Update(ctx, s.ID, &UpdateParams{GrantID: &none})
	require.NoError(t, err)
	require.Nil(t, updated.GrantID)

	missing := uuid.New()
	_, err = sc.Update(ctx, s.ID, &UpdateParams{GrantID: &missing})
	require.ErrorIs(t, err, ErrInvalid)
}

func TestBackfillOverrides(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "b", Workflow: "tick", Cron: "0 6 * * *", Input: map[string]int{"n": 1}})
	require.NoError(t, err)
	from, to := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)

	_, err = sc.Backfill(ctx, s.ID, from, to, &BackfillOpts{Overlap: "sometimes"})
	require.ErrorIs(t, err, ErrInvalid)

	// Under skip only the first slot starts: nobody works these runs, so it
	// stays unfinished. With allow and an input override, all three run.
	res, err := sc.Backfill(ctx, s.ID, from, to, &BackfillOpts{Input: map[string]int{"n": 2}, Overlap: OverlapAllow})
	require.NoError(t, err)
	require.Equal(t, &BackfillResult{Slots: 3, Started: 3}, res)
	var inputs []string
	rows, err := db.Pool.Query(ctx, "SELECT input::text FROM workflow_runs WHERE schedule_id = $1 AND status <> 'skipped'", s.ID)
	require.NoError(t, err)
	for rows.Next() {
		var in string
		require.NoError(t, rows.Scan(&in))
		inputs = append(inputs, in)
	}
	require.Equal(t, []string{`{"n": 2}`, `{"n": 2}`, `{"n": 2}`}, inputs)
}

// TestFiresTypesOtherProcessesWork: a slot fires in whichever process holds
// its job, which need not have the workflow's code (tributary serve has
// none): the run is started for the process that has it.
func TestFiresTypesOtherProcessesWork(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := startClients(t, db, 1)[0]
	ctx := ctxT(t, 30*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "elsewhere", Workflow: "report_in_another_service", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.ErrorIs(t, err, ErrInvalid, "a client that registers types checks the name against them")

	other := insertOnly(t, db) // registers no types, like the CLI
	s, err = other.Create(ctx, &Params{Name: "elsewhere", Workflow: "report_in_another_service", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.NoError(t, err)
	waitRuns(t, db, s.ID, 2, 20*time.Second)
	history, err := sc.History(ctx, s.ID, nil)
	require.NoError(t, err)
	require.Equal(t, workflow.StatusPending, history[0].Status, "started, waiting for a worker of its type")
}
