package engine_test

// The conformance suite: each test pins one thing package engine (and so
// Tributary) assumes about River, against the River version in go.mod. A
// River upgrade that changes one of them fails here, with a message naming
// the assumption, instead of breaking runs quietly.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/testdb"
)

type noopArgs struct{}

func (noopArgs) Kind() string { return "conformance_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

// ctx is a context for one step of a test, ended after 30 s or with the
// test.
func ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startRiver starts a River client on db's schema, with the engine's driver
// (completer may be nil), working queue "q" with workers.
func startRiver(t *testing.T, db *testdb.DB, completer engine.Completer, config *river.Config) *river.Client[pgx.Tx] {
	t.Helper()
	config.Schema = db.Schema
	if config.Queues == nil {
		config.Queues = map[string]river.QueueConfig{"q": {MaxWorkers: 2}}
	}
	client, err := river.NewClient[pgx.Tx](engine.NewDriver(db.Pool, completer), config)
	require.NoError(t, err)
	require.NoError(t, client.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, client.Stop(ctx))
	})
	return client
}

// insertJob writes a job row as a River client would have left it.
func insertJob(t *testing.T, db *testdb.DB, kind, state string, attempt, maxAttempts int, attemptedBy ...string) int64 {
	t.Helper()
	var id int64
	err := db.Pool.QueryRow(ctx(t), `
INSERT INTO river_job (args, kind, max_attempts, queue, state, attempt, attempted_at, attempted_by, priority, scheduled_at)
VALUES ('{}', $1, $2, 'q', $3::text::river_job_state, $4::smallint, CASE WHEN $4::smallint > 0 THEN now() END, $5, 1,
	CASE WHEN $3::text = 'scheduled' THEN now() + interval '1 hour' ELSE now() END)
RETURNING id`, kind, maxAttempts, state, attempt, attemptedBy).Scan(&id)
	require.NoError(t, err)
	return id
}

type jobRow struct {
	state       string
	finalized   bool
	errors      []string
	metadata    map[string]any
	scheduledAt time.Time
}

func readJob(t *testing.T, db *testdb.DB, id int64) jobRow {
	t.Helper()
	var (
		r    jobRow
		errs [][]byte
		meta []byte
	)
	require.NoError(t, db.Pool.QueryRow(ctx(t), `SELECT state::text, finalized_at IS NOT NULL, coalesce(errors, '{}'), metadata, scheduled_at FROM river_job WHERE id = $1`, id).
		Scan(&r.state, &r.finalized, &errs, &meta, &r.scheduledAt))
	for _, e := range errs {
		var ae rivertype.AttemptError
		require.NoError(t, json.Unmarshal(e, &ae))
		r.errors = append(r.errors, ae.Error)
	}
	require.NoError(t, json.Unmarshal(meta, &r.metadata))
	return r
}

// recordingCompleter records the jobs River's completer hands it and, when
// handle is set, writes a mark of each in the same transaction as River's
// update.
type recordingCompleter struct {
	pool   *pgxpool.Pool
	handle bool

	mu        sync.Mutex
	ids       []int64
	riverDone []int64                     // the jobs CompletedByRiver was given
	settled   map[int64]*rivertype.JobRow // what TakeCompleted answers with
}

func (rc *recordingCompleter) TakeCompleted(_ context.Context, jobIDs []int64) map[int64]*rivertype.JobRow {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var rows map[int64]*rivertype.JobRow
	for _, id := range jobIDs {
		if row, ok := rc.settled[id]; ok {
			if rows == nil {
				rows = map[int64]*rivertype.JobRow{}
			}
			rows[id] = row
			delete(rc.settled, id)
		}
	}
	return rows
}

func (rc *recordingCompleter) CompletedByRiver(_ context.Context, jobs []*rivertype.JobRow) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, job := range jobs {
		rc.riverDone = append(rc.riverDone, job.ID)
	}
}

func (rc *recordingCompleter) completedByRiver() []int64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.riverDone)
}

func (rc *recordingCompleter) CompleteWithRiver(ctx context.Context, jobIDs []int64, apply func(context.Context, pgx.Tx) error) (bool, error) {
	rc.mu.Lock()
	rc.ids = append(rc.ids, jobIDs...)
	rc.mu.Unlock()
	if !rc.handle {
		return false, nil
	}
	return true, pgx.BeginFunc(ctx, rc.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO marks SELECT unnest($1::bigint[])`, jobIDs); err != nil {
			return err
		}
		return apply(ctx, tx)
	})
}

func (rc *recordingCompleter) saw(id int64) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Contains(rc.ids, id)
}

// TestCompleterSeesRiverCompletions pins that River's completer records a
// worked job's completion through the driver's pilot: the Completer sees
// the job, and River's update commits in the Completer's transaction (or,
// when it declines, as usual).
func TestCompleterSeesRiverCompletions(t *testing.T) {
	t.Parallel()

	for _, handle := range []bool{true, false} {
		t.Run(map[bool]string{true: "Handled", false: "Declined"}[handle], func(t *testing.T) {
			t.Parallel()
			db := testdb.New(t)
			_, err := db.Pool.Exec(ctx(t), `CREATE TABLE marks (job_id bigint)`)
			require.NoError(t, err)
			workers := river.NewWorkers()
			river.AddWorker(workers, noopWorker{})
			completer := &recordingCompleter{pool: db.Pool, handle: handle}
			client := startRiver(t, db, completer, &river.Config{Workers: workers})
			events, cancel := client.Subscribe(river.EventKindJobCompleted)
			defer cancel()

			res, err := client.Insert(ctx(t), noopArgs{}, &river.InsertOpts{Queue: "q"})
			require.NoError(t, err)
			select {
			case ev := <-events:
				require.Equal(t, res.Job.ID, ev.Job.ID)
			case <-ctx(t).Done():
				t.Fatal("River did not complete the job within 30s")
			}
			// The completed event is sent once the completer's batch has
			// been written.
			require.True(t, completer.saw(res.Job.ID),
				"River's completer did not record the job's completion through the driver's pilot (JobSetStateIfRunningMany): the engine's completion of runs with their jobs relies on it")
			require.Equal(t, "completed", readJob(t, db, res.Job.ID).state)
			var marks int
			require.NoError(t, db.Pool.QueryRow(ctx(t), `SELECT count(*) FROM marks WHERE job_id = $1`, res.Job.ID).Scan(&marks))
			require.Equal(t, map[bool]int{true: 1, false: 0}[handle], marks)
			// When the Completer declines, it hears which jobs River's own
			// update completed: the engine relies on it to notice a workflow
			// job completed without its run.
			if handle {
				require.Empty(t, completer.completedByRiver())
			} else {
				require.Equal(t, []int64{res.Job.ID}, completer.completedByRiver(),
					"the driver no longer tells which jobs River's update completed itself (River's JobSetStateIfRunningMany no longer sets the finalized_at it is given?)")
			}
		})
	}
}

// TestCompletedByRiverLeavesEarlierCompletions pins that a job completed
// before River's completer gets to it (by the engine, with its run) is not
// reported as completed by River.
func TestCompletedByRiverLeavesEarlierCompletions(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	completer := &recordingCompleter{pool: db.Pool}
	driver := engine.NewDriver(db.Pool, completer)
	jobs := engine.NewJobs(engine.NewQueries(db.Schema))
	early := insertJob(t, db, "workflow:x", "running", 1, 3, "a")
	late := insertJob(t, db, "workflow:x", "running", 1, 3, "a")
	require.NoError(t, pgx.BeginFunc(ctx(t), db.Pool, func(tx pgx.Tx) error { return jobs.CompleteTx(ctx(t), tx, early, nil) }))

	params := completedParams(db.Schema, time.Now(), nil, early, late)
	rows, err := driver.PluginPilot().JobSetStateIfRunningMany(ctx(t), driver.GetExecutor(), params)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, []int64{late}, completer.completedByRiver())
}

// completedParams are River's completer's parameters completing ids at at,
// with metadata to merge for those in merge.
func completedParams(schema string, at time.Time, merge map[int64][]byte, ids ...int64) *riverdriver.JobSetStateIfRunningManyParams {
	params := &riverdriver.JobSetStateIfRunningManyParams{Schema: schema}
	for _, id := range ids {
		p := riverdriver.JobSetStateCompleted(id, at, merge[id])
		params.ID = append(params.ID, id)
		params.Attempt = append(params.Attempt, p.Attempt)
		params.ErrData = append(params.ErrData, p.ErrData)
		params.FinalizedAt = append(params.FinalizedAt, p.FinalizedAt)
		params.MetadataDoMerge = append(params.MetadataDoMerge, p.MetadataDoMerge)
		params.MetadataUpdates = append(params.MetadataUpdates, p.MetadataUpdates)
		params.ScheduledAt = append(params.ScheduledAt, p.ScheduledAt)
		params.State = append(params.State, p.State)
	}
	return params
}

// TestTakeCompletedIsNotWrittenAgain pins the one completion writer: a
// job the Completer says it completed (TakeCompleted) is answered with the
// Completer's row and not written by River's update, unless it has
// metadata to merge, which only River's update does; the batch's other
// jobs are written as usual.
func TestTakeCompletedIsNotWrittenAgain(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	taken := insertJob(t, db, "workflow:x", "running", 1, 3, "a")
	merged := insertJob(t, db, "workflow:x", "running", 1, 3, "a")
	other := insertJob(t, db, "workflow:x", "running", 1, 3, "a")
	at := time.Now().UTC().Truncate(time.Microsecond)
	mine := &rivertype.JobRow{ID: taken, State: rivertype.JobStateCompleted, FinalizedAt: &at}
	completer := &recordingCompleter{pool: db.Pool, settled: map[int64]*rivertype.JobRow{
		taken:  mine,
		merged: {ID: merged, State: rivertype.JobStateCompleted, FinalizedAt: &at},
	}}
	driver := engine.NewDriver(db.Pool, completer)

	params := completedParams(db.Schema, at.Add(time.Second), map[int64][]byte{merged: []byte(`{"mark": 1}`)}, taken, merged, other)
	rows, err := driver.PluginPilot().JobSetStateIfRunningMany(ctx(t), driver.GetExecutor(), params)
	require.NoError(t, err)
	byID := map[int64]*rivertype.JobRow{}
	for _, row := range rows {
		byID[row.ID] = row
	}
	require.Len(t, byID, 3, "one row per job of the batch")
	require.Same(t, mine, byID[taken], "a job the Completer completed is answered with its row")
	require.Equal(t, "running", readJob(t, db, taken).state, "and not written again (here it reads running: the fake Completer never wrote it)")
	require.Equal(t, "completed", readJob(t, db, merged).state, "a job with metadata to merge goes to River's update")
	require.EqualValues(t, 1, readJob(t, db, merged).metadata["mark"])
	require.Equal(t, "completed", readJob(t, db, other).state)
	require.Contains(t, completer.settled, merged, "a job sent to River's update was not taken")
}

// TestSetStateIfRunning pins that River's JobSetStateIfRunningMany only
// moves a running job, and returns a job it left alone with its state.
func TestSetStateIfRunning(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	jobs := engine.NewJobs(engine.NewQueries(db.Schema))
	inTx := func(f func(tx pgx.Tx) error) error { return pgx.BeginFunc(ctx(t), db.Pool, f) }

	running := insertJob(t, db, "workflow:x", "running", 1, 3, "a")
	require.NoError(t, inTx(func(tx pgx.Tx) error { return jobs.CompleteTx(ctx(t), tx, running, []byte(`{"mark": 1}`)) }))
	got := readJob(t, db, running)
	require.Equal(t, "completed", got.state)
	require.True(t, got.finalized)
	require.EqualValues(t, 1, got.metadata["mark"], "metadata is merged")
	require.NoError(t, inTx(func(tx pgx.Tx) error { return jobs.CompleteTx(ctx(t), tx, running, []byte(`{"mark": 2}`)) }),
		"a job already completed reads as completed")
	again := readJob(t, db, running)
	require.Equal(t, got.finalized, again.finalized)
	require.EqualValues(t, 2, again.metadata["mark"], "River merges metadata updates into a job that is no longer running")

	available := insertJob(t, db, "workflow:x", "available", 0, 3)
	job := &rivertype.JobRow{ID: available, Attempt: 0}
	err := inTx(func(tx pgx.Tx) error { return jobs.DiscardTx(ctx(t), tx, job, errors.New("boom")) })
	require.ErrorIs(t, err, engine.ErrJobNotRunning, "discarding a job that is not running")
	require.Equal(t, "available", readJob(t, db, available).state, "a job not running is left alone")

	for _, tc := range []struct {
		state string
		set   func(tx pgx.Tx, job *rivertype.JobRow) error
	}{
		{"discarded", func(tx pgx.Tx, job *rivertype.JobRow) error {
			return jobs.DiscardTx(ctx(t), tx, job, errors.New("boom"))
		}},
		{"cancelled", func(tx pgx.Tx, job *rivertype.JobRow) error {
			return jobs.CancelTx(ctx(t), tx, job, errors.New("boom"))
		}},
	} {
		id := insertJob(t, db, "workflow:x", "running", 2, 3, "a", "b")
		require.NoError(t, inTx(func(tx pgx.Tx) error { return tc.set(tx, &rivertype.JobRow{ID: id, Attempt: 2}) }))
		got := readJob(t, db, id)
		require.Equal(t, tc.state, got.state)
		require.True(t, got.finalized)
		require.Equal(t, []string{"boom"}, got.errors, "the attempt's error is what River UI shows")
	}
}

// TestCompleteRunningCTE pins that the engine's own completion statement
// leaves a job as River's completer would, so that the completer, coming
// second, finds nothing to do.
func TestCompleteRunningCTE(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	jobs := engine.NewJobs(engine.NewQueries(db.Schema))
	running := insertJob(t, db, "workflow:x", "running", 1, 3, "a")
	available := insertJob(t, db, "workflow:x", "available", 0, 3)

	cte := strings.NewReplacer("{s}", "", "$now", "$2").Replace(engine.CompleteRunningCTE)
	rows, err := db.Pool.Query(ctx(t), `WITH v AS (SELECT unnest($1::bigint[]) AS job_id), `+cte+` SELECT id FROM jobs`,
		[]int64{running, available}, nil)
	require.NoError(t, err)
	completed, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	require.Equal(t, []int64{running}, completed)
	require.Equal(t, "completed", readJob(t, db, running).state)
	require.True(t, readJob(t, db, running).finalized)
	require.Equal(t, "available", readJob(t, db, available).state)

	before := readJob(t, db, running)
	require.NoError(t, pgx.BeginFunc(ctx(t), db.Pool, func(tx pgx.Tx) error {
		return jobs.CompleteTx(ctx(t), tx, running, []byte(`{"second": true}`))
	}))
	after := readJob(t, db, running)
	require.Equal(t, before.state, after.state, "River's completer, coming second, must leave the job as the statement did")
	require.Equal(t, before.errors, after.errors)
	require.Equal(t, before.scheduledAt, after.scheduledAt)
}
