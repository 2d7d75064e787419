package schedule

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/testwait"
	"github.com/tributary-go/tributary/workflow"
)

// The tests wait on events, not by polling:
//
//   - waitDB (waitRuns, waitCount) for what the working clients of a test
//     database write: every slot fired, run finished or skip recorded is
//     followed by a River job event on the client that did it;
//   - waitUntil for an instant of the wall clock the test needs behind it;
//   - waitForOutput for what a helper process prints.
//
// pollFor is for the rest, which has no event: see there.

// working holds the started working clients of each test database, whose
// River job events waitDB waits on. startClient adds its clients; a test
// that starts one of its own adds it with track.
var working = struct {
	sync.Mutex
	byDB map[*testdb.DB][]*workflow.Client
}{byDB: map[*testdb.DB][]*workflow.Client{}}

// track adds wf, a started working client on db, to the clients waitDB
// listens to, until the test ends.
func track(t *testing.T, db *testdb.DB, wf *workflow.Client) {
	t.Helper()
	working.Lock()
	working.byDB[db] = append(working.byDB[db], wf)
	working.Unlock()
	t.Cleanup(func() {
		working.Lock()
		defer working.Unlock()
		working.byDB[db] = slices.DeleteFunc(working.byDB[db], func(c *workflow.Client) bool { return c == wf })
		if len(working.byDB[db]) == 0 {
			delete(working.byDB, db)
		}
	})
}

// waitDB waits until cond returns nil, and fails t with cond's last error
// (what is missing) if it does not within within. It checks cond, then again after each River job event (completed,
// failed, cancelled, snoozed) of db's working clients: slots are fired by
// their fire and reconcile jobs, runs finish with their jobs, and each such
// event comes after its transaction committed. It does not see what another
// process writes (the firing helper): use poll for that.
func waitDB(t *testing.T, db *testdb.DB, within time.Duration, cond func(ctx context.Context) error) {
	t.Helper()
	ctx := ctxT(t, within)

	working.Lock()
	clients := append([]*workflow.Client(nil), working.byDB[db]...)
	working.Unlock()
	require.NotEmpty(t, clients, "waitDB: no working client on the test database would send an event")

	rivers := make([]*river.Client[pgx.Tx], len(clients))
	for i, wf := range clients {
		rivers[i] = wf.River()
	}
	changed, stop := testwait.JobEvents(rivers...)
	defer stop()
	if missing := testwait.Until(ctx, cond, changed); missing != nil {
		t.Fatalf("not within %s: %v", within, missing)
	}
}

// waitRuns waits until schedule id has at least n runs (any status).
// notPreparedRun leaves out a run r of a prepared slot (prepare.go),
// which is not a run until its slot is decided.
const notPreparedRun = `(r.status <> 'pending' OR NOT EXISTS (SELECT FROM river_job j WHERE j.id = r.job_id AND j.state = 'pending'))`

// dropPrepared deletes schedule id's prepared slot (engine.DropPreparedTx).
func dropPrepared(t *testing.T, db *testdb.DB, id uuid.UUID) {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	require.NoError(t, pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
		_, err := engine.NewQueries(db.Schema).DropPreparedTx(ctx, tx, [][16]byte{id})
		return err
	}))
}

func waitRuns(t *testing.T, db *testdb.DB, id uuid.UUID, n int, within time.Duration) {
	t.Helper()
	waitDB(t, db, within, func(ctx context.Context) error {
		var got int
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM workflow_runs r WHERE schedule_id = $1 AND "+notPreparedRun, id).Scan(&got))
		if got < n {
			return fmt.Errorf("schedule %s has %d runs, want %d", id, got, n)
		}
		return nil
	})
}

// waitCount waits until query (one count) returns at least n.
func waitCount(t *testing.T, db *testdb.DB, within time.Duration, n int, query string, args ...any) {
	t.Helper()
	waitDB(t, db, within, func(ctx context.Context) error {
		var got int
		require.NoError(t, db.Pool.QueryRow(ctx, query, args...).Scan(&got))
		if got < n {
			return fmt.Errorf("%d, want %d: %s", got, n, query)
		}
		return nil
	})
}

// waitUntil waits until the wall clock reads at, for a test that needs a
// slot's time (or a pause) behind it while the code under test reads the
// real clock.
func waitUntil(t *testing.T, at time.Time) {
	t.Helper()
	timer := time.NewTimer(time.Until(at))
	defer timer.Stop()
	<-timer.C
}

// pollFor waits until cond holds, and fails t with what if it does not
// within 30 s. It polls, every 50 ms: it is this package's only polling
// wait, for state no event of this process announces, written or held by
// something other than its working clients: the firing helper process's
// rows (its leadership, fire jobs and runs) and the server's own
// (pg_stat_activity; the leadership River's election hands a survivor,
// which River reports to no subscriber).
func pollFor(t *testing.T, what string, cond func(ctx context.Context) bool) {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	ticker := time.NewTicker(50 * time.Millisecond)
	defer ticker.Stop()
	for !cond(ctx) {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within 30s", what)
		case <-ticker.C:
		}
	}
}
