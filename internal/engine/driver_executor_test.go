package engine_test

import (
	"context"
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

// TestDriverExecutorOwnTransactions checks that the statements a working
// River client repeats on the pool for as long as it runs (its leader's
// re-election, its producers' queue upserts) run in a transaction of their
// own, not through the pool's QueryRow, whose rows keep the pool's
// connection wrappers reachable, and that they still do what River's do.
func TestDriverExecutorOwnTransactions(t *testing.T) {
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
	require.Equal(t, []string{"begin", "--", "commit"}, words.take(), "the queue upsert runs in its own transaction")

	_, err = exec.LeaderAttemptReelect(ctx(t), &riverdriver.LeaderReelectParams{
		ElectedAt: now, LeaderID: "nobody", Now: &now, TTL: 10 * time.Second, Schema: db.Schema,
	})
	require.ErrorIs(t, err, rivertype.ErrNotFound, "no leader to re-elect")
	require.Equal(t, []string{"begin", "--", "rollback"}, words.take(), "a failed re-election rolls its transaction back")

	leader, err := exec.LeaderAttemptElect(ctx(t), &riverdriver.LeaderElectParams{LeaderID: "me", Now: &now, TTL: 10 * time.Second, Schema: db.Schema})
	require.NoError(t, err)
	words.take()
	again, err := exec.LeaderAttemptReelect(ctx(t), &riverdriver.LeaderReelectParams{
		ElectedAt: leader.ElectedAt, LeaderID: "me", Now: &now, TTL: 10 * time.Second, Schema: db.Schema,
	})
	require.NoError(t, err)
	require.Equal(t, "me", again.LeaderID)
	require.Equal(t, []string{"begin", "--", "commit"}, words.take(), "the re-election runs in its own transaction")
}
