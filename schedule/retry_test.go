package schedule

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// TestScheduleRetryPolicy: a schedule stores its runs' retry policy, every
// run it starts carries it on its job, an Update replaces or removes it,
// and a bad policy is a *ValidationError naming the field, with nothing
// written.
func TestScheduleRetryPolicy(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)

	jobRetry := func(runID uuid.UUID) *workflow.RetryPolicy {
		t.Helper()
		var args struct {
			Retry *workflow.RetryPolicy `json:"retry"`
		}
		var raw []byte
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT j.args FROM river_job j JOIN workflow_runs r ON r.job_id = j.id WHERE r.id = $1`, runID).Scan(&raw))
		require.NoError(t, json.Unmarshal(raw, &args))
		return args.Retry
	}

	policy := &workflow.RetryPolicy{Base: time.Second, Factor: 2, Max: 5 * time.Minute, Jitter: 0.1}
	s, err := sc.Create(ctx, &Params{Name: "report", Workflow: "tick", Cron: "0 9 * * *", MaxAttempts: 10, Retry: policy})
	require.NoError(t, err)
	require.Equal(t, policy, s.Retry)
	got, err := sc.Get(ctx, ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, policy, got.Retry)

	runID, err := sc.Trigger(ctx, ByID(s.ID), nil)
	require.NoError(t, err)
	require.Equal(t, policy, jobRetry(runID), "the schedule's run carries its policy")

	fixed := &workflow.RetryPolicy{Delay: 30 * time.Second}
	s, err = sc.Update(ctx, ByID(s.ID), &UpdateParams{Retry: fixed})
	require.NoError(t, err)
	require.Equal(t, fixed, s.Retry)
	runID, err = sc.Trigger(ctx, ByID(s.ID), &TriggerOpts{Overlap: OverlapAllow})
	require.NoError(t, err)
	require.Equal(t, fixed, jobRetry(runID))

	s, err = sc.Update(ctx, ByID(s.ID), &UpdateParams{Retry: &workflow.RetryPolicy{}})
	require.NoError(t, err)
	require.Nil(t, s.Retry, "the zero policy removes it")
	runID, err = sc.Trigger(ctx, ByID(s.ID), &TriggerOpts{Overlap: OverlapAllow})
	require.NoError(t, err)
	require.Nil(t, jobRetry(runID), "no policy: the working client's type's applies")

	// CreateMany stores each item's.
	many, err := sc.CreateMany(ctx, []*Params{
		{Name: "a", Workflow: "tick", Cron: "0 9 * * *", Retry: fixed},
		{Name: "b", Workflow: "tick", Cron: "0 9 * * *"},
	})
	require.NoError(t, err)
	require.Equal(t, fixed, many[0].Retry)
	require.Nil(t, many[1].Retry)

	// Create by key compares the policy like the rest of the spec.
	p := keyed("acme", "retrying")
	p.Retry = fixed
	_, err = sc.Create(ctx, p)
	require.NoError(t, err)
	p = keyed("acme", "retrying")
	p.Retry = &workflow.RetryPolicy{Delay: time.Minute}
	_, err = sc.Create(ctx, p)
	var conflict *KeyConflictError
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, []FieldDiff{{Field: "Retry", Stored: "retries after 30s", Given: "retries after 1m"}}, conflict.Diffs)

	schedules := countOf(t, db, "SELECT count(*) FROM schedules")
	for field, bad := range map[string]*workflow.RetryPolicy{
		"Retry.Delay":  {Delay: -time.Second},
		"Retry.Factor": {Base: time.Second, Factor: 0.9},
		"Retry.Max":    {Base: time.Minute, Max: time.Second},
		"Retry.Jitter": {Delay: time.Second, Jitter: 1.1},
	} {
		_, err := sc.Create(ctx, &Params{Name: "bad", Workflow: "tick", Cron: "0 9 * * *", Retry: bad})
		var verr *ValidationError
		require.ErrorAs(t, err, &verr, field)
		require.Equal(t, field, verr.Field)
		require.ErrorIs(t, err, ErrInvalid)

		_, err = sc.Update(ctx, ByID(s.ID), &UpdateParams{Retry: bad})
		require.ErrorAs(t, err, &verr, field)
		require.Equal(t, field, verr.Field)
	}
	require.Equal(t, schedules, countOf(t, db, "SELECT count(*) FROM schedules"), "no bad policy wrote a schedule")
	got, err = sc.Get(ctx, ByID(s.ID))
	require.NoError(t, err)
	require.Nil(t, got.Retry, "no bad policy was stored by Update")
}
