package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/testlog"
)

// reserveFixture is one producer of queue default on db, fetching
// through the engine's pilot, whose fetches can be made to count as
// frequent.
type reserveFixture struct {
	t     *testing.T
	ctx   context.Context
	db    *testdb.DB
	d     *Driver
	id    int64
	state *fairState
}

func newReserveFixture(t *testing.T) *reserveFixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	db := testdb.New(t)
	d := NewDriver(db.Pool, nil)
	id, state, err := d.pilot.ProducerInit(ctx, d.GetExecutor(), &riverpilot.ProducerInitParams{
		ClientID: "c", Queue: "default", Schema: db.Schema,
	})
	require.NoError(t, err)
	return &reserveFixture{t: t, ctx: ctx, db: db, d: d, id: id, state: state.(*fairState)}
}

// insert inserts a ready job of tenant, its args {"tenant": tenant, "n": n},
// ready since n seconds after a fixed time, with attempts as given.
func (f *reserveFixture) insert(tenant string, n, attempt int, attemptedAt *time.Time, attemptedBy []string) {
	f.t.Helper()
	_, err := f.db.Pool.Exec(f.ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, priority,
			attempt, attempted_at, attempted_by)
		VALUES (jsonb_build_object('tenant', $1::text, 'n', $2::int), 'workflow:a', 5, 'default', 'available',
			'2026-01-01'::timestamptz + $2 * interval '1 second', 1, $3, $4, $5)`, tenant, n, attempt, attemptedAt, attemptedBy)
	require.NoError(f.t, err)
}

// fetch fetches up to n jobs, the producer's previous fetch having begun
// just now when frequent, and returns each job's tenant, in order.
func (f *reserveFixture) fetch(n int, frequent bool) []string {
	f.t.Helper()
	f.state.mu.Lock()
	if frequent {
		f.state.lastFetch = time.Now()
	} else {
		f.state.lastFetch = time.Time{}
	}
	f.state.mu.Unlock()
	res, err := f.d.pilot.JobGetAvailable(f.ctx, f.d.GetExecutor(), f.state, &riverdriver.JobGetAvailableParams{
		ClientID: "c", Kind: []string{"workflow:a"}, MaxAttemptedBy: 100, MaxToLock: n, Queue: "default", Schema: f.db.Schema,
	})
	require.NoError(f.t, err)
	require.NoError(f.t, f.state.awaitRefill(f.ctx), "the refill the fetch set off, if any")
	var tenants []string
	for _, j := range res.Jobs {
		require.Equal(f.t, "running", string(j.State))
		var args struct{ Tenant string }
		require.NoError(f.t, json.Unmarshal(j.EncodedArgs, &args))
		tenants = append(tenants, args.Tenant)
	}
	return tenants
}

// running returns the tenants of the jobs running as client c's, sorted.
func (f *reserveFixture) running() []string {
	f.t.Helper()
	var tenants []string
	err := f.db.Pool.QueryRow(f.ctx, `SELECT coalesce(array_agg(args->>'tenant' ORDER BY args->>'tenant'), '{}') FROM river_job
		WHERE state = 'running' AND attempted_by[cardinality(attempted_by)] = 'c'`).Scan(&tenants)
	require.NoError(f.t, err)
	return tenants
}

// TestFairReserveHandsOutTheNextTurns: after a fair fetch of a producer
// that fetches often, a refill starts the next turns' jobs, as many as the
// producer asked for, and keeps them (running, this client's); the next
// fetches hand them out with no statement (a tenant ready meanwhile waits
// for the fetch after), the reserve is topped up only once down to half,
// and a fetch asking for more than the reserve holds gets the reserve and
// the rest from the database. A producer that does not fetch often keeps
// no reserve.
func TestFairReserveHandsOutTheNextTurns(t *testing.T) {
	t.Parallel()

	f := newReserveFixture(t)
	for i := range 12 {
		f.insert(fmt.Sprintf("t%02d", i), i, 0, nil, nil)
	}

	require.Equal(t, []string{"t00", "t01", "t02"}, f.fetch(3, false), "the first fetch is not frequent")
	require.Equal(t, []string{"t00", "t01", "t02"}, f.running(), "and keeps no reserve")
	require.Empty(t, f.d.ReservedJobs())

	require.Equal(t, []string{"t03", "t04", "t05"}, f.fetch(3, true))
	require.Equal(t, []string{"t00", "t01", "t02", "t03", "t04", "t05", "t06", "t07", "t08"}, f.running(),
		"the refill after the frequent fetch started the next turns' three")
	require.Len(t, f.d.ReservedJobs(), 3)

	require.Equal(t, []string{"t06"}, f.fetch(1, true), "the reserve, oldest first, with no statement")
	require.Len(t, f.d.ReservedJobs(), 2, "more than half the most asked for is left: no refill")
	require.Len(t, f.running(), 9)

	f.insert("a", 0, 0, nil, nil) // first in the rotation's order, and the oldest
	require.Equal(t, []string{"t07", "t08", "t09"}, f.fetch(3, false), "the reserve, then the rest in turns after it")
	require.Empty(t, f.d.ReservedJobs(), "a fetch that is not frequent keeps nothing back")
	require.ElementsMatch(t, []string{"t10", "t11", "a"}, f.fetch(3, false), "the turns go on, then wrap")
}

// TestFairReservePutBack: a producer's reserve is put back when the
// producer stops, and when it is not handed out within reserveMaxAge: its
// jobs are available again exactly as before the fetch (attempt,
// attempted_at, attempted_by; NULL for a job never attempted), a job
// rescued meanwhile (no longer this client's) is left as it is, and the
// queue is notified.
func TestFairReservePutBack(t *testing.T) {
	t.Parallel()

	f := newReserveFixture(t)
	before := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 4 {
		f.insert(fmt.Sprintf("t%02d", i), i, 0, nil, nil)
	}
	f.insert("t04", 4, 2, &before, []string{"x", "y"})
	f.insert("t05", 5, 1, &before, []string{"x"})

	type row struct {
		State       string
		Attempt     int
		AttemptedAt *time.Time
		AttemptedBy []string
	}
	read := func(tenant string) row {
		t.Helper()
		var r row
		err := f.db.Pool.QueryRow(f.ctx, `SELECT state::text, attempt, attempted_at, attempted_by FROM river_job WHERE args->>'tenant' = $1`,
			tenant).Scan(&r.State, &r.Attempt, &r.AttemptedAt, &r.AttemptedBy)
		require.NoError(t, err)
		if r.AttemptedAt != nil {
			at := r.AttemptedAt.UTC()
			r.AttemptedAt = &at
		}
		return r
	}

	require.Equal(t, []string{"t00", "t01", "t02"}, f.fetch(3, true))
	require.Equal(t, row{"running", 3, read("t04").AttemptedAt, []string{"x", "y", "c"}}, read("t04"))
	// The reserve's t05 is rescued meanwhile and fetched by client d.
	_, err := f.db.Pool.Exec(f.ctx, `UPDATE river_job SET attempted_by = attempted_by || '{d}'::text[] WHERE args->>'tenant' = 't05'`)
	require.NoError(t, err)

	conn, err := pgx.Connect(f.ctx, f.db.URL)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(f.ctx, "LISTEN "+pgx.Identifier{f.db.Schema + ".river_insert"}.Sanitize())
	require.NoError(t, err)

	require.NoError(t, f.d.pilot.ProducerShutdown(f.ctx, f.d.GetExecutor(), &riverpilot.ProducerShutdownParams{
		ProducerID: f.id, Queue: "default", Schema: f.db.Schema,
	}))
	require.Equal(t, row{"available", 0, nil, nil}, read("t03"), "never attempted before the fetch")
	require.Equal(t, row{"available", 2, &before, []string{"x", "y"}}, read("t04"), "as before the fetch")
	require.Equal(t, "running", read("t05").State, "rescued meanwhile: not this client's to put back")
	require.Empty(t, f.d.ReservedJobs())
	n, err := conn.WaitForNotification(f.ctx)
	require.NoError(t, err)
	require.JSONEq(t, `{"queue": "default"}`, n.Payload, "the queue's producers are told to fetch")

	// A reserve not handed out is put back after reserveMaxAge. (A
	// stopped producer refills no more: the client starts a new one.)
	id, state, err := f.d.pilot.ProducerInit(f.ctx, f.d.GetExecutor(), &riverpilot.ProducerInitParams{
		ClientID: "c", Queue: "default", Schema: f.db.Schema,
	})
	require.NoError(t, err)
	f.id, f.state = id, state.(*fairState)
	require.Equal(t, []string{"t03"}, f.fetch(1, true))
	require.Equal(t, "running", read("t04").State, "in the reserve")
	// The put-back notifies the queue once it has committed.
	n, err = conn.WaitForNotification(f.ctx)
	require.NoError(t, err)
	require.JSONEq(t, `{"queue": "default"}`, n.Payload)
	require.Equal(t, row{"available", 2, &before, []string{"x", "y"}}, read("t04"))
	f.state.mu.Lock()
	defer f.state.mu.Unlock()
	require.Empty(t, f.state.reserve)
}

// TestFairReserveKeptWhenAFetchFails: a fetch that was to hand out the
// reserve with more from the database, and failed, leaves the reserve as
// it was, for the next fetch.
func TestFairReserveKeptWhenAFetchFails(t *testing.T) {
	t.Parallel()

	f := newReserveFixture(t)
	for i := range 12 {
		f.insert(fmt.Sprintf("t%02d", i), i, 0, nil, nil)
	}
	require.Equal(t, []string{"t00", "t01", "t02"}, f.fetch(3, false))
	require.Equal(t, []string{"t03", "t04", "t05"}, f.fetch(3, true))
	require.Len(t, f.d.ReservedJobs(), 3)

	cancelled, cancel := context.WithCancel(f.ctx)
	cancel()
	_, err := f.d.pilot.JobGetAvailable(cancelled, f.d.GetExecutor(), f.state, &riverdriver.JobGetAvailableParams{
		ClientID: "c", Kind: []string{"workflow:a"}, MaxAttemptedBy: 100, MaxToLock: 5, Queue: "default", Schema: f.db.Schema,
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, f.d.ReservedJobs(), 3, "the reserve is whole again")
	require.Equal(t, []string{"t06", "t07", "t08"}, f.fetch(3, false))
}

// TestFairReserveRefillFailureLogged: a refill that fails is logged as a
// warning through the client's logger and starts nothing; the producer's
// next fetch fetches for itself.
func TestFairReserveRefillFailureLogged(t *testing.T) {
	t.Parallel()

	f := newReserveFixture(t)
	logs := &testlog.Buffer{}
	f.d.SetLogger(slog.New(slog.NewTextHandler(logs, nil)))
	for i := range 8 {
		f.insert(fmt.Sprintf("t%02d", i), i, 0, nil, nil)
	}
	require.Equal(t, []string{"t00", "t01"}, f.fetch(2, false))
	require.Equal(t, []string{"t02", "t03"}, f.fetch(2, true))
	require.Len(t, f.d.ReservedJobs(), 2)

	// No job may start now: the refill after the next fetch, which hands
	// out the reserve with no statement, fails.
	_, err := f.db.Pool.Exec(f.ctx, `ALTER TABLE river_job ADD CONSTRAINT none_start CHECK (state <> 'running') NOT VALID`)
	require.NoError(t, err)
	require.Equal(t, []string{"t04", "t05"}, f.fetch(2, true))
	require.Empty(t, f.d.ReservedJobs())
	require.Contains(t, logs.String(), "could not start a producer's next jobs ahead of its fetch")
	require.Contains(t, logs.String(), "none_start")

	_, err = f.db.Pool.Exec(f.ctx, `ALTER TABLE river_job DROP CONSTRAINT none_start`)
	require.NoError(t, err)
	require.Len(t, f.running(), 6, "the failed refill started nothing")
	require.Equal(t, []string{"t06", "t07"}, f.fetch(2, false), "the next fetch fetches for itself")
}
