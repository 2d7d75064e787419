package schedule

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

func TestExecutionGrants(t *testing.T) {
	t.Parallel()

	// setup's grant expires expiresIn after it is created (0: never): the
	// database and client take a while to set up on a loaded machine.
	setup := func(t *testing.T, scopes []string, expiresIn time.Duration) (*testdb.DB, *Client, *Schedule, *Grant) {
		t.Helper()
		db := testdb.New(t)
		sc := startClients(t, db, 1)[0]
		ctx := ctxT(t, 30*time.Second)
		var expires time.Time
		if expiresIn > 0 {
			expires = time.Now().Add(expiresIn)
		}
		g, err := sc.CreateGrant(ctx, &GrantParams{Subject: "user-42", Scopes: scopes, ExpiresAt: expires})
		require.NoError(t, err)
		s, err := sc.Create(ctx, &Params{Name: "g", Workflow: "whoami", Cron: "* * * * * *", Overlap: OverlapAllow, GrantID: &g.ID})
		require.NoError(t, err)
		return db, sc, s, g
	}
	skipReasons := func(t *testing.T, db *testdb.DB, id uuid.UUID) map[string]int {
		t.Helper()
		rows, err := db.Pool.Query(context.Background(), "SELECT coalesce(skip_reason, status) FROM workflow_runs WHERE schedule_id = $1", id)
		require.NoError(t, err)
		out := map[string]int{}
		for rows.Next() {
			var r string
			require.NoError(t, rows.Scan(&r))
			out[r]++
		}
		return out
	}
	waitSkips := func(t *testing.T, db *testdb.DB, id uuid.UUID, reason string, n int) {
		t.Helper()
		waitDB(t, db, 30*time.Second, func(context.Context) error {
			if got := skipReasons(t, db, id); got[reason] < n {
				return fmt.Errorf("outcomes %v, want %d %q", got, n, reason)
			}
			return nil
		})
	}

	t.Run("SubjectReachesTheRunAndRevokeSkips", func(t *testing.T) {
		t.Parallel()

		db, sc, s, g := setup(t, []string{ScopeExecute("whoami")}, 0)
		ctx := ctxT(t, 30*time.Second)
		waitSkips(t, db, s.ID, "completed", 1)
		runs, err := sc.History(ctx, ByID(s.ID), &workflow.ListParams{Status: workflow.StatusCompleted})
		require.NoError(t, err)
		require.JSONEq(t, `"user-42"`, string(runs[0].Output))

		_, err = sc.RevokeGrant(ctx, g.ID, "user left")
		require.NoError(t, err)
		waitSkips(t, db, s.ID, SkipReasonGrantRevoked, 2)
		got, err := sc.Get(ctx, ByID(s.ID))
		require.NoError(t, err)
		require.NotNil(t, got.NextFireAt, "the chain stays alive")
	})

	t.Run("OutOfScope", func(t *testing.T) {
		t.Parallel()

		// Create and Update refuse a grant that would skip every slot.
		db := testdb.New(t)
		sc := insertOnly(t, db)
		ctx := ctxT(t, 30*time.Second)
		other, err := sc.CreateGrant(ctx, &GrantParams{Subject: "user-42", Scopes: []string{ScopeExecute("other")}})
		require.NoError(t, err)
		_, err = sc.Create(ctx, &Params{Name: "g", Workflow: "whoami", Cron: "* * * * * *", GrantID: &other.ID})
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, `would skip every slot ("grant out of scope"); use a grant that is live and has scope "workflow:execute:whoami"`)
		s, err := sc.Create(ctx, &Params{Name: "g", Workflow: "whoami", Cron: "0 0 1 1 *"})
		require.NoError(t, err)
		_, err = sc.Update(ctx, ByID(s.ID), &UpdateParams{GrantID: &other.ID})
		require.ErrorIs(t, err, ErrInvalid)
		got, err := sc.Get(ctx, ByID(s.ID))
		require.NoError(t, err)
		require.Nil(t, got.GrantID, "nothing written")

		// A grant's scopes changed behind Tributary's back: the slots skip.
		db, _, s, g := setup(t, []string{"*"}, 0)
		_, err = db.Pool.Exec(ctx, "UPDATE execution_grants SET scopes = ARRAY['workflow:execute:other'] WHERE id = $1", g.ID)
		require.NoError(t, err)
		waitSkips(t, db, s.ID, SkipReasonGrantOutOfScope, 2)
	})

	t.Run("Expired", func(t *testing.T) {
		t.Parallel()

		db, _, s, _ := setup(t, []string{"*"}, 1500*time.Millisecond)
		waitSkips(t, db, s.ID, SkipReasonGrantExpired, 1)
	})

	t.Run("BadInput", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		sc := insertOnly(t, db)
		ctx := ctxT(t, 30*time.Second)
		_, err := sc.CreateGrant(ctx, &GrantParams{Subject: "", Scopes: []string{"*"}})
		require.ErrorIs(t, err, ErrInvalid)
		_, err = sc.CreateGrant(ctx, &GrantParams{Subject: "u", Scopes: nil})
		require.ErrorIs(t, err, ErrInvalid)
		missing := uuid.New()
		_, err = sc.Create(ctx, &Params{Name: "x", Workflow: "whoami", Cron: "@daily", GrantID: &missing})
		require.ErrorIs(t, err, ErrInvalid)
	})
}
