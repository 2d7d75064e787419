package engine_test

import (
	"context"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/testdb"
)

// firstWords records the first word of each statement a pool's
// connections send, BEGIN and COMMIT included.
type firstWords struct {
	mu    sync.Mutex
	words []string
}

func (f *firstWords) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	f.mu.Lock()
	defer f.mu.Unlock()
	word, _, _ := strings.Cut(strings.TrimSpace(data.SQL), " ")
	f.words = append(f.words, strings.ToLower(word))
	return ctx
}

func (f *firstWords) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (f *firstWords) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	words := f.words
	f.words = nil
	return words
}

// TestDriverExecutor checks that River's statements through the engine's
// executor on the pool do what River's do, each in one statement with no
// transaction around it, and leave no connection acquired.
func TestDriverExecutor(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	words := &firstWords{}
	config := db.Pool.Config()
	config.ConnConfig.Tracer = words
	pool, err := pgxpool.NewWithConfig(ctx(t), config)
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	exec := engine.NewDriver(pool, nil).GetExecutor()
	now := time.Now().UTC()

	queue, err := exec.QueueCreateOrSetUpdatedAt(ctx(t), &riverdriver.QueueCreateOrSetUpdatedAtParams{
		Metadata: []byte("{}"), Name: "reports", Now: &now, UpdatedAt: &now, Schema: db.Schema,
	})
	require.NoError(t, err)
	require.Equal(t, "reports", queue.Name)

	_, err = exec.LeaderAttemptReelect(ctx(t), &riverdriver.LeaderReelectParams{
		ElectedAt: now, LeaderID: "nobody", Now: &now, TTL: 10 * time.Second, Schema: db.Schema,
	})
	require.ErrorIs(t, err, rivertype.ErrNotFound, "no leader to re-elect")

	leader, err := exec.LeaderAttemptElect(ctx(t), &riverdriver.LeaderElectParams{LeaderID: "me", Now: &now, TTL: 10 * time.Second, Schema: db.Schema})
	require.NoError(t, err)
	again, err := exec.LeaderAttemptReelect(ctx(t), &riverdriver.LeaderReelectParams{
		ElectedAt: leader.ElectedAt, LeaderID: "me", Now: &now, TTL: 10 * time.Second, Schema: db.Schema,
	})
	require.NoError(t, err)
	require.Equal(t, "me", again.LeaderID)

	queues, err := exec.QueueList(ctx(t), &riverdriver.QueueListParams{Max: 10, Schema: db.Schema})
	require.NoError(t, err)
	require.Len(t, queues, 1, "rows read to their end")

	for _, word := range words.take() {
		require.NotContains(t, []string{"begin", "commit", "rollback"}, word, "no transaction around River's statements")
	}
	require.Zero(t, pool.Stat().AcquiredConns(), "every connection went back to the pool")

	tx, err := exec.Begin(ctx(t))
	require.NoError(t, err)
	require.NoError(t, tx.Rollback(ctx(t)))
	require.Equal(t, []string{"begin", "rollback"}, words.take(), "a transaction River begins is a real one")
}

// TestPoolKeepsNothing checks that Pool's rows keep nothing of a query
// once read, where pgxpool's own Query keeps each query's rows (pgx's
// baseRows) in a slab of 128 per connection until the slab is used up,
// which the test checks too, so that it shows what Pool is for (if
// pgxpool stops keeping them, Pool is no longer needed). It measures the
// live heap, so it does not run in parallel with other tests.
func TestPoolKeepsNothing(t *testing.T) {
	db := testdb.New(t)
	ctx := ctx(t)
	const queries = 100 // fewer than a slab, so that pgxpool's stays whole

	// retained is the live heap that reading queries rows through query
	// leaves, on a pool of one fresh connection.
	retained := func(query func(*pgxpool.Pool) func(context.Context, string, ...any) (pgx.Rows, error)) int64 {
		config := db.Pool.Config()
		config.MaxConns = 1
		pool, err := pgxpool.NewWithConfig(ctx, config)
		require.NoError(t, err)
		defer pool.Close()
		read := func(i int) {
			rows, err := query(pool)(ctx, "SELECT $1::int", i)
			require.NoError(t, err)
			got, err := pgx.CollectRows(rows, pgx.RowTo[int32])
			require.NoError(t, err)
			require.Equal(t, []int32{int32(i)}, got)
		}
		read(0) // the connection, its caches, and pgxpool's slab
		live := func() int64 {
			var m runtime.MemStats
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&m)
			return int64(m.HeapAlloc)
		}
		before := live()
		for i := range queries {
			read(i)
		}
		after := live()
		require.Zero(t, pool.Stat().AcquiredConns())
		return after - before
	}
	// The least of three tries: what other goroutines of the process
	// (clients of earlier tests winding down) allocate meanwhile only adds.
	kept := int64(math.MaxInt64)
	for range 3 {
		kept = min(kept, retained(func(p *pgxpool.Pool) func(context.Context, string, ...any) (pgx.Rows, error) {
			return engine.Pool{Pool: p}.Query
		}))
	}
	keptByPgxpool := retained(func(p *pgxpool.Pool) func(context.Context, string, ...any) (pgx.Rows, error) { return p.Query })
	t.Logf("live heap after %d queries read: %d bytes through engine.Pool, %d through pgxpool", queries, kept, keptByPgxpool)
	require.Less(t, kept, int64(queries*64), "Pool's rows keep something of each query after they are read")
	require.Greater(t, keptByPgxpool, int64(queries*100), "pgxpool's Query no longer keeps its rows after they are read: engine.Pool may be unneeded")
}
