package engine_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

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
