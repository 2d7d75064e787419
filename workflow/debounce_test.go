package workflow

import (
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestDebounce: starts with the same debounce key collapse into one run,
// with the last start's input, that starts once the period has passed with
// no new start; each caller gets that run's handle. After the run was
// fetched, a start opens a new window. Another key has a window of its own.
func TestDebounce(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	var (
		mu   sync.Mutex
		seen []string
	)
	save := Define("debounce_save", func(ctx Context, doc string) (string, error) {
		mu.Lock()
		seen = append(seen, doc)
		mu.Unlock()
		return doc, nil
	}, nil)
	c := startClient(t, db, save)
	ctx := ctxT(t)

	opts := &StartOpts{Debounce: &Debounce{Key: "doc-1", Period: 700 * time.Millisecond}}
	first, err := save.Start(ctx, c, "v1", opts)
	require.NoError(t, err)
	require.False(t, first.Existing)
	other, err := save.Start(ctx, c, "other-v1", &StartOpts{Debounce: &Debounce{Key: "doc-2", Period: 700 * time.Millisecond}})
	require.NoError(t, err)
	for _, v := range []string{"v2", "v3"} {
		h, err := save.Start(ctx, c, v, opts)
		require.NoError(t, err)
		require.True(t, h.Existing, "a start within the window joins its run")
		require.Equal(t, first.ID, h.ID)
	}
	run, err := first.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, "doc-1", run.DebounceKey)
	require.Equal(t, StatusPending, run.Status)

	out, err := first.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, "v3", out, "the run has the last start's input")
	out, err = other.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, "other-v1", out)
	mu.Lock()
	require.ElementsMatch(t, []string{"v3", "other-v1"}, seen, "one run per window")
	mu.Unlock()

	// The window closed when the run was fetched: a new start, a new run.
	again, err := save.Start(ctx, c, "v4", opts)
	require.NoError(t, err)
	require.False(t, again.Existing)
	require.NotEqual(t, first.ID, again.ID)
	out, err = again.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, "v4", out)
	require.Equal(t, 3, countRows(t, db.Pool, "SELECT count(*) FROM workflow_runs WHERE workflow_type = 'debounce_save'"))
}

// TestDebounceMaxDelay: starts that keep coming within the period do not
// delay the run past MaxDelay after the first.
func TestDebounceMaxDelay(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	save := Define("debounce_bounded", func(ctx Context, n int) (int, error) { return n, nil }, nil)
	c := startClient(t, db, save)
	ctx := ctxT(t)

	opts := &StartOpts{Debounce: &Debounce{Key: "k", Period: 1500 * time.Millisecond, MaxDelay: 2 * time.Second}}
	first, err := save.Start(ctx, c, 1, opts)
	require.NoError(t, err)
	run, err := first.Get(ctx)
	require.NoError(t, err)
	time.Sleep(time.Until(run.CreatedAt.Add(time.Second))) // a timed phase: the second start comes 1 s after the first
	h, err := save.Start(ctx, c, 2, opts)
	require.NoError(t, err)
	require.Equal(t, first.ID, h.ID)

	var created, due time.Time
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT r.created_at, j.scheduled_at FROM workflow_runs r JOIN river_job j ON j.id = r.job_id WHERE r.id = $1`,
		first.ID).Scan(&created, &due))
	require.WithinDuration(t, created.Add(2*time.Second), due, 100*time.Millisecond, "bounded by MaxDelay, not 1.5 s after the last start")
	out, err := first.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, out)
}

// TestDebounceRacing: starts racing on several clients collapse into one
// run per window.
func TestDebounceRacing(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	save := Define("debounce_racing", func(ctx Context, n int) (int, error) { return n, nil }, nil)
	clients := []*Client{startClient(t, db, save), startClient(t, db, save)}
	ctx := ctxT(t)

	const starts = 40
	ids := make(chan string, starts)
	var wg sync.WaitGroup
	for i := range starts {
		wg.Go(func() {
			h, err := save.Start(ctx, clients[i%2], i, &StartOpts{Debounce: &Debounce{Key: "race", Period: 2 * time.Second}})
			if err != nil {
				t.Error(err)
				return
			}
			ids <- h.ID.String()
		})
	}
	wg.Wait()
	close(ids)
	distinct := map[string]bool{}
	for id := range ids {
		distinct[id] = true
	}
	require.Len(t, distinct, 1, "every racing start got the same run")
	require.Equal(t, 1, countRows(t, db.Pool, "SELECT count(*) FROM workflow_runs WHERE workflow_type = 'debounce_racing'"))
}

// TestDebounceBadInput: a bad debounce is refused with a ValidationError
// naming the field, and nothing is written.
func TestDebounceBadInput(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	save := Define("debounce_bad", func(ctx Context, n int) (int, error) { return n, nil }, nil)
	c := startClient(t, db, save)
	ctx := ctxT(t)

	for _, tc := range []struct {
		opts  StartOpts
		field string
	}{
		{StartOpts{Debounce: &Debounce{Period: time.Second}}, "StartOpts.Debounce.Key"},
		{StartOpts{Debounce: &Debounce{Key: "a\x00b", Period: time.Second}}, "StartOpts.Debounce.Key"},
		{StartOpts{Debounce: &Debounce{Key: "k"}}, "StartOpts.Debounce.Period"},
		{StartOpts{Debounce: &Debounce{Key: "k", Period: time.Minute, MaxDelay: time.Second}}, "StartOpts.Debounce.MaxDelay"},
		{StartOpts{Debounce: &Debounce{Key: "k", Period: time.Minute, MaxDelay: -time.Second}}, "StartOpts.Debounce.MaxDelay"},
		{StartOpts{IdempotencyKey: "i", Debounce: &Debounce{Key: "k", Period: time.Minute}}, "StartOpts.Debounce"},
		{StartOpts{ScheduledAt: time.Now().Add(time.Hour), Debounce: &Debounce{Key: "k", Period: time.Minute}}, "StartOpts.Debounce"},
	} {
		err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			_, err := save.StartTx(ctx, c, tx, 1, &tc.opts)
			return err
		})
		var verr *ValidationError
		require.ErrorAs(t, err, &verr)
		require.Equal(t, tc.field, verr.Field, err.Error())
	}
	require.Zero(t, countRows(t, db.Pool, "SELECT count(*) FROM workflow_runs"))
	require.Zero(t, countRows(t, db.Pool, "SELECT count(*) FROM river_job WHERE kind = 'workflow:debounce_bad'"))
}
