package schedule

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// Environment of the firing helper process (TestFiringHelperProcess).
const (
	firingHelperEnv = "TRIBUTARY_FIRING_HELPER" // "1" in the helper process only
	firingDBURLEnv  = "TRIBUTARY_FIRING_DB_URL"
	firingSchemaEnv = "TRIBUTARY_FIRING_SCHEMA"
)

// TestFiringHelperProcess is the working client that TestCrashInTheMiddleOfABatch
// SIGKILLs: the test binary re-executed. Run any other way, it returns at
// once: it is only the helper's entry point.
func TestFiringHelperProcess(t *testing.T) {
	t.Parallel()
	if os.Getenv(firingHelperEnv) != "1" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() { // an orphan exits when the parent closes our stdin
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(3)
	}()
	config, err := pgxpool.ParseConfig(os.Getenv(firingDBURLEnv))
	require.NoError(t, err)
	pool, err := pgxpool.NewWithConfig(ctx, config)
	require.NoError(t, err)
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	wf, err := workflow.NewClient(pool, &workflow.Config{
		Logger:    logger,
		River:     &river.Config{Logger: logger, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}}},
		Schema:    os.Getenv(firingSchemaEnv),
		Workflows: []workflow.Registrable{tick},
	})
	require.NoError(t, err)
	_, err = New(wf, &Config{Logger: logger})
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctx))
	fmt.Println("firing helper: started")
	<-ctx.Done()
	t.Fatal("firing helper: nobody killed me")
}

// TestCrashInTheMiddleOfABatch kills a working client (SIGKILL, a process of
// its own) while it fires the second batch of 300 slots due together: the
// batch's insert of runs is held by a test trigger until the kill. The
// first batch committed and stays; the second rolled back with the
// process. Another client, started afterwards, fires what is left when its
// reconciler finds the chains broken: every slot has exactly one run, none
// is skipped (the slots count as found due at the reconciler's previous
// pass), and every chain moves on.
func TestCrashInTheMiddleOfABatch(t *testing.T) {
	t.Parallel()

	const n = 300
	db := testdb.New(t)
	ctx := ctxT(t, 2*time.Minute)

	at, created := createBurst(t, db, n)
	// Slots that were not prepared (prepare.go): their runs are inserted by
	// the batch that fires them, which the trigger below holds.
	for _, s := range created {
		dropPrepared(t, db, s.ID)
	}

	// The first batch is fireFirstBatchSize slots in (next_fire_at, id)
	// order; the trigger holds the insert of the runs of the second.
	var held uuid.UUID
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT id FROM schedules ORDER BY next_fire_at, id OFFSET $1 LIMIT 1", fireFirstBatchSize+50).Scan(&held))
	holdInTrigger(t, db, "INSERT ON workflow_runs", fmt.Sprintf("NEW.schedule_id = '%s'", held))

	helper := startFiringHelper(t, db)
	waitForOutput(t, helper, "firing helper: started")
	require.True(t, time.Now().Before(at), "the helper started after the slot; raise the lead")
	killInTrigger(t, db, helper, "workflow_runs")

	var runs int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM workflow_runs r WHERE "+notPreparedRun).Scan(&runs))
	require.Equal(t, fireFirstBatchSize, runs, "the first batch committed, the second rolled back")

	// Another client's reconciler finds the chains broken (the instant's
	// fire job is left running by the dead process) and fires the rest. Its
	// interval is a second here; the default minute bounds the delay.
	startClient(t, db, &Config{ReconcileInterval: time.Second})
	waitCount(t, db, time.Minute, n, "SELECT count(*) FROM workflow_runs WHERE fire_at = $1", at)
	var total, distinct, skipped, moved int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT schedule_id), count(*) FILTER (WHERE status = 'skipped')
		FROM workflow_runs r WHERE `+notPreparedRun).Scan(&total, &distinct, &skipped))
	require.Equal(t, n, total, "a slot fired twice")
	require.Equal(t, n, distinct)
	require.Zero(t, skipped)
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM schedules WHERE next_fire_at = $1", at.Add(24*time.Hour)).Scan(&moved))
	require.Equal(t, n, moved, "every chain moves to the next day")
	t.Logf("helper output:\n%s", helper.out.String())
}

// createBurst creates n schedules whose slot is the same second, 4 s
// ahead, with an insert-only client, and returns that slot and the
// schedules.
func createBurst(t *testing.T, db *testdb.DB, n int) (time.Time, []*Schedule) {
	t.Helper()
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{Schema: db.Schema})
	require.NoError(t, err)
	sc, err := New(wf, nil)
	require.NoError(t, err)
	at, cron := dueTogether(4 * time.Second)
	created, err := sc.CreateMany(ctxT(t, time.Minute), burstParams(n, cron))
	require.NoError(t, err)
	return at, created
}

// holdInTrigger creates the test trigger hold_run, BEFORE event (as
// "INSERT ON workflow_runs"), which sleeps a minute in each row that meets
// when: killInTrigger then kills the process whose statement sleeps there.
func holdInTrigger(t *testing.T, db *testdb.DB, event, when string) {
	t.Helper()
	_, err := db.Pool.Exec(ctxT(t, 10*time.Second), fmt.Sprintf(`
CREATE FUNCTION hold_run() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_sleep(60); RETURN NEW; END $$;
CREATE TRIGGER hold_run BEFORE %s FOR EACH ROW WHEN (%s) EXECUTE FUNCTION hold_run();`, event, when))
	require.NoError(t, err)
}

// killInTrigger SIGKILLs the firing helper once its transaction sleeps in
// the test trigger hold_run on table (holdInTrigger), ends the dead client's statement (Postgres
// notices a dead client only when its statement ends), drops the trigger,
// and waits until the helper's transaction is gone, rolled back.
func killInTrigger(t *testing.T, db *testdb.DB, helper *firingHelper, table string) {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	var backend int
	pollFor(t, "the helper's statement to sleep in the trigger on "+table, func(ctx context.Context) bool {
		// The statement names the test's schema: other test processes on
		// the server may hold a trigger of their own.
		err := db.Pool.QueryRow(ctx, "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%' || $1 || '%' || $2 || '%'", db.Schema, table).Scan(&backend)
		return err == nil
	})
	require.NoError(t, helper.cmd.Process.Kill())
	<-helper.exited
	_, err := db.Pool.Exec(ctx, "SELECT pg_terminate_backend($1)", backend)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, "DROP TRIGGER hold_run ON "+table)
	require.NoError(t, err)
	pollFor(t, "the terminated backend's transaction to be gone", func(ctx context.Context) bool {
		var active int
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", backend).Scan(&active))
		return active == 0
	})
}

// TestCrashInTheMiddleOfAPromotion is TestCrashInTheMiddleOfABatch for
// prepared slots (prepare.go): a working client (SIGKILL, a process of its
// own) is killed while it promotes the prepared jobs of the second batch of
// 300 slots due together, its update of one of them held by a test trigger.
// The first batch's promotion committed with its schedules' advance; the
// second rolled back with the process, its runs and jobs still prepared.
// Another client's reconciler fires the rest: every slot starts exactly
// once, as the run prepared for it (no run is inserted at the slot, none
// is skipped), and every chain moves on.
func TestCrashInTheMiddleOfAPromotion(t *testing.T) {
	t.Parallel()

	const n = 300
	db := testdb.New(t)
	ctx := ctxT(t, 2*time.Minute)

	at, _ := createBurst(t, db, n)
	prepared := runIDsAt(t, db, at, "j.state = 'pending'")
	require.Len(t, prepared, n, "every slot due within the hour is prepared on create")

	// The first batch is fireFirstBatchSize slots in (next_fire_at, id)
	// order; the trigger holds the promotion of the second.
	var heldJob int64
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT r.job_id FROM workflow_runs r WHERE r.fire_at = $1
		AND r.schedule_id = (SELECT id FROM schedules ORDER BY next_fire_at, id OFFSET $2 LIMIT 1)`,
		at, fireFirstBatchSize+50).Scan(&heldJob))
	holdInTrigger(t, db, "UPDATE ON river_job", fmt.Sprintf("OLD.id = %d AND OLD.state = 'pending'", heldJob))

	helper := startFiringHelper(t, db)
	waitForOutput(t, helper, "firing helper: started")
	require.True(t, time.Now().Before(at), "the helper started after the slot; raise the lead")
	killInTrigger(t, db, helper, "river_job")

	require.Len(t, runIDsAt(t, db, at, "j.state <> 'pending'"), fireFirstBatchSize, "the first batch's promotion committed, the second rolled back")
	var advanced int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM schedules WHERE next_fire_at > $1", at).Scan(&advanced))
	require.Equal(t, fireFirstBatchSize, advanced, "only the first batch's schedules moved on")

	startClient(t, db, &Config{ReconcileInterval: time.Second})
	waitCount(t, db, time.Minute, n, `SELECT count(*) FROM workflow_runs r JOIN river_job j ON j.id = r.job_id
		WHERE r.fire_at = $1 AND j.state <> 'pending'`, at)
	require.Equal(t, prepared, runIDsAt(t, db, at, "true"), "each slot's run is the one prepared for it, once")
	var skipped, moved int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM workflow_runs WHERE status = 'skipped'").Scan(&skipped))
	require.Zero(t, skipped)
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM schedules WHERE next_fire_at = $1", at.Add(24*time.Hour)).Scan(&moved))
	require.Equal(t, n, moved, "every chain moves to the next day")
}

// runIDsAt returns the ids of the runs of the slot at whose job meets
// jobCond (on j, the run's River job).
func runIDsAt(t *testing.T, db *testdb.DB, at time.Time, jobCond string) map[uuid.UUID]bool {
	t.Helper()
	rows, err := db.Pool.Query(ctxT(t, 10*time.Second), `SELECT r.id FROM workflow_runs r JOIN river_job j ON j.id = r.job_id
		WHERE r.fire_at = $1 AND `+jobCond, at)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	require.NoError(t, err)
	set := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set
}

type firingHelper struct {
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan struct{}
}

func startFiringHelper(t *testing.T, db *testdb.DB) *firingHelper {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFiringHelperProcess$", "-test.count=1", "-test.timeout=3m")
	cmd.Env = append(os.Environ(), firingHelperEnv+"=1", firingDBURLEnv+"="+db.URL, firingSchemaEnv+"="+db.Schema)
	h := &firingHelper{cmd: cmd, out: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = h.out, h.out
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		_ = cmd.Wait()
		close(h.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-h.exited
		_ = stdin.Close()
		cancel()
		if t.Failed() {
			t.Logf("firing helper output:\n%s", h.out.String())
		}
	})
	return h
}

// waitForOutput waits until the helper printed want, failing if it exits
// first or does not print it within 30 s. It checks after each write of the
// helper's output.
func waitForOutput(t *testing.T, h *firingHelper, want string) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for !bytes.Contains(h.out.Bytes(), []byte(want)) {
		select {
		case <-h.out.Written():
		case <-h.exited:
			if !bytes.Contains(h.out.Bytes(), []byte(want)) { // its last words were copied before it was reaped
				t.Fatalf("the firing helper exited before printing %q", want)
			}
		case <-deadline.C:
			t.Fatalf("the firing helper did not print %q within 30s", want)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for a process's output and a reader,
// which Written tells of each write.
type lockedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{}
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written == nil {
		b.written = make(chan struct{}, 1)
	}
	select {
	case b.written <- struct{}{}:
	default: // a read is due already
	}
	return b.buf.Write(p)
}

// Written receives after each write since the last receive.
func (b *lockedBuffer) Written() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written == nil {
		b.written = make(chan struct{}, 1)
	}
	return b.written
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

func (b *lockedBuffer) String() string { return string(b.Bytes()) }
