package engine_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/testdb"
)

type snoozeArgs struct{}

func (snoozeArgs) Kind() string { return "conformance_snooze" }

// snoozeWorker snoozes its job's first fetch and reports what each fetch
// saw.
type snoozeWorker struct {
	river.WorkerDefaults[snoozeArgs]
	seen chan *river.Job[snoozeArgs]
}

func (w snoozeWorker) Work(ctx context.Context, job *river.Job[snoozeArgs]) error {
	w.seen <- job
	if len(job.AttemptedBy) == 1 {
		return river.JobSnooze(0)
	}
	return nil
}

// TestAttemptedByOnEveryFetch pins that River appends the fetching client's
// id to attempted_by on every fetch, a snoozed one included, even though a
// snooze does not use up an attempt: a workflow attempt takes a job whose
// attempted_by holds one entry for one that has never been worked (see
// workflow's worker.begin).
func TestAttemptedByOnEveryFetch(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	w := snoozeWorker{seen: make(chan *river.Job[snoozeArgs], 2)}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	client := startRiver(t, db, nil, &river.Config{Workers: workers})
	_, err := client.Insert(ctx(t), snoozeArgs{}, &river.InsertOpts{Queue: "q"})
	require.NoError(t, err)

	var fetches []*river.Job[snoozeArgs]
	for len(fetches) < 2 {
		select {
		case job := <-w.seen:
			fetches = append(fetches, job)
		case <-ctx(t).Done():
			t.Fatalf("the snoozed job was fetched %d times within 30s, want 2", len(fetches))
		}
	}
	require.Equal(t, []string{client.ID()}, fetches[0].AttemptedBy)
	require.Equal(t, []string{client.ID(), client.ID()}, fetches[1].AttemptedBy, "River appends to attempted_by on every fetch")
	require.Equal(t, fetches[0].Attempt, fetches[1].Attempt, "a snooze does not use up an attempt")
}

// TestJobTableShape pins the columns and states of River's tables that
// Tributary's SQL names (package engine's, the read-only views of workflow,
// schedule and tributaryotel, and the river_job triggers of migration 006).
func TestJobTableShape(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	columns := func(table string) map[string]string {
		rows, err := db.Pool.Query(ctx(t), `SELECT column_name, udt_name FROM information_schema.columns
			WHERE table_schema = $1 AND table_name = $2`, db.Schema, table)
		require.NoError(t, err)
		got := map[string]string{}
		var name, typ string
		_, err = pgx.ForEachRow(rows, []any{&name, &typ}, func() error { got[name] = typ; return nil })
		require.NoError(t, err)
		return got
	}
	jobColumns := columns("river_job")
	for name, typ := range map[string]string{
		"id": "int8", "args": "jsonb", "attempt": "int2", "attempted_by": "_text", "errors": "_jsonb",
		"finalized_at": "timestamptz", "kind": "text", "max_attempts": "int2", "metadata": "jsonb",
		"priority": "int2", "queue": "text", "scheduled_at": "timestamptz", "state": "river_job_state", "tags": "_varchar",
	} {
		require.Equal(t, typ, jobColumns[name], "river_job.%s", name)
	}
	require.Equal(t, map[string]string{"leader_id": "text", "elected_at": "timestamptz", "expires_at": "timestamptz", "name": "text"},
		columns("river_leader"))

	var states []string
	require.NoError(t, db.Pool.QueryRow(ctx(t), `SELECT enum_range(NULL::river_job_state)::text[]`).Scan(&states))
	require.ElementsMatch(t, []string{"available", "cancelled", "completed", "discarded", "pending", "retryable", "running", "scheduled"}, states)
}

// TestUnknownKindFailure pins what a plain River client (without
// FetchOnlyKnownKinds) does to a job of a kind it has no worker for: it
// fetches it and fails it with rivertype.UnknownJobKindError, using up an
// attempt, and names itself last in attempted_by; workflow's worker
// recognizes that on the next attempt (worker.foreignFetch). A client with
// FetchOnlyKnownKinds, as Tributary's are, leaves the job alone.
func TestUnknownKindFailure(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)

	careful := river.NewWorkers()
	river.AddWorker(careful, noopWorker{})
	carefulClient := startRiver(t, db, nil, &river.Config{Workers: careful, FetchOnlyKnownKinds: true})
	carefulEvents, cancelCareful := carefulClient.Subscribe(river.EventKindJobCompleted)
	defer cancelCareful()
	id := insertJob(t, db, "workflow:conformance_unknown", "available", 0, 5)
	// A job the careful client knows, inserted after the unknown one,
	// shows it has fetched past it.
	known, err := client(t, db).Insert(ctx(t), noopArgs{}, &river.InsertOpts{Queue: "q"})
	require.NoError(t, err)
	waitCompleted(t, carefulEvents, known.Job.ID)
	require.Equal(t, "available", readJob(t, db, id).state, "a client with FetchOnlyKnownKinds leaves a job of an unknown kind alone")

	plainWorkers := river.NewWorkers()
	river.AddWorker(plainWorkers, noopWorker{})
	plain := startRiver(t, db, nil, &river.Config{Workers: plainWorkers})
	events, cancel := plain.Subscribe(river.EventKindJobFailed)
	defer cancel()
	var failed *rivertype.JobRow
	select {
	case ev := <-events:
		failed = ev.Job
	case <-ctx(t).Done():
		t.Fatal("the plain River client did not fail the job of an unknown kind within 30s")
	}
	require.Equal(t, id, failed.ID)
	require.Equal(t, plain.ID(), failed.AttemptedBy[len(failed.AttemptedBy)-1])
	require.Equal(t, 1, failed.Attempt, "the failure used up an attempt")
	require.Equal(t, (&rivertype.UnknownJobKindError{Kind: failed.Kind}).Error(), failed.Errors[len(failed.Errors)-1].Error)
}

// client is an insert-only River client on db.
func client(t *testing.T, db *testdb.DB) *river.Client[pgx.Tx] {
	t.Helper()
	c, err := river.NewClient[pgx.Tx](engine.NewDriver(db.Pool, nil), &river.Config{Schema: db.Schema})
	require.NoError(t, err)
	return c
}
