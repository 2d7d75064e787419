package workflow

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestStartGroup: concurrent Starts written in groups (group commit) each
// get their own run, as written alone: its input, options and River job.
func TestStartGroup(t *testing.T) {
	t.Parallel()

	t.Run("ConcurrentStartsEachGetTheirRun", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, echo)
		ctx := ctxT(t)

		const callers = 40
		var (
			wg      sync.WaitGroup
			handles = make([]*Handle[greetOut], callers)
			errs    = make([]error, callers)
			byName  = make([]*Run, callers)
		)
		for i := range callers {
			wg.Go(func() {
				opts := &StartOpts{Tenant: fmt.Sprintf("t%d", i%3), Tags: []string{fmt.Sprintf("tag_%d", i)},
					Metadata: map[string]any{"i": i}, Priority: 1 + i%4}
				if i%2 == 0 {
					handles[i], errs[i] = echo.Start(ctx, env.client, greetIn{Name: fmt.Sprint(i)}, opts)
					return
				}
				byName[i], errs[i] = env.client.StartByName(ctx, "echo", []byte(fmt.Sprintf(`{"name": "%d"}`, i)), opts)
			})
		}
		wg.Wait()

		seen := map[uuid.UUID]bool{}
		for i := range callers {
			require.NoError(t, errs[i], i)
			var id uuid.UUID
			if i%2 == 0 {
				require.False(t, handles[i].Existing)
				id = handles[i].ID
			} else {
				require.False(t, byName[i].Existing)
				require.Equal(t, StatusPending, byName[i].Status)
				require.NotZero(t, byName[i].JobID)
				id = byName[i].ID
			}
			require.False(t, seen[id], "run %s returned twice", id)
			seen[id] = true

			run, err := env.client.GetRun(ctx, id)
			require.NoError(t, err)
			require.JSONEq(t, fmt.Sprintf(`{"name": "%d"}`, i), string(run.Input))
			require.Equal(t, fmt.Sprintf("t%d", i%3), run.Tenant)
			require.Equal(t, []string{fmt.Sprintf("tag_%d", i)}, run.Tags)
			require.Equal(t, 1+i%4, run.Priority)
			require.JSONEq(t, fmt.Sprintf(`{"i": %d}`, i), string(run.Metadata))
			require.Equal(t, 1, countRows(t, env.pool,
				"SELECT count(*) FROM river_job WHERE id = $1 AND args->>'run_id' = $2 AND priority = $3 AND tags = $4",
				run.JobID, id.String(), 1+i%4, []string{fmt.Sprintf("tag_%d", i)}))
		}
		require.Equal(t, callers, countRows(t, env.pool, "SELECT count(*) FROM workflow_runs"))
		require.Equal(t, callers, countRows(t, env.pool, "SELECT count(*) FROM river_job WHERE kind LIKE 'workflow:%'"))
		require.Positive(t, env.client.startGroups.grouped.Load(), "no start was written in a group")
	})

	t.Run("OneFailingStartFailsAlone", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, echo)
		ctx := ctxT(t)

		// The database refuses one run, after every check in Go: its
		// group is rolled back and its starts written again one at a
		// time, so that only that start fails.
		_, err := env.pool.Exec(ctx, `
CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.input->>'name' = 'boom' THEN RAISE EXCEPTION 'boom refused'; END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER refuse_boom BEFORE INSERT ON workflow_runs FOR EACH ROW EXECUTE FUNCTION refuse_boom()`)
		require.NoError(t, err)

		const callers = 30
		var (
			wg   sync.WaitGroup
			errs = make([]error, callers)
		)
		for i := range callers {
			wg.Go(func() {
				name := fmt.Sprint(i)
				if i == callers/2 {
					name = "boom"
				}
				_, errs[i] = echo.Start(ctx, env.client, greetIn{Name: name}, nil)
			})
		}
		wg.Wait()
		for i := range callers {
			if i == callers/2 {
				require.ErrorContains(t, errs[i], "boom refused")
				continue
			}
			require.NoError(t, errs[i], i)
		}
		require.Equal(t, callers-1, countRows(t, env.pool, "SELECT count(*) FROM workflow_runs"))
		require.Equal(t, callers-1, countRows(t, env.pool, "SELECT count(*) FROM river_job WHERE kind LIKE 'workflow:%'"))
		require.Positive(t, env.client.startGroups.rolledBack.Load(), "no group was rolled back: the failing start was written alone")
	})

	t.Run("CancelledWhileWaitingWritesNothing", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, echo)
		ctx := ctxT(t)

		// A group is being written (held here): a start that arrives
		// meanwhile waits, and its caller gives up.
		g := &env.client.startGroups
		g.mu.Lock()
		g.writing = true
		g.mu.Unlock()

		waitCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		started := make(chan error, 1)
		go func() {
			_, err := echo.Start(waitCtx, env.client, greetIn{Name: "late"}, nil)
			started <- err
		}()
		waitCond(t, "the start to wait in a group", nil, func(context.Context) (bool, error) {
			g.mu.Lock()
			defer g.mu.Unlock()
			return len(g.waiting) == 1, nil
		})
		cancel()
		require.ErrorIs(t, <-started, context.Canceled)

		g.mu.Lock()
		require.Empty(t, g.waiting)
		g.writing = false
		g.mu.Unlock()
		require.Equal(t, 0, countRows(t, env.pool, "SELECT count(*) FROM workflow_runs"))

		// The next start writes at once.
		_, err := echo.Start(ctx, env.client, greetIn{Name: "next"}, nil)
		require.NoError(t, err)
	})

	t.Run("ALoneStartKeepsItsCallersContext", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, echo)
		cancelled, cancel := context.WithCancel(ctxT(t))
		cancel()
		_, err := echo.Start(cancelled, env.client, greetIn{Name: "never"}, nil)
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, 0, countRows(t, env.pool, "SELECT count(*) FROM workflow_runs"))
		g := &env.client.startGroups
		g.mu.Lock()
		defer g.mu.Unlock()
		require.False(t, g.writing, "the writing ended with the start")
	})

	t.Run("WithdrawPassesTheLeadOn", func(t *testing.T) {
		t.Parallel()

		g := &startGroups{writing: true}
		a := &groupedStart{lead: make(chan struct{}), done: make(chan struct{})}
		b := &groupedStart{lead: make(chan struct{}), done: make(chan struct{})}
		g.waiting = []*groupedStart{a, b}
		close(a.lead) // a was handed the lead, and gave up

		require.True(t, g.withdraw(a))
		require.Equal(t, []*groupedStart{b}, g.waiting)
		select {
		case <-b.lead:
		default:
			t.Fatal("b did not get the lead")
		}

		close(b.done)
		require.True(t, g.withdraw(b)) // led, and nobody waits: writing ends
		require.False(t, g.writing)
		require.False(t, g.withdraw(b))
	})
}
