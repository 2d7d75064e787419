package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

var echo = Define("echo", func(ctx Context, in greetIn) (greetOut, error) {
	return greetOut{Greeting: "hi " + in.Name}, nil
}, nil)

func TestStart(t *testing.T) {
	t.Parallel()

	t.Run("IdempotencyKeyUnderConcurrentCallers", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, echo)
		ctx := ctxT(t)

		const callers = 20
		var (
			wg       sync.WaitGroup
			handles  = make([]*Handle[greetOut], callers)
			errs     = make([]error, callers)
			existing int
		)
		for i := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				handles[i], errs[i] = echo.Start(ctx, env.client, greetIn{Name: "once"}, &StartOpts{IdempotencyKey: "order-42"})
			}()
		}
		wg.Wait()
		for i := range callers {
			require.NoError(t, errs[i])
			require.Equal(t, handles[0].ID, handles[i].ID)
			if handles[i].Existing {
				existing++
			}
		}
		require.Equal(t, callers-1, existing)
		require.Equal(t, 1, countRows(t, env.pool, "SELECT count(*) FROM workflow_runs"))
		require.Equal(t, 1, countRows(t, env.pool, "SELECT count(*) FROM river_job WHERE kind LIKE 'workflow:%'"))

		out, err := handles[7].Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "hi once", out.Greeting)
	})

	t.Run("StartTxCommitsWithCaller", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, echo)
		ctx := ctxT(t)

		tx, err := env.pool.Begin(ctx)
		require.NoError(t, err)
		h, err := echo.StartTx(ctx, env.client, tx, greetIn{Name: "tx"}, nil)
		require.NoError(t, err)
		require.NoError(t, tx.Rollback(ctx))
		require.Equal(t, 0, countRows(t, env.pool, "SELECT count(*) FROM workflow_runs"))
		require.Equal(t, 0, countRows(t, env.pool, "SELECT count(*) FROM river_job WHERE kind LIKE 'workflow:%'"))
		_, err = env.client.GetRun(ctx, h.ID)
		require.ErrorIs(t, err, ErrNotFound)

		tx, err = env.pool.Begin(ctx)
		require.NoError(t, err)
		h, err = echo.StartTx(ctx, env.client, tx, greetIn{Name: "tx"}, nil)
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "hi tx", out.Greeting)
	})

	t.Run("StartByName", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, echo)
		ctx := ctxT(t)

		run, err := env.client.StartByName(ctx, "echo", json.RawMessage(`{"name":"by name"}`), &StartOpts{Tags: []string{"api"}, Priority: 2})
		require.NoError(t, err)
		require.Equal(t, StatusPending, run.Status)
		require.Equal(t, []string{"api"}, run.Tags)
		h := &Handle[greetOut]{ID: run.ID, client: env.client}
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "hi by name", out.Greeting)

		runs, err := env.client.ListRuns(ctx, &ListParams{Type: "echo", Status: StatusCompleted})
		require.NoError(t, err)
		require.Len(t, runs, 1)
		require.Equal(t, run.ID, runs[0].ID)
	})
}

// TestBadInput checks that every bad input is a typed error that says what
// is wrong and leaves no row and no job behind.
func TestBadInput(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	client, err := NewClient(db.Pool, &Config{Schema: db.Schema, Workflows: []Registrable{echo}, MaxInputBytes: 1024})
	require.NoError(t, err)
	noop := func(Context, struct{}) (int, error) { return 0, nil }

	requireNothingWritten := func(t *testing.T) {
		t.Helper()
		require.Equal(t, 0, countRows(t, db.Pool, "SELECT count(*) FROM workflow_runs"))
		require.Equal(t, 0, countRows(t, db.Pool, "SELECT count(*) FROM river_job WHERE kind LIKE 'workflow:%'"))
	}

	t.Run("Definitions", func(t *testing.T) {
		t.Parallel()
		ctx := ctxT(t) // its own deadline: parallel subtests may wait long for their turn

		for name, def := range map[string]*Definition[struct{}, int]{
			"empty name":     Define("", noop, nil),
			"spaces in name": Define("send invoice", noop, nil),
			"long name":      Define(strings.Repeat("x", 129), noop, nil),
			"nil function":   Define[struct{}, int]("nil_fn", nil, nil),
			"bad priority":   Define("bad_priority", noop, &DefineOpts{Priority: 9}),
			"bad queue":      Define("bad_queue", noop, &DefineOpts{Queue: "No Spaces"}),
		} {
			_, err := NewClient(db.Pool, &Config{Schema: db.Schema, Workflows: []Registrable{def}})
			var verr *ValidationError
			require.ErrorAs(t, err, &verr, name)
			require.ErrorIs(t, err, ErrInvalid, name)

			_, err = def.Start(ctx, client, struct{}{}, nil)
			require.ErrorAs(t, err, &verr, name)
		}
		requireNothingWritten(t)
	})

	t.Run("DuplicateRegistration", func(t *testing.T) {
		t.Parallel()

		_, err := NewClient(db.Pool, &Config{Schema: db.Schema, Workflows: []Registrable{echo, echo}})
		require.ErrorIs(t, err, ErrInvalid)
		require.Contains(t, err.Error(), `"echo" is listed twice`)
	})

	t.Run("UnknownType", func(t *testing.T) {
		t.Parallel()
		ctx := ctxT(t) // its own deadline: parallel subtests may wait long for their turn

		_, err := client.StartByName(ctx, "no_such_workflow", json.RawMessage(`{}`), nil)
		var unknown *UnknownTypeError
		require.ErrorAs(t, err, &unknown)
		require.ErrorIs(t, err, ErrUnknownType)
		require.Equal(t, []string{"echo"}, unknown.Known)
		requireNothingWritten(t)
	})

	t.Run("Inputs", func(t *testing.T) {
		t.Parallel()
		ctx := ctxT(t) // its own deadline: parallel subtests may wait long for their turn

		unencodable := Define("unencodable", func(Context, map[string]any) (int, error) { return 0, nil }, nil)
		_, err := unencodable.Start(ctx, client, map[string]any{"c": make(chan int)}, nil)
		require.ErrorIs(t, err, ErrInvalid)
		require.Contains(t, err.Error(), "cannot be encoded as JSON")

		_, err = unencodable.Start(ctx, client, map[string]any{"x": math.Inf(1)}, nil)
		require.ErrorIs(t, err, ErrInvalid)

		_, err = echo.Start(ctx, client, greetIn{Name: strings.Repeat("x", 2000)}, nil)
		require.ErrorIs(t, err, ErrInvalid)
		require.Contains(t, err.Error(), "the limit is 1024")

		_, err = client.StartByName(ctx, "echo", json.RawMessage(`{not json`), nil)
		require.ErrorIs(t, err, ErrInvalid)

		for name, opts := range map[string]*StartOpts{
			"tag":          {Tags: []string{"has space"}},
			"priority":     {Priority: 5},
			"max attempts": {MaxAttempts: -1},
			"key":          {IdempotencyKey: strings.Repeat("k", 256)},
			"queue":        {Queue: "Bad Queue"},
			"metadata":     {Metadata: map[string]any{"c": make(chan int)}},
			"grant":        {Metadata: map[string]any{"grant_subject": "root"}}, // RunInfo.GrantSubject must not be forgeable
			"slot":         {Metadata: map[string]any{"schedule_fire_at": "2026-01-01T00:00:00Z"}},
		} {
			_, err := echo.Start(ctx, client, greetIn{}, opts)
			require.ErrorIs(t, err, ErrInvalid, name)
		}
		requireNothingWritten(t)
	})

	t.Run("ValidationLeavesCallersTxUsable", func(t *testing.T) {
		t.Parallel()
		ctx := ctxT(t) // its own deadline: parallel subtests may wait long for their turn

		err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			_, err := echo.StartTx(ctx, client, tx, greetIn{}, &StartOpts{Priority: 7})
			require.ErrorIs(t, err, ErrInvalid)
			var one int
			return tx.QueryRow(ctx, "SELECT 1").Scan(&one)
		})
		require.NoError(t, err)
	})

	t.Run("SignalInput", func(t *testing.T) {
		t.Parallel()
		ctx := ctxT(t) // its own deadline: parallel subtests may wait long for their turn

		db := testdb.New(t) // its own schema: this subtest writes a run
		client, err := NewClient(db.Pool, &Config{Schema: db.Schema, MaxInputBytes: 1024})
		require.NoError(t, err)
		h, err := echo.Start(context.Background(), client, greetIn{}, nil)
		require.NoError(t, err)
		err = client.Signal(ctx, h.ID, "", nil)
		require.ErrorIs(t, err, ErrInvalid)
		err = client.Signal(ctx, h.ID, "go", make(chan int))
		require.ErrorIs(t, err, ErrInvalid)
		err = client.Signal(ctx, h.ID, "go", strings.Repeat("x", 2000))
		require.ErrorIs(t, err, ErrInvalid)
		require.Equal(t, 0, countRows(t, db.Pool, "SELECT count(*) FROM workflow_signals"))
		require.True(t, errors.Is(client.Signal(ctx, [16]byte{1}, "go", 1), ErrNotFound))
	})
}
