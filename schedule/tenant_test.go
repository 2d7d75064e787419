package schedule

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// tenantEcho answers the tenant its run was given (workflow.RunInfo), so
// that a test sees what the run's River job carried.
var tenantEcho = workflow.Define("tenant_echo", func(ctx workflow.Context, _ struct{}) (string, error) {
	return ctx.Run().Tenant, nil
}, nil)

// TestRunTenantsOfFiredSlots: the runs a schedule's slots start carry its
// tenant: the owner when it sets none, its Tenant when set, none when it
// has no owner, and none when its owner cannot be a tenant name (the slot
// fires all the same). The run's River job carries it too (RunInfo).
func TestRunTenantsOfFiredSlots(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	c := startPoolClient(t, db.Pool, db.Schema, 10, tenantEcho)
	track(t, db, c.wf)
	ctx := ctxT(t, 60*time.Second)

	longOwner := strings.Repeat("o", workflow.MaxTenantBytes+1)
	cases := []struct {
		name, owner, tenant, want string
	}{
		{"owner's", "acme", "", "acme"},
		{"set", "acme", "globex-eu", "globex-eu"},
		{"none", "", "", ""},
		{"owner too long", longOwner, "", ""},
	}
	ids := make([]uuid.UUID, len(cases))
	for i, tc := range cases {
		s, err := c.schedules.Create(ctx, &Params{Name: tc.name, Owner: tc.owner, Tenant: tc.tenant, Workflow: "tenant_echo",
			Cron: "* * * * * *", Overlap: OverlapAllow})
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.tenant, s.Tenant, tc.name)
		require.Equal(t, tc.want, s.RunTenant(), tc.name)
		ids[i] = s.ID
	}
	for _, id := range ids {
		waitCount(t, db, 30*time.Second, 2, "SELECT count(*) FROM workflow_runs WHERE schedule_id = $1 AND status = 'completed'", id)
		_, err := c.schedules.Pause(ctx, ByID(id), "test over")
		require.NoError(t, err)
	}

	for i, tc := range cases {
		runs, err := c.schedules.History(ctx, ByID(ids[i]), &workflow.ListParams{Status: workflow.StatusCompleted})
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(runs), 2, tc.name)
		for _, run := range runs {
			require.Equal(t, tc.want, run.Tenant, "%s: run %s", tc.name, run.ID)
			require.JSONEq(t, mustJSON(t, tc.want), string(run.Output), "%s: the run's job carried its tenant", tc.name)
		}
		got, err := c.schedules.Get(ctx, ByID(ids[i]))
		require.NoError(t, err)
		require.Equal(t, tc.tenant, got.Tenant, "%s: Tenant reads back as set", tc.name)
		require.Equal(t, tc.want, got.RunTenant(), tc.name)
	}

	// ListRuns finds each tenant's runs, and only those.
	for _, tenant := range []string{"acme", "globex-eu"} {
		runs, err := c.wf.ListRuns(ctx, &workflow.ListParams{Tenant: tenant})
		require.NoError(t, err)
		require.NotEmpty(t, runs, tenant)
		for _, run := range runs {
			require.Equal(t, tenant, run.Tenant)
		}
	}
}

// TestRunTenantsOfOperatorStarts: a trigger's run, an overlap skip's record
// and a backfill's runs carry the schedule's tenant; an Update changes the
// tenant of the runs started after it, not of those before.
func TestRunTenantsOfOperatorStarts(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db) // nothing works the runs: they stay pending
	ctx := ctxT(t, 30*time.Second)

	s, err := sc.Create(ctx, &Params{Name: "report", Owner: "acme", Workflow: "tick", Cron: "0 * * * *", Overlap: OverlapAllow})
	require.NoError(t, err)
	ref := ByID(s.ID)
	trigger := func(overlap OverlapPolicy) {
		t.Helper()
		_, err := sc.Trigger(ctx, ref, &TriggerOpts{Overlap: overlap})
		require.NoError(t, err)
	}

	trigger("")
	initech := "initech"
	updated, err := sc.Update(ctx, ref, &UpdateParams{Tenant: &initech})
	require.NoError(t, err)
	require.Equal(t, "initech", updated.Tenant)
	require.Equal(t, "initech", updated.RunTenant())
	trigger("")
	trigger(OverlapSkip) // skipped: the runs before are unfinished

	// Three hourly slots, one after the other (the default buffer).
	to := time.Now().UTC().Truncate(time.Hour)
	res, err := sc.Backfill(ctx, ref, to.Add(-3*time.Hour), to, nil)
	require.NoError(t, err)
	require.Equal(t, 3, res.Slots)

	owners := ""
	updated, err = sc.Update(ctx, ref, &UpdateParams{Tenant: &owners})
	require.NoError(t, err)
	require.Empty(t, updated.Tenant)
	require.Equal(t, "acme", updated.RunTenant(), `"" is the owner's again`)
	trigger("")

	require.Equal(t, []string{"acme", "initech", "initech", "initech", "initech", "initech", "acme"}, runTenantsByCreation(t, db, s.ID))
	require.Equal(t, 1, countOf(t, db, "SELECT count(*) FROM workflow_runs WHERE schedule_id = $1 AND status = 'skipped' AND tenant = 'initech'", s.ID))
	require.Equal(t, 3, countOf(t, db, "SELECT count(*) FROM workflow_runs WHERE schedule_id = $1 AND metadata ? 'schedule_backfill' AND tenant = 'initech'", s.ID))
	// The run's job carries it too, for River UI and for the run's code.
	require.Equal(t, 4, countOf(t, db, "SELECT count(*) FROM river_job WHERE args->>'tenant' = 'initech'"), "a trigger's and three backfilled runs' jobs")

	// The other fields of an Update leave the tenant alone.
	name := "report (renamed)"
	_, err = sc.Update(ctx, ref, &UpdateParams{Tenant: &initech})
	require.NoError(t, err)
	updated, err = sc.Update(ctx, ref, &UpdateParams{Name: &name})
	require.NoError(t, err)
	require.Equal(t, "initech", updated.Tenant)
}

// runTenantsByCreation are the tenants of schedule id's runs in the order
// they were made (a triggered or backfilled run's slot is not its
// creation order), "" for none.
func runTenantsByCreation(t *testing.T, db *testdb.DB, id uuid.UUID) []string {
	t.Helper()
	rows, err := db.Pool.Query(ctxT(t, 10*time.Second), "SELECT coalesce(tenant, '') FROM workflow_runs r WHERE schedule_id = $1 AND "+notPreparedRun+" ORDER BY id", id)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var tenant string
		require.NoError(t, rows.Scan(&tenant))
		out = append(out, tenant)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestTenantValidation: a tenant that is not a valid tenant name is a
// *ValidationError of field Tenant, from Create, CreateMany, Update and
// Declare, and nothing is written.
func TestTenantValidation(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)

	bad := map[string]string{
		" acme":                       "has a space at an end",
		strings.Repeat("t", 101):      "is 101 bytes, the limit is 100",
		"acme\x00":                    "cannot be shown",
		"line\nbreak":                 "cannot be shown",
		"\xff":                        "is not valid UTF-8",
		strings.Repeat("é", 50) + "e": "is 101 bytes",
	}
	requireInvalid := func(err error, tenant, problem string) {
		t.Helper()
		require.ErrorIs(t, err, ErrInvalid, "tenant %q", tenant)
		var verr *ValidationError
		require.ErrorAs(t, err, &verr, "tenant %q", tenant)
		require.Equal(t, "Tenant", verr.Field, "tenant %q", tenant)
		require.Contains(t, verr.Problem, problem, "tenant %q", tenant)
	}
	for tenant, problem := range bad {
		_, err := sc.Create(ctx, &Params{Name: "n", Owner: "acme", Tenant: tenant, Workflow: "tick", Cron: "0 9 * * *"})
		requireInvalid(err, tenant, problem)

		_, err = sc.CreateMany(ctx, []*Params{
			{Name: "good", Workflow: "tick", Cron: "0 9 * * *"},
			{Name: "bad", Tenant: tenant, Workflow: "tick", Cron: "0 9 * * *"},
		})
		var itemErr *ItemError
		require.ErrorAs(t, err, &itemErr)
		require.Equal(t, 1, itemErr.Index)
		requireInvalid(err, tenant, problem)

		_, err = sc.Declare(ctx, &Declaration{Service: "reports", Schedules: []*Params{
			{Name: "bad", Key: "bad", Tenant: tenant, Workflow: "tick", Cron: "0 9 * * *"},
		}})
		requireInvalid(err, tenant, problem)
	}
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM schedules"))
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM river_job"))

	s, err := sc.Create(ctx, &Params{Name: "n", Owner: "acme", Tenant: "globex", Workflow: "tick", Cron: "0 9 * * *"})
	require.NoError(t, err)
	for tenant, problem := range bad {
		_, err := sc.Update(ctx, ByID(s.ID), &UpdateParams{Tenant: &tenant})
		requireInvalid(err, tenant, problem)
	}
	got, err := sc.Get(ctx, ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, "globex", got.Tenant)
	require.True(t, got.UpdatedAt.Equal(s.UpdatedAt), "no refused Update wrote")

	// The longest tenant, and one of printable characters beyond ASCII.
	for _, tenant := range []string{strings.Repeat("t", workflow.MaxTenantBytes), "société générale"} {
		s, err := sc.Create(ctx, &Params{Name: "n", Tenant: tenant, Workflow: "tick", Cron: "0 9 * * *"})
		require.NoError(t, err, "tenant %q", tenant)
		require.Equal(t, tenant, s.Tenant)
	}
}

// TestTenantIsPartOfTheSpec: Create by key and Declare compare the tenant
// like the other fields; CreateMany stores each item's; JSON names it
// "tenant", left out when the runs take the owner's.
func TestTenantIsPartOfTheSpec(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)

	// Create by key: another tenant is another spec.
	p := keyed("acme", "nightly-report")
	first, err := sc.Create(ctx, p)
	require.NoError(t, err)
	p = keyed("acme", "nightly-report")
	p.Tenant = "acme-eu"
	_, err = sc.Create(ctx, p)
	var conflict *KeyConflictError
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, first.ID, conflict.ID)
	require.Equal(t, []FieldDiff{{Field: "Tenant", Stored: `""`, Given: `"acme-eu"`}}, conflict.Diffs)

	// Declare: a new tenant is an update, and the schedule's runs take it.
	decl := func(version int64, tenant string) *Declaration {
		return &Declaration{Service: "reports", Version: version, Schedules: []*Params{
			{Name: "digest", Owner: "user-42", Key: "digest", Tenant: tenant, Workflow: "tick", Cron: "0 8 * * *"},
		}}
	}
	res, err := sc.Declare(ctx, decl(1, ""))
	require.NoError(t, err)
	require.Equal(t, []string{"created user-42/digest"}, actions(res))
	require.Equal(t, "user-42", res.Decisions[0].Schedule.RunTenant())
	res, err = sc.Declare(ctx, decl(1, ""))
	require.NoError(t, err)
	require.Equal(t, []string{"unchanged user-42/digest"}, actions(res))
	res, err = sc.Declare(ctx, decl(2, "team-7"))
	require.NoError(t, err)
	require.Equal(t, []string{`updated user-42/digest: Tenant "" → "team-7"`}, actions(res))
	got, err := sc.Get(ctx, ByKey("user-42", "digest"))
	require.NoError(t, err)
	require.Equal(t, "team-7", got.Tenant)
	res, err = sc.Declare(ctx, decl(3, ""))
	require.NoError(t, err)
	require.Equal(t, []string{`updated user-42/digest: Tenant "team-7" → ""`}, actions(res))
	got, err = sc.Get(ctx, ByKey("user-42", "digest"))
	require.NoError(t, err)
	require.Empty(t, got.Tenant)
	require.Equal(t, "user-42", got.RunTenant())

	// CreateMany stores each item's tenant.
	many, err := sc.CreateMany(ctx, []*Params{
		{Name: "a", Owner: "u1", Workflow: "tick", Cron: "0 9 * * *"},
		{Name: "b", Owner: "u2", Tenant: "shared", Workflow: "tick", Cron: "0 9 * * *"},
	})
	require.NoError(t, err)
	for i, want := range []string{"", "shared"} {
		got, err := sc.Get(ctx, ByID(many[i].ID))
		require.NoError(t, err)
		require.Equal(t, want, got.Tenant)
	}
	require.Equal(t, "u1", many[0].RunTenant())
	require.Equal(t, "shared", many[1].RunTenant())

	// JSON: "tenant" as set, left out for the owner's.
	b, err := json.Marshal(many[1])
	require.NoError(t, err)
	require.True(t, jsonHas(t, b, "tenant"))
	require.Contains(t, string(b), `"tenant":"shared"`)
	b, err = json.Marshal(many[0])
	require.NoError(t, err)
	require.False(t, jsonHas(t, b, "tenant"))
}
