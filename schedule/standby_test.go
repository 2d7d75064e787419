package schedule

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/pgcluster"
	"github.com/tributary-go/tributary/migrations"
	"github.com/tributary-go/tributary/workflow"
)

// failoverFlow is the load of TestFailoverToAStandby: three steps around a
// short sleep.
var failoverFlow = workflow.Define("failover_flow", func(ctx workflow.Context, n int) (int, error) {
	a, err := workflow.Step(ctx, "one", func(context.Context) (int, error) { return n, nil })
	if err != nil {
		return 0, err
	}
	if err := workflow.Sleep(ctx, "nap", 200*time.Millisecond); err != nil {
		return 0, err
	}
	b, err := workflow.Step(ctx, "two", func(context.Context) (int, error) { return a + 1, nil })
	if err != nil {
		return 0, err
	}
	return workflow.Step(ctx, "three", func(context.Context) (int, error) { return b * 2, nil })
}, nil)

// TestFailoverToAStandby fails a primary over to its streaming standby, as
// managed Postgres and Patroni do, under load: two working clients, each
// on a pool of its own whose connection string names both hosts with
// target_session_attrs=read-write, run a stream of three-step workflows
// and an every-second schedule; the primary is stopped hard (pg_ctl stop
// -m immediate) and the standby promoted. Replication is synchronous
// (synchronous_standby_names), so a commit the primary acknowledged is on
// the standby. Every client reconnects by itself; every run whose start
// was acknowledged completes on the new primary, once, with its steps'
// output, those whose Result had returned before the crash with that same
// output; the schedule fires again soon after the promotion; no slot has
// two runs.
func TestFailoverToAStandby(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a primary and a standby cluster and fails over under load; skipped under -short")
	}
	t.Parallel()

	ctx := ctxT(t, 3*time.Minute)
	primary, err := pgcluster.Start(ctx, nil)
	if errors.Is(err, pgcluster.ErrNoPostgres) {
		t.Skipf("no Postgres binaries to start a primary and a standby: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = primary.Stop(context.Background()) })
	setup, err := pgxpool.New(ctx, primary.URL)
	require.NoError(t, err)
	migrator, err := migrations.New(setup, nil)
	require.NoError(t, err)
	_, err = migrator.Up(ctx)
	require.NoError(t, err)
	standby, err := primary.StartStandby(ctx, "standby")
	require.NoError(t, err)
	t.Cleanup(func() { _ = standby.Stop(context.Background()) })
	_, err = setup.Exec(ctx, "ALTER SYSTEM SET synchronous_standby_names = 'standby'")
	require.NoError(t, err)
	_, err = setup.Exec(ctx, "SELECT pg_reload_conf()")
	require.NoError(t, err)
	pollFor(t, "the standby to stream synchronously", func(ctx context.Context) bool {
		var state string
		return setup.QueryRow(ctx, "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'").Scan(&state) == nil && state == "sync"
	})
	setup.Close()

	both := fmt.Sprintf("postgres://postgres@127.0.0.1:%s,127.0.0.1:%s/postgres?sslmode=disable&target_session_attrs=read-write",
		primary.Port(), standby.Port())
	var clients []*workflow.Client
	var schedules *Client
	for range 2 {
		wf, sc := startFailoverClient(t, both)
		clients, schedules = append(clients, wf), sc
	}
	s, err := schedules.Create(ctx, &Params{Name: "every second", Key: "ticker", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.NoError(t, err)

	// The load: a run started every 20 ms, each one's Result awaited.
	type ack struct {
		id     uuid.UUID
		n      int
		out    int
		at     time.Time
		failed error
	}
	var (
		mu      sync.Mutex
		started = map[uuid.UUID]int{}
		acks    []ack
		refused int
		wg      sync.WaitGroup
	)
	stopLoad := make(chan struct{})
	wg.Go(func() {
		for n := 0; ; n++ {
			select {
			case <-stopLoad:
				return
			case <-time.After(20 * time.Millisecond):
			}
			c := clients[n%2]
			h, err := failoverFlow.Start(ctx, c, n, nil)
			if err != nil {
				mu.Lock()
				refused++ // during the failover: never acknowledged
				mu.Unlock()
				continue
			}
			mu.Lock()
			started[h.ID] = n
			mu.Unlock()
			wg.Go(func() {
				out, err := h.Result(ctx)
				mu.Lock()
				acks = append(acks, ack{id: h.ID, n: n, out: out, at: time.Now(), failed: err})
				mu.Unlock()
			})
		}
	})

	time.Sleep(4 * time.Second) // load before the crash: the one timed phase of the test
	crashedAt := time.Now()
	require.NoError(t, primary.Crash(ctx))
	require.NoError(t, standby.Promote(ctx))
	promotedAt := time.Now()
	t.Logf("primary crashed, standby promoted in %s", promotedAt.Sub(crashedAt).Round(time.Millisecond))

	after, err := pgxpool.New(ctx, standby.URL)
	require.NoError(t, err)
	t.Cleanup(after.Close)
	var resumed time.Duration
	pollFor(t, "a slot after the promotion to run", func(ctx context.Context) bool {
		var ok bool
		err := after.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM workflow_runs WHERE schedule_id = $1 AND status = 'completed' AND fire_at > $2)`,
			s.ID, promotedAt).Scan(&ok)
		if ok {
			resumed = time.Since(promotedAt)
		}
		return err == nil && ok
	})
	time.Sleep(3 * time.Second) // more load on the new primary
	close(stopLoad)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	ackedBeforeCrash := 0
	for _, a := range acks {
		require.NoError(t, a.failed, "run %d (%s)", a.n, a.id)
		require.Equal(t, (a.n+1)*2, a.out, "run %d", a.n)
		if a.at.Before(crashedAt) {
			ackedBeforeCrash++
		}
	}
	require.Len(t, acks, len(started), "every acknowledged start has its Result")
	// On the new primary: each acknowledged run once, completed, with
	// its output.
	for id, n := range started {
		var status string
		var out []byte
		require.NoError(t, after.QueryRow(ctx, "SELECT status, output FROM workflow_runs WHERE id = $1", id).Scan(&status, &out), "run %d", n)
		require.Equal(t, "completed", status, "run %d", n)
		require.JSONEq(t, fmt.Sprint((n+1)*2), string(out), "run %d", n)
	}
	var slots, distinct int
	require.NoError(t, after.QueryRow(ctx, "SELECT count(*), count(DISTINCT fire_at) FROM workflow_runs WHERE schedule_id = $1", s.ID).Scan(&slots, &distinct))
	require.Equal(t, slots, distinct, "a slot has two runs")
	t.Logf("%d runs acknowledged (%d of them before the crash), %d starts refused during the failover; the schedule fired again %s after the promotion; %d slots",
		len(started), ackedBeforeCrash, refused, resumed.Round(10*time.Millisecond), slots)
	require.Less(t, resumed, 10*time.Second, "slots resume within 10 s of the promotion")
	for _, c := range clients {
		require.NoError(t, c.Stop(ctx))
	}
}

// startFailoverClient starts a working client, with its schedule client,
// on a pool of its own connected with url; it stops when the test ends.
func startFailoverClient(t *testing.T, url string) (*workflow.Client, *Client) {
	t.Helper()
	ctx := ctxT(t, time.Minute)
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	wf, err := workflow.NewClient(pool, &workflow.Config{
		Logger: discard,
		River: &river.Config{
			Logger:   discard,
			Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}},
			TestOnly: true,
		},
		Workflows: []workflow.Registrable{tick, failoverFlow},
	})
	require.NoError(t, err)
	sc, err := New(wf, nil)
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = wf.Stop(ctx)
	})
	return wf, sc
}
