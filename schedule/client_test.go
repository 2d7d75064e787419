package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
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
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		River: &river.Config{
			Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
			TestOnly: true,
		},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{tick, stuck, failing, whoami},
	})
	require.NoError(t, err)
	sc, err := New(wf, config)
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

// poolClient is a working client on a pool of the test's own, with its
// schedule client.
type poolClient struct {
	wf        *workflow.Client
	schedules *Client
	stopOnce  sync.Once
	stopErr   error
}

// stop stops the client, once.
func (c *poolClient) stop() error {
	c.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.stopErr = c.wf.Stop(ctx)
	})
	return c.stopErr
}

// startPoolClient starts a working client on pool, in schema ("" for the
// pool's search path), with a default queue of workers workers, that runs
// tick and flows; it stops when the test ends, if not before (a stop after
// a failover may fail: the test's own stop asserts where it matters).
func startPoolClient(t *testing.T, pool *pgxpool.Pool, schema string, workers int, flows ...workflow.Registrable) *poolClient {
	t.Helper()
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	wf, err := workflow.NewClient(pool, &workflow.Config{
		Logger: discard,
		River: &river.Config{
			Logger:   discard,
			Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
			TestOnly: true,
		},
		Schema:    schema,
		Workflows: append([]workflow.Registrable{tick}, flows...),
	})
	require.NoError(t, err)
	sc, err := New(wf, nil)
	require.NoError(t, err)
	require.NoError(t, wf.Start(context.Background()))
	c := &poolClient{wf: wf, schedules: sc}
	t.Cleanup(func() { _ = c.stop() })
	return c
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
	next, err := sc.Next(ctx, ByID(s.ID), 3)
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
	_, err = clients[1].Pause(ctx, ByID(s.ID), "test over")
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

	got, err := clients[0].Get(ctx, ByID(s.ID))
	require.NoError(t, err)
	require.EqualValues(t, len(fired), got.RunCount)
	require.True(t, got.Paused)
	require.Nil(t, got.NextFireAt)
}

func TestPauseResumeDelete(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := startClients(t, db, 1)[0]
	ctx := ctxT(t, 60*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "p", Owner: "alice", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.NoError(t, err)
	waitRuns(t, db, s.ID, 2, 30*time.Second)

	paused, err := sc.Pause(ctx, ByID(s.ID), "maintenance")
	require.NoError(t, err)
	require.True(t, paused.Paused)
	require.Equal(t, "maintenance", paused.PauseNote)

	before := time.Now()
	resumed, err := sc.Resume(ctx, ByID(s.ID), nil)
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

	require.NoError(t, sc.Delete(ctx, ByID(s.ID)))
	require.ErrorIs(t, sc.Delete(ctx, ByID(s.ID)), ErrNotFound)
	_, err = sc.Get(ctx, ByID(s.ID))
	require.ErrorIs(t, err, ErrNotFound)
	var kept int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM workflow_runs WHERE schedule_id IS NULL AND fire_at IS NOT NULL").Scan(&kept))
	require.GreaterOrEqual(t, kept, 2, "past runs stay, unlinked")
}

var failing = workflow.Define("failing", func(ctx workflow.Context, _ struct{}) (string, error) {
	return "", workflow.NonRetryable(errors.New("report generator is down"))
}, nil)

// insertOnly returns a schedule client bound to a workflow client that
// works nothing: slots wait until a working client starts.
func insertOnly(t *testing.T, db *testdb.DB) *Client {
	t.Helper()
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{Schema: db.Schema})
	require.NoError(t, err)
	sc, err := New(wf, nil)
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
		_, err = sc.Pause(ctx, ByID(s.ID), "")
		require.NoError(t, err)
		waitDB(t, db, 30*time.Second, func(ctx context.Context) error {
			got, err := sc.Get(ctx, ByID(s.ID))
			require.NoError(t, err)
			if got.FailureCount < 2 || got.LastRunStatus != "failed" {
				return fmt.Errorf("failure count %d, last run %s; want 2 or more, failed", got.FailureCount, got.LastRunStatus)
			}
			return nil
		})
		history, err := sc.History(ctx, ByID(s.ID), nil)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(history), 2)
		require.JSONEq(t, `"UTC"`, mustJSON(t, metaField(t, history[0].Metadata, "schedule_zone")))
	})

	// The status trigger rewrites a schedule only when its last status
	// changes or its runs failed (migration 027): a run that completes
	// like the one before leaves the schedule's row as it was (its xmin).
	t.Run("UnchangedStatusLeavesTheRow", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		sc := insertOnly(t, db)
		ctx := ctxT(t, 30*time.Second)
		s, err := sc.Create(ctx, &Params{Name: "steady", Workflow: "w", Cron: "0 0 1 1 *", Overlap: OverlapAllow})
		require.NoError(t, err)

		type row struct {
			xmin     uint32
			status   string
			failures int
		}
		read := func() row {
			var r row
			require.NoError(t, db.Pool.QueryRow(ctx, `SELECT xmin::text::bigint, coalesce(last_run_status, ''), failure_count
				FROM schedules WHERE id = $1`, s.ID).Scan(&r.xmin, &r.status, &r.failures))
			return r
		}
		finish := func(i int, status string) row {
			t.Helper()
			id := uuid.New()
			_, err := db.Pool.Exec(ctx, `INSERT INTO workflow_runs (id, workflow_type, max_attempts, queue, status, schedule_id, fire_at)
				VALUES ($1, 'w', 1, 'default', 'running', $2, '2030-01-01'::timestamptz + $3 * interval '1 day')`, id, s.ID, i)
			require.NoError(t, err)
			_, err = db.Pool.Exec(ctx, `UPDATE workflow_runs SET status = $2, finished_at = now() WHERE id = $1`, id, status)
			require.NoError(t, err)
			return read()
		}

		before := read()
		first := finish(1, "completed")
		require.Equal(t, "completed", first.status)
		require.NotEqual(t, before.xmin, first.xmin, "a first status is written")
		second := finish(2, "completed")
		require.Equal(t, first, second, "the same status again leaves the row")
		failed := finish(3, "failed")
		require.Equal(t, "failed", failed.status)
		require.Equal(t, 1, failed.failures)
		again := finish(4, "failed")
		require.Equal(t, "failed", again.status)
		require.Equal(t, 2, again.failures, "a failure counts though the status stands")
		require.NotEqual(t, failed.xmin, again.xmin)
	})

	t.Run("TriggerAndBackfill", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		sc := startClients(t, db, 1)[0]
		ctx := ctxT(t, 60*time.Second)
		s, err := sc.Create(ctx, &Params{Name: "daily", Workflow: "tick", Cron: "0 6 * * *", TimeZone: "America/New_York", Overlap: OverlapAllow})
		require.NoError(t, err)

		runID, err := sc.Trigger(ctx, ByID(s.ID), &TriggerOpts{Input: map[string]int{"n": 1}})
		require.NoError(t, err)
		require.NotEqual(t, uuid.Nil, runID)

		// A past week: 7 slots. Backfill twice: the second adds nothing.
		from := time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)
		to := time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC)
		res, err := sc.Backfill(ctx, ByID(s.ID), from, to, nil)
		require.NoError(t, err)
		require.Equal(t, 7, res.Started+res.Queued)
		res, err = sc.Backfill(ctx, ByID(s.ID), from, to, nil)
		require.NoError(t, err)
		require.Equal(t, &BackfillResult{Slots: 7, Existing: 7}, res, "each slot at most once")

		waitRuns(t, db, s.ID, 8, 30*time.Second)
		got, err := sc.Get(ctx, ByID(s.ID))
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
		_, err = sc.Backfill(ctx, ByID(s.ID), time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC), nil)
		require.NoError(t, err)
		history, err := sc.History(ctx, ByID(s.ID), nil)
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
	updated, err := sc.Update(ctx, ByID(s.ID), &UpdateParams{Cron: &cron})
	require.NoError(t, err)
	require.Equal(t, cron, updated.Cron)
	require.Equal(t, 18, updated.NextFireAt.In(mustZone(t, "Europe/Paris")).Hour())

	var jobs int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE kind = 'tributary:schedule_fire'").Scan(&jobs))
	require.Equal(t, 2, jobs, "the old slot's job stays and finds itself stale; the new one is seeded")

	bad := "not cron"
	_, err = sc.Update(ctx, ByID(s.ID), &UpdateParams{Cron: &bad})
	require.ErrorIs(t, err, ErrInvalid)
	again, err := sc.Get(ctx, ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, cron, again.Cron, "a failed update changes nothing")
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

func jsonHas(t *testing.T, raw []byte, key string) bool {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	_, ok := m[key]
	return ok
}

var whoami = workflow.Define("whoami", func(ctx workflow.Context, _ struct{}) (string, error) {
	return ctx.Run().GrantSubject, nil
}, nil)

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
	updated, err := sc.Update(ctx, ByID(s.ID), &UpdateParams{CatchUp: &latest, Owner: &owner, StartAt: &start, GrantID: &g.ID})
	require.NoError(t, err)
	require.Equal(t, CatchUpLatest, updated.CatchUp)
	require.Equal(t, "b", updated.Owner)
	require.Equal(t, g.ID, *updated.GrantID)
	require.False(t, updated.NextFireAt.Before(start), "the new start moves the pending slot")

	none := uuid.Nil
	updated, err = sc.Update(ctx, ByID(s.ID), &UpdateParams{GrantID: &none})
	require.NoError(t, err)
	require.Nil(t, updated.GrantID)

	missing := uuid.New()
	_, err = sc.Update(ctx, ByID(s.ID), &UpdateParams{GrantID: &missing})
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

	_, err = sc.Backfill(ctx, ByID(s.ID), from, to, &BackfillOpts{Overlap: "sometimes"})
	require.ErrorIs(t, err, ErrInvalid)

	// Under skip only the first slot starts: nobody works these runs, so it
	// stays unfinished. With allow and an input override, all three run.
	res, err := sc.Backfill(ctx, ByID(s.ID), from, to, &BackfillOpts{Input: map[string]int{"n": 2}, Overlap: OverlapAllow})
	require.NoError(t, err)
	require.Equal(t, &BackfillResult{Slots: 3, Started: 3}, res)
	var inputs []string
	rows, err := db.Pool.Query(ctx, "SELECT input::text FROM workflow_runs r WHERE schedule_id = $1 AND status <> 'skipped' AND "+notPreparedRun, s.ID)
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
	_, err := sc.Create(ctx, &Params{Name: "elsewhere", Workflow: "report_in_another_service", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.ErrorIs(t, err, ErrInvalid, "a client that registers types checks the name against them")

	other := insertOnly(t, db) // registers no types, like the CLI
	s, err := other.Create(ctx, &Params{Name: "elsewhere", Workflow: "report_in_another_service", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.NoError(t, err)
	waitRuns(t, db, s.ID, 2, 20*time.Second)
	history, err := sc.History(ctx, ByID(s.ID), nil)
	require.NoError(t, err)
	require.Equal(t, workflow.StatusPending, history[0].Status, "started, waiting for a worker of its type")
}
