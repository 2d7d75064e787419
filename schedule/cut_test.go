package schedule

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// cutKills and cutEvery: how many connections TestConnectionsCut kills, and
// how often.
const (
	cutKills = 50
	cutEvery = 400 * time.Millisecond
)

// TestConnectionsCut kills the connections of two working clients, each a
// process of its own (TestWorkerHelperProcess), under load, as proxies,
// poolers and network blips do: pg_terminate_backend on one of their
// backends, found by the processes' application_name, every 400 ms, 50
// times. Every other kill takes any of their backends at random (pool
// connections, inside a batch transaction or not, the LISTEN connections,
// the registries' sessions, River's); the others take in turn each
// process's registry session (the one that holds its liveness lock),
// River's notifier and Tributary's listener (backendWatch), so that each
// is cut about four times. The application, an insert-only client in the
// test's process that starts the runs and awaits them, is left alone.
// Nothing is lost or doubled: every acknowledged run completes once with
// its steps' output, no slot has two runs; no live client is taken for
// dead (its registry row stays, and no process logs that a client died
// or that its row is gone); and nothing is wedged: after the last kill,
// every component of each process works again (recoveryChecks).
func TestConnectionsCut(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 50 connections over 20 s under load; skipped under -short")
	}
	t.Parallel()
	testdb.ManyConnections(t)

	db := testdb.New(t)
	ctx := ctxT(t, 3*time.Minute)
	workers := startWorkerProcesses(t, db.URL, db.Schema, "tributary-worker-1-"+db.Schema, "tributary-worker-2-"+db.Schema)
	watch := newBackendWatch(db.Pool, workers)
	// A listener shows its LISTEN for 5 s only (backendWatch): note them
	// now, so that the kills find them.
	pollFor(t, "each worker process's notifier and listener to LISTEN", func(ctx context.Context) bool {
		for _, w := range workers {
			if !watch.has(ctx, w, riverNotifier) || !watch.has(ctx, w, wakeListener) {
				return false
			}
		}
		return true
	})
	ids := []string{workers[0].clientID, workers[1].clientID}
	app, s := startFailoverApp(ctx, t, db.URL, db.Schema)
	load := startFailoverLoad(ctx, app)

	targets := []string{registrySession, riverNotifier, wakeListener}
	killed := map[string]int{}
	for i := range cutKills {
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(cutEvery):
		}
		var rows int
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM tributary_workers WHERE client_id = ANY($1)", ids).Scan(&rows))
		require.Equal(t, len(ids), rows, "a live worker process's registry row is gone")
		backends, err := watch.backends(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, backends)
		b := backends[rand.IntN(len(backends))]
		if i%2 == 1 {
			turn := i / 2
			if target, ok := pick(backends, workers[turn%len(workers)], targets[turn/len(workers)%len(targets)]); ok {
				b = target
			}
		}
		_, err = db.Pool.Exec(ctx, "SELECT pg_terminate_backend($1)", b.pid)
		require.NoError(t, err)
		killed[b.worker.name+" "+b.kind]++
	}
	lastKill := time.Now()

	checks := watch.recoveryChecks(lastKill)
	recovered := waitRecovered(t, "every component of each worker process to work again after the kills", lastKill, checks)
	load.finish()

	load.mu.Lock()
	defer load.mu.Unlock()
	require.Len(t, load.acks, len(load.started), "every acknowledged start has its Result")
	for _, a := range load.acks {
		require.NoError(t, a.err, "run %d (%s)", a.n, a.id)
		require.Equal(t, (a.n+1)*2, a.out, "run %d", a.n)
	}
	for id, n := range load.started {
		var status string
		var out []byte
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT status, output FROM workflow_runs WHERE id = $1", id).Scan(&status, &out), "run %d", n)
		require.Equal(t, "completed", status, "run %d", n)
		require.JSONEq(t, fmt.Sprint((n+1)*2), string(out), "run %d", n)
	}
	slots := requireSlotsOnce(t, db.Pool, s.ID)
	requireNoneTakenForDead(t, workers)
	var takenForDead int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE errors::text LIKE '%died while working this job%'`).Scan(&takenForDead))
	require.Zero(t, takenForDead, "a live client was taken for dead")
	t.Logf("%d connections killed (by process and kind: %v); %d runs acknowledged, %d starts refused; %d slots",
		cutKills, killed, len(load.started), load.refused, slots)
	t.Logf("recovered after the last kill: %s", formatRecovery(checks, recovered))
}
