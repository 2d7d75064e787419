package schedule

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestPauseResumeOwner pauses and resumes all of an owner's schedules, in
// batches, leaving other owners' alone and a paused schedule's note as it
// was.
func TestPauseResumeOwner(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 60*time.Second)

	params := make([]*Params, 0, 130)
	for i := range 125 {
		params = append(params, &Params{Name: fmt.Sprintf("acme %d", i), Owner: "acme", Workflow: "tick", Cron: "0 8 * * *"})
	}
	for i := range 5 {
		params = append(params, &Params{Name: fmt.Sprintf("other %d", i), Owner: "other", Workflow: "tick", Cron: "0 8 * * *"})
	}
	created, err := sc.CreateMany(ctx, params)
	require.NoError(t, err)
	already, err := sc.Pause(ctx, ByID(created[0].ID), "paused before")
	require.NoError(t, err)

	res, err := sc.PauseOwner(ctx, "acme", "incident 42")
	require.NoError(t, err)
	require.Equal(t, "pause", res.Action)
	require.Equal(t, 2, res.Batches)
	require.Len(t, res.Changed, 124)
	require.Equal(t, []uuid.UUID{already.ID}, res.Unchanged)
	for _, s := range res.Changed {
		require.True(t, s.Paused)
		require.Equal(t, "incident 42", s.PauseNote)
		require.Equal(t, "acme", s.Owner)
	}
	got, err := sc.Get(ctx, ByID(already.ID))
	require.NoError(t, err)
	require.Equal(t, "paused before", got.PauseNote)
	paused := true
	others, err := sc.List(ctx, &ListParams{Owner: "other", Paused: &paused})
	require.NoError(t, err)
	require.Empty(t, others)

	res, err = sc.ResumeOwner(ctx, "acme", nil)
	require.NoError(t, err)
	require.Len(t, res.Changed, 125)
	require.Empty(t, res.Unchanged)
	for _, s := range res.Changed {
		require.False(t, s.Paused)
		require.NotNil(t, s.NextFireAt)
	}
	res, err = sc.ResumeOwner(ctx, "acme", nil)
	require.NoError(t, err)
	require.Empty(t, res.Changed)
	require.Len(t, res.Unchanged, 125)

	_, err = sc.PauseOwner(ctx, "nobody", "")
	require.ErrorIs(t, err, ErrNotFound)
	require.EqualError(t, err, `schedule: schedule not found: owner "nobody" has no schedules`)
	_, err = sc.PauseOwner(ctx, "", "")
	require.ErrorIs(t, err, ErrInvalid)
}
