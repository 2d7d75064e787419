package schedule

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestKeepRuns: KeepRuns is stored by Create, CreateMany and Update, and
// refused out of range with nothing written.
func TestKeepRuns(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)

	s, err := sc.Create(ctx, &Params{Name: "monthly", Workflow: "tick", Cron: "0 6 1 * *", KeepRuns: 12})
	require.NoError(t, err)
	require.Equal(t, 12, s.KeepRuns)
	got, err := sc.Get(ctx, ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, 12, got.KeepRuns)

	two := 2
	updated, err := sc.Update(ctx, ByID(s.ID), &UpdateParams{KeepRuns: &two})
	require.NoError(t, err)
	require.Equal(t, 2, updated.KeepRuns)
	renamed, err := sc.Update(ctx, ByID(s.ID), &UpdateParams{Name: new("renamed")})
	require.NoError(t, err)
	require.Equal(t, 2, renamed.KeepRuns, "an update that does not name KeepRuns keeps it")

	many, err := sc.CreateMany(ctx, []*Params{
		{Name: "a", Workflow: "tick", Cron: "@daily", KeepRuns: 7},
		{Name: "b", Workflow: "tick", Cron: "@daily"},
	})
	require.NoError(t, err)
	require.Equal(t, 7, many[0].KeepRuns)
	require.Zero(t, many[1].KeepRuns)

	for _, keep := range []int{-1, MaxKeepRuns + 1} {
		_, err := sc.Create(ctx, &Params{Name: "bad", Workflow: "tick", Cron: "@daily", KeepRuns: keep})
		var verr *ValidationError
		require.True(t, errors.As(err, &verr), "KeepRuns %d: %v", keep, err)
		require.Equal(t, "KeepRuns", verr.Field)
	}
	list, err := sc.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list, 3, "a refused schedule writes nothing")
}
