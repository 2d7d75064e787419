package schedule

import (
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/pgcluster"
	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// restoreFlow is the load TestBackupRestores dumps in the middle of: three
// steps around a four-second sleep.
var restoreFlow = workflow.Define("restore_flow", func(ctx workflow.Context, n int) (string, error) {
	a, err := workflow.Step(ctx, "one", func(context.Context) (int, error) { return n, nil })
	if err != nil {
		return "", err
	}
	if err := workflow.Sleep(ctx, "nap", time.Second); err != nil {
		return "", err
	}
	// Held until the test signals it on the restored database: the dump
	// catches every run unfinished, however slow the machine.
	if _, err := workflow.WaitSignal[int](ctx, "go", nil); err != nil {
		return "", err
	}
	b, err := workflow.Step(ctx, "two", func(context.Context) (int, error) { return a * 2, nil })
	if err != nil {
		return "", err
	}
	return workflow.Step(ctx, "three", func(context.Context) (string, error) { return fmt.Sprint(b), nil })
}, nil)

// TestBackupRestores takes a pg_dump of a working database in the middle of
// its load (runs asleep or waiting for a signal; an every-second schedule
// firing), restores it into a new database and starts a client on that:
// every run of the restored database finishes, with its steps' outputs
// (a run caught asleep or mid-step replays from its memos); the schedule
// fires its slots again from the restore on; and no slot of the restored
// database has two runs (SLOT_IS_UNIQUE across the restore point). The
// restored database cannot know what the old one did after the dump: the
// slots between the dump and the restore fire late there, within their
// catch-up window, or are recorded as missed beyond it.
func TestBackupRestores(t *testing.T) {
	t.Parallel()

	bin, err := pgcluster.FindBinDir()
	if err != nil {
		t.Skipf("no Postgres binaries for pg_dump and pg_restore: %v", err)
	}
	db := testdb.New(t)
	ctx := ctxT(t, 3*time.Minute)

	before := startPoolClient(t, db.Pool, db.Schema, 10, restoreFlow)
	track(t, db, before.wf)
	s, err := before.schedules.Create(ctx, &Params{Name: "ticker", Key: "ticker", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.NoError(t, err)
	const runs = 40
	for i := range runs {
		_, err := restoreFlow.Start(ctx, before.wf, i, nil)
		require.NoError(t, err)
	}
	waitRuns(t, db, s.ID, 1, time.Minute)

	// The dump, mid-load: a snapshot of the schema, River's tables and
	// Tributary's together.
	dump := filepath.Join(t.TempDir(), "tributary.dump")
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "pg_dump"), "--dbname="+testdb.ServerURL(t),
		"--schema="+db.Schema, "--format=custom", "--file="+dump).CombinedOutput()
	require.NoError(t, err, "pg_dump: %s", out)
	var unfinished, slotsAtDump int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status NOT IN ('completed', 'skipped')),
		count(*) FILTER (WHERE schedule_id IS NOT NULL) FROM workflow_runs`).Scan(&unfinished, &slotsAtDump))
	t.Logf("at the dump: %d runs unfinished, %d slots recorded", unfinished, slotsAtDump)
	require.Positive(t, unfinished, "the dump caught runs in flight")
	require.NoError(t, before.stop())

	// The restore, into a new database, and a client on it.
	restored := restoreInto(ctx, t, bin, dump, db.Schema)
	after := startPoolClient(t, restored, db.Schema, 10, restoreFlow)
	var dumped int
	require.NoError(t, restored.QueryRow(ctx, "SELECT count(*) FROM workflow_runs WHERE workflow_type = $1", restoreFlow.Name()).Scan(&dumped))
	require.Equal(t, runs, dumped, "the dump holds every run")

	ids, err := restored.Query(ctx, "SELECT id FROM workflow_runs WHERE workflow_type = $1", restoreFlow.Name())
	require.NoError(t, err)
	runIDs, err := pgx.CollectRows(ids, pgx.RowTo[uuid.UUID])
	require.NoError(t, err)
	for _, id := range runIDs {
		require.NoError(t, after.wf.Signal(ctx, id, "go", 1))
	}

	restoredAt := time.Now()
	deadline := time.NewTimer(2 * time.Minute)
	defer deadline.Stop()
	for {
		var done, fired int
		require.NoError(t, restored.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM workflow_runs WHERE workflow_type = $1 AND status = 'completed'),
			(SELECT count(*) FROM workflow_runs WHERE schedule_id = $2 AND status = 'completed' AND fire_at > $3)`,
			restoreFlow.Name(), s.ID, restoredAt).Scan(&done, &fired))
		if done == runs && fired >= 3 {
			break
		}
		select {
		case <-deadline.C:
			t.Fatalf("after the restore: %d of %d runs completed, %d slots fired", done, runs, fired)
		case <-time.After(100 * time.Millisecond):
		}
	}
	require.NoError(t, after.stop())

	// Every run's output is its steps'.
	rows, err := restored.Query(ctx, `SELECT input, output FROM workflow_runs WHERE workflow_type = $1`, restoreFlow.Name())
	require.NoError(t, err)
	for rows.Next() {
		var input, output string
		require.NoError(t, rows.Scan(&input, &output))
		var n int
		_, err := fmt.Sscan(input, &n)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("%q", fmt.Sprint(2*n)), output, "run of %d", n)
	}
	require.NoError(t, rows.Err())
	var slots, distinct, skipped int
	require.NoError(t, restored.QueryRow(ctx, `SELECT count(*), count(DISTINCT fire_at), count(*) FILTER (WHERE status = 'skipped')
		FROM workflow_runs WHERE schedule_id = $1`, s.ID).Scan(&slots, &distinct, &skipped))
	require.Equal(t, slots, distinct, "a slot has two runs")
	t.Logf("restored database: %d slots recorded (%d skipped as missed between the dump and the restore)", slots, skipped)
}

// restoreInto restores dump into a new database on the test server,
// dropped when the test ends, and returns a pool on it whose search path
// is schema.
func restoreInto(ctx context.Context, t *testing.T, bin, dump, schema string) *pgxpool.Pool {
	t.Helper()
	server := testdb.ServerURL(t)
	name := "restore_" + strings.TrimPrefix(schema, "test_")
	admin, err := pgxpool.New(ctx, server)
	require.NoError(t, err)
	defer admin.Close()
	_, err = admin.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := pgxpool.New(ctx, server)
		if err == nil {
			_, err = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			admin.Close()
		}
		if err != nil {
			t.Errorf("drop the restored database %s: %v", name, err)
		}
	})
	u, err := url.Parse(server)
	require.NoError(t, err)
	u.Path = "/" + name
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "pg_restore"), "--dbname="+u.String(), "--exit-on-error", dump).CombinedOutput()
	require.NoError(t, err, "pg_restore: %s", out)
	q := u.Query()
	q.Set("options", "-csearch_path="+schema)
	u.RawQuery = q.Encode()
	pool, err := pgxpool.New(ctx, u.String())
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}
