package workflow

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
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

// waitStatus waits until run id reaches status, failing after a deadline. It
// polls the run row: there is no notification for intermediate statuses.
func waitStatus(t *testing.T, c *Client, h interface {
	Get(context.Context) (*Run, error)
}, want Status) *Run {
	t.Helper()
	ctx := ctxT(t)
	for {
		run, err := h.Get(ctx)
		require.NoError(t, err)
		if run.Status == want {
			return run
		}
		select {
		case <-ctx.Done():
			t.Fatalf("run %s stayed %s, want %s", run.ID, run.Status, want)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func countRows(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}
