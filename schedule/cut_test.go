package schedule

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// cutKills and cutEvery: how many connections TestConnectionsCut kills, and
// how often.
const (
	cutKills = 50
	cutEvery = 400 * time.Millisecond
)

// TestConnectionsCut kills the connections of two working clients at
// random under load, as proxies, poolers and network blips do:
// pg_terminate_backend on one of their backends every 400 ms, 50 times
// (pool connections, inside a batch transaction or not, the LISTEN
// connections, the registries' advisory-lock sessions, River's). Nothing
// is lost or doubled: every acknowledged run completes once with its
// steps' output, no slot has two runs; no live client is taken for dead;
// and no client is wedged: after the last kill, a run started on each
// completes.
func TestConnectionsCut(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 50 connections over 20 s under load; skipped under -short")
	}
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, 3*time.Minute)
	app := "tributary_cut_" + db.Schema
	u, err := url.Parse(db.URL)
	require.NoError(t, err)
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	var clients []*workflow.Client
	var schedules *Client
	for range 2 {
		wf, sc := startFailoverClient(t, u.String())
		clients, schedules = append(clients, wf), sc
	}
	s, err := schedules.Create(ctx, &Params{Name: "every second", Key: "ticker", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.NoError(t, err)
	load := startFailoverLoad(ctx, clients)

	killed := map[string]int{}
	for range cutKills {
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(cutEvery):
		}
		rows, err := db.Pool.Query(ctx, `SELECT pid, coalesce(nullif(regexp_replace(left(query, 48), '\s+', ' ', 'g'), ''), state)
			FROM pg_stat_activity WHERE application_name = $1`, app)
		require.NoError(t, err)
		type backend struct {
			pid  int
			what string
		}
		var backends []backend
		for rows.Next() {
			var b backend
			require.NoError(t, rows.Scan(&b.pid, &b.what))
			backends = append(backends, b)
		}
		require.NoError(t, rows.Err())
		require.NotEmpty(t, backends)
		b := backends[rand.IntN(len(backends))]
		_, err = db.Pool.Exec(ctx, "SELECT pg_terminate_backend($1)", b.pid)
		require.NoError(t, err)
		killed[b.what]++
	}
	lastKill := time.Now()

	// No client is wedged: a run on each completes.
	for i, c := range clients {
		h, err := failoverFlow.Start(ctx, c, 1000+i, nil)
		require.NoError(t, err, "client %d", i)
		out, err := h.Result(ctx)
		require.NoError(t, err, "client %d", i)
		require.Equal(t, (1000+i+1)*2, out)
	}
	recovered := time.Since(lastKill)
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
	var takenForDead int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE errors::text LIKE '%died while working this job%'`).Scan(&takenForDead))
	require.Zero(t, takenForDead, "a live client was taken for dead")
	t.Logf("%d connections killed (by what they ran: %v); %d runs acknowledged, %d starts refused; %d slots; a run on each client completed %s after the last kill",
		cutKills, killed, len(load.started), load.refused, slots, recovered.Round(10*time.Millisecond))
}
