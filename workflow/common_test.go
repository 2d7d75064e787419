package workflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/testwait"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// fastRetry retries a failed attempt at once, so tests of retries do not
// wait for River's exponential backoff.
type fastRetry struct{}

func (fastRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now() }

type testEnv struct {
	client *Client
	db     *testdb.DB
	pool   *pgxpool.Pool
}

// newTestEnv migrates a fresh schema and starts a client working defs.
func newTestEnv(t *testing.T, defs ...Registrable) *testEnv {
	t.Helper()
	db := testdb.New(t)
	return &testEnv{client: startClient(t, db, defs...), db: db, pool: db.Pool}
}

// startClient starts a working client on db; it stops when the test ends.
func startClient(t *testing.T, db *testdb.DB, defs ...Registrable) *Client {
	t.Helper()
	c, err := NewClient(db.Pool, testConfig(t, db, defs...))
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { stopClient(t, c) })
	return c
}

func stopClient(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.Stop(ctx))
}

func testConfig(t *testing.T, db *testdb.DB, defs ...Registrable) *Config {
	t.Helper()
	return &Config{
		Logger: testLogger(t),
		River: &river.Config{
			Queues:      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
			RetryPolicy: fastRetry{},
			TestOnly:    true,
		},
		Schema:    db.Schema,
		Workflows: defs,
	}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// ctxT is a context bounded by a deadline generous enough for CI.
func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitStatus waits until the run of h reaches status want, and fails t if
// it does not before ctxT's deadline. See waitRun for the events it waits
// on.
func waitStatus(t *testing.T, c *Client, h interface {
	Get(context.Context) (*Run, error)
}, want Status) *Run {
	t.Helper()
	run, err := h.Get(ctxT(t))
	require.NoError(t, err)
	return waitRun(t, c, run.ID, "status "+string(want), func(run *Run) bool { return run.Status == want })
}

// waitRun waits until run id satisfies cond, which what describes, and fails
// t if it does not before ctxT's deadline. It reads the run, then again
// after each event that may have changed it:
//
//   - a River job event of c (completed, failed, cancelled, snoozed): an
//     attempt that parks in a sleep or a wait, fails or finishes ends its
//     River job, after the run's new status committed. Only the client that
//     works the run sees them: pass that one.
//   - the run-finished notification Result waits on (c.waiter), sent by
//     whichever client finishes, cancels or repairs the run.
func waitRun(t *testing.T, c *Client, id uuid.UUID, what string, cond func(*Run) bool) *Run {
	t.Helper()
	ctx := ctxT(t)

	var changed <-chan struct{} // nil, never ready, for a client that works no jobs
	if c.works {
		var stop func()
		changed, stop = testwait.JobEvents(c.river)
		defer stop()
	}
	finished, unsubscribe, err := c.waiter.Subscribe(ctx, id)
	require.NoError(t, err, "listen for run %s to finish", id)
	defer unsubscribe()

	var run *Run
	missing := testwait.Until(ctx, func(ctx context.Context) error {
		var err error
		if run, err = c.GetRun(ctx, id); err != nil {
			return err
		}
		if !cond(run) {
			return fmt.Errorf("run %s did not reach %s before the deadline; it is %s", id, what, run.Status)
		}
		return nil
	}, changed, finished)
	require.NoError(t, missing)
	return run
}

// waitCond polls cond every 10 ms until it holds, and fails t when cond
// returns an error, when stop closes first (nil: never) or after ctxT's
// deadline. It is this package's only polling wait, for what has no event:
// the state a crash helper process writes, a memo stored behind the
// workflow's back, the engine's in-memory sets (pending completions, the
// waker's timers). Wait for anything else with waitRun or a channel.
func waitCond(t *testing.T, what string, stop <-chan struct{}, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx := ctxT(t)
	switch err := poll(ctx, stop, cond); {
	case errors.Is(err, errPollStopped):
		t.Fatalf("crash helper exited before %s", what)
	case ctx.Err() != nil:
		t.Fatalf("timed out waiting for %s", what)
	case err != nil:
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

var errPollStopped = errors.New("stopped")

// poll calls cond every 10 ms until it holds (nil), returns an error, stop
// closes (errPollStopped) or ctx ends (ctx.Err()). waitCond is its test
// wrapper; pgcrash_test.go calls it for retries that may fail.
func poll(ctx context.Context, stop <-chan struct{}, cond func(ctx context.Context) (bool, error)) error {
	ticker := time.NewTicker(10 * time.Millisecond)
	defer ticker.Stop()
	for {
		ok, err := cond(ctx)
		if err != nil || ok {
			return err
		}
		select {
		case <-stop:
			return errPollStopped
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

func countRows(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}
