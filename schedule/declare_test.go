package schedule

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// reportsDecl is the declaration of service "reports" at version, with a
// nightly report at cron and the schedules of extra keys.
func reportsDecl(version int64, cron string, extra ...string) *Declaration {
	d := &Declaration{Service: "reports", Version: version, Schedules: []*Params{
		{Name: "nightly report", Key: "nightly-report", Workflow: "tick", Cron: cron, TimeZone: "Europe/Paris"},
	}}
	for _, key := range extra {
		d.Schedules = append(d.Schedules, &Params{Name: key, Key: key, Workflow: "tick", Cron: "0 9 * * 1"})
	}
	return d
}

// actions are the decisions of res as strings.
func actions(res *DeclareResult) []string {
	var out []string
	for _, d := range res.Decisions {
		out = append(out, d.String())
	}
	return out
}

// TestDeclare walks a service through deploys: created, unchanged, updated
// (retimed), undeclared (paused), declared again (resumed), deleted.
func TestDeclare(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	var logs lockedBuffer
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{Schema: db.Schema})
	require.NoError(t, err)
	sc, err := New(wf, &Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	ctx := ctxT(t, 30*time.Second)

	res, err := sc.Declare(ctx, reportsDecl(1, "0 2 * * *", "weekly"))
	require.NoError(t, err)
	require.Equal(t, []string{"created nightly-report", "created weekly"}, actions(res))
	require.Contains(t, logs.String(), `msg="tributary: Declared schedules: created nightly-report; created weekly" service=reports version=1`)
	nightly := res.Decisions[0].Schedule
	require.Equal(t, "reports", nightly.DeclaredBy)
	require.Equal(t, "declared by service reports", nightly.Origin())

	// A restart: nothing changes.
	res, err = sc.Declare(ctx, reportsDecl(1, "0 2 * * *", "weekly"))
	require.NoError(t, err)
	require.Equal(t, []string{"unchanged nightly-report", "unchanged weekly"}, actions(res))
	require.Equal(t, "2 unchanged", res.String())

	// A deploy that moves the report and drops the weekly one.
	res, err = sc.Declare(ctx, reportsDecl(2, "0 3 * * *"))
	require.NoError(t, err)
	require.Equal(t, []string{`updated nightly-report: Cron "0 2 * * *" → "0 3 * * *"`, "paused weekly"}, actions(res))
	got, err := sc.Get(ctx, ByKey("", "nightly-report"))
	require.NoError(t, err)
	require.Equal(t, nightly.ID, got.ID)
	require.Equal(t, "0 3 * * *", got.Cron)
	require.Equal(t, 3, got.NextFireAt.In(mustZone(t, "Europe/Paris")).Hour(), "the pending slot moved with the cron")
	weekly, err := sc.Get(ctx, ByKey("", "weekly"))
	require.NoError(t, err)
	require.True(t, weekly.Paused)
	require.Equal(t, "no longer declared by service reports (version 2)", weekly.PauseNote)
	require.NotNil(t, weekly.UndeclaredAt)
	require.Contains(t, weekly.Origin(), "no longer declared since")

	// Once paused as undeclared, it is left alone.
	res, err = sc.Declare(ctx, reportsDecl(2, "0 3 * * *"))
	require.NoError(t, err)
	require.Equal(t, []string{"unchanged nightly-report"}, actions(res))

	// Declared again: resumed, with its own spec.
	res, err = sc.Declare(ctx, reportsDecl(3, "0 3 * * *", "weekly"))
	require.NoError(t, err)
	require.Equal(t, []string{"unchanged nightly-report", "resumed weekly"}, actions(res))
	weekly, err = sc.Get(ctx, ByKey("", "weekly"))
	require.NoError(t, err)
	require.False(t, weekly.Paused)
	require.NotNil(t, weekly.NextFireAt)
	require.Nil(t, weekly.UndeclaredAt)

	// An operator's pause outlives deploys.
	_, err = sc.Pause(ctx, ByKey("", "weekly"), "customer asked")
	require.NoError(t, err)
	res, err = sc.Declare(ctx, reportsDecl(4, "0 3 * * *", "weekly"))
	require.NoError(t, err)
	require.Equal(t, []string{"unchanged nightly-report", "unchanged weekly"}, actions(res))
	weekly, err = sc.Get(ctx, ByKey("", "weekly"))
	require.NoError(t, err)
	require.True(t, weekly.Paused)
	require.Equal(t, "customer asked", weekly.PauseNote)

	// An operator's Update lasts until the next declaration.
	cron := "0 5 * * *"
	_, err = sc.Update(ctx, ByKey("", "nightly-report"), &UpdateParams{Cron: &cron})
	require.NoError(t, err)
	res, err = sc.Declare(ctx, reportsDecl(4, "0 3 * * *", "weekly"))
	require.NoError(t, err)
	require.Equal(t, `updated nightly-report: Cron "0 5 * * *" → "0 3 * * *"`, res.Decisions[0].String())

	// An operator's pause outlives the schedule's undeclaring, note and
	// all, and its declaring again.
	res, err = sc.Declare(ctx, reportsDecl(4, "0 3 * * *"))
	require.NoError(t, err)
	require.Equal(t, []string{"unchanged nightly-report", "paused weekly"}, actions(res))
	weekly, err = sc.Get(ctx, ByKey("", "weekly"))
	require.NoError(t, err)
	require.Equal(t, "customer asked", weekly.PauseNote)
	require.NotNil(t, weekly.UndeclaredAt)
	res, err = sc.Declare(ctx, reportsDecl(4, "0 3 * * *", "weekly"))
	require.NoError(t, err)
	require.Equal(t, []string{"unchanged nightly-report", "unchanged weekly"}, actions(res))
	weekly, err = sc.Get(ctx, ByKey("", "weekly"))
	require.NoError(t, err)
	require.True(t, weekly.Paused)
	require.Nil(t, weekly.UndeclaredAt)

	// Deleting what is no longer declared, when the service says so.
	decl := reportsDecl(5, "0 3 * * *")
	decl.Undeclared = UndeclaredDelete
	res, err = sc.Declare(ctx, decl)
	require.NoError(t, err)
	require.Equal(t, []string{"unchanged nightly-report", "deleted weekly"}, actions(res))
	_, err = sc.Get(ctx, ByKey("", "weekly"))
	require.ErrorIs(t, err, ErrNotFound)

	require.Equal(t, 1, countOf(t, db, "SELECT count(*) FROM schedules"))
	require.Equal(t, 5, countOf(t, db, "SELECT version::int FROM schedule_declarations WHERE service = 'reports'"))
}

// TestDeclareVersions: a declaration older than the one applied changes
// nothing, whatever it declares; the same version applies (the newest call
// wins).
func TestDeclareVersions(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)

	_, err := sc.Declare(ctx, reportsDecl(7, "0 3 * * *", "added-in-7"))
	require.NoError(t, err)
	// The old build restarts: it knows neither the new cron nor the new
	// schedule, and undoes neither.
	old := reportsDecl(6, "0 2 * * *", "removed-in-7")
	old.Undeclared = UndeclaredDelete
	res, err := sc.Declare(ctx, old)
	require.NoError(t, err)
	require.True(t, res.Superseded)
	require.EqualValues(t, 7, res.AppliedVersion)
	require.Empty(t, res.Decisions)
	require.Equal(t, "changed nothing: version 7 of service reports is applied, newer than this version 6", res.String())
	require.Equal(t, 1, countOf(t, db, "SELECT count(*) FROM schedules WHERE key = 'nightly-report' AND cron = '0 3 * * *'"))
	require.Equal(t, 1, countOf(t, db, "SELECT count(*) FROM schedules WHERE key = 'added-in-7' AND NOT paused"))
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM schedules WHERE key = 'removed-in-7'"))

	// Version 7 again, changed: the newest call wins.
	res, err = sc.Declare(ctx, reportsDecl(7, "0 4 * * *", "added-in-7"))
	require.NoError(t, err)
	require.False(t, res.Superseded)
	require.Equal(t, `updated nightly-report: Cron "0 3 * * *" → "0 4 * * *"`, res.Decisions[0].String())
}

// TestDeclareNeverTakesOver: a declared key that belongs to a schedule made
// by hand, or declared by another service, is refused, and nothing is
// written; other services' schedules are not undeclared.
func TestDeclareNeverTakesOver(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)

	byHand, err := sc.Create(ctx, &Params{Name: "made by hand", Key: "nightly-report", Workflow: "tick", Cron: "0 2 * * *", TimeZone: "Europe/Paris", CreatedBy: "cli"})
	require.NoError(t, err)
	_, err = sc.Declare(ctx, reportsDecl(1, "0 2 * * *", "weekly"))
	var item *ItemError
	require.ErrorAs(t, err, &item)
	require.Equal(t, 0, item.Index)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "Key", verr.Field)
	require.Contains(t, verr.Problem, `key "nightly-report" is schedule `+byHand.ID.String()+", created by hand with the CLI")
	require.Contains(t, verr.Problem, "tributary schedule delete nightly-report")
	require.Equal(t, 1, countOf(t, db, "SELECT count(*) FROM schedules"), "weekly was not created either")
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM schedule_declarations"))

	// Another service's key; and a service never undeclares another's.
	_, err = sc.Declare(ctx, &Declaration{Service: "billing", Schedules: []*Params{{Name: "invoices", Key: "invoices", Workflow: "tick", Cron: "0 1 1 * *"}}})
	require.NoError(t, err)
	_, err = sc.Declare(ctx, &Declaration{Service: "reports", Schedules: []*Params{{Name: "invoices", Key: "invoices", Workflow: "tick", Cron: "0 1 1 * *"}}})
	require.ErrorAs(t, err, &verr)
	require.Contains(t, verr.Problem, "declared by service billing")
	res, err := sc.Declare(ctx, &Declaration{Service: "reports", Schedules: []*Params{{Name: "weekly", Key: "weekly", Workflow: "tick", Cron: "0 9 * * 1"}}})
	require.NoError(t, err)
	require.Equal(t, []string{"created weekly"}, actions(res))
	invoices, err := sc.Get(ctx, ByKey("", "invoices"))
	require.NoError(t, err)
	require.False(t, invoices.Paused)
	byHandNow, err := sc.Get(ctx, ByID(byHand.ID))
	require.NoError(t, err)
	require.Equal(t, byHand.UpdatedAt, byHandNow.UpdatedAt)
}

// TestDeclareValidation: bad declarations are refused, naming the field
// (and the item), and nothing is written.
func TestDeclareValidation(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)

	for name, tc := range map[string]struct {
		decl  *Declaration
		field string
		index int // -1: not an item's
	}{
		"nil":             {nil, "Declaration", -1},
		"no service":      {&Declaration{Service: " "}, "Service", -1},
		"negative":        {&Declaration{Service: "reports", Version: -1}, "Version", -1},
		"bad policy":      {&Declaration{Service: "reports", Undeclared: "forget"}, "Undeclared", -1},
		"no key":          {&Declaration{Service: "reports", Schedules: []*Params{{Name: "a", Workflow: "tick", Cron: "@daily"}}}, "Key", 0},
		"long key":        {&Declaration{Service: "reports", Schedules: []*Params{{Name: "a", Key: string(make([]byte, 201)), Workflow: "tick", Cron: "@daily"}}}, "Key", 0},
		"nil item":        {&Declaration{Service: "reports", Schedules: []*Params{nil}}, "Params", 0},
		"created by":      {&Declaration{Service: "reports", Schedules: []*Params{{Name: "a", Key: "a", CreatedBy: "cli", Workflow: "tick", Cron: "@daily"}}}, "CreatedBy", 0},
		"require worker":  {&Declaration{Service: "reports", Schedules: []*Params{{Name: "a", Key: "a", RequireWorker: true, Workflow: "tick", Cron: "@daily"}}}, "RequireWorker", 0},
		"bad cron":        {&Declaration{Service: "reports", Schedules: []*Params{{Name: "a", Key: "a", Workflow: "tick", Cron: "@daily"}, {Name: "b", Key: "b", Workflow: "tick", Cron: "61 * * * *"}}}, "", 1},
		"duplicate key":   {&Declaration{Service: "reports", Schedules: []*Params{{Name: "a", Key: "a", Workflow: "tick", Cron: "@daily"}, {Name: "b", Key: "a", Workflow: "tick", Cron: "@hourly"}}}, "Key", 1},
		"empty name":      {&Declaration{Service: "reports", Schedules: []*Params{{Key: "a", Workflow: "tick", Cron: "@daily"}}}, "Name", 0},
		"slash in a key":  {&Declaration{Service: "reports", Schedules: []*Params{{Name: "a", Key: "a/b", Workflow: "tick", Cron: "@daily"}}}, "Key", 0},
		"long service":    {&Declaration{Service: string(bytes.Repeat([]byte("s"), 201))}, "Service", -1},
		"uuid-shaped key": {&Declaration{Service: "reports", Schedules: []*Params{{Name: "a", Key: "01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e", Workflow: "tick", Cron: "@daily"}}}, "Key", 0},
	} {
		_, err := sc.Declare(ctx, tc.decl)
		require.ErrorIs(t, err, ErrInvalid, name)
		if tc.index >= 0 {
			var item *ItemError
			require.ErrorAs(t, err, &item, name)
			require.Equal(t, tc.index, item.Index, name)
		}
		if tc.field != "" {
			var verr *ValidationError
			require.ErrorAs(t, err, &verr, name)
			require.Equal(t, tc.field, verr.Field, name)
		}
	}
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM schedules"))
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM schedule_declarations"))
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM river_job"))

	// The same key under two owners is two schedules.
	res, err := sc.Declare(ctx, &Declaration{Service: "reports", Schedules: []*Params{
		{Name: "a", Owner: "acme", Key: "digest", Workflow: "tick", Cron: "@daily"},
		{Name: "a", Owner: "globex", Key: "digest", Workflow: "tick", Cron: "@daily"},
	}})
	require.NoError(t, err)
	require.Equal(t, []string{"created acme/digest", "created globex/digest"}, actions(res))
}

// TestDeclareRacing: replicas declaring at once take turns: one creates,
// the others find it unchanged, and there is one schedule per key.
// (TestDeclareRollingDeployProcesses does it with processes.)
func TestDeclareRacing(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, 60*time.Second)
	const n = 6
	results := make([]*DeclareResult, n)
	errs := make([]error, n)
	clients := make([]*Client, n)
	for i := range clients {
		clients[i] = insertOnly(t, db)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, sc := range clients {
		wg.Go(func() {
			<-start
			results[i], errs[i] = sc.Declare(ctx, reportsDecl(1, "0 2 * * *", "weekly", "monthly"))
		})
	}
	close(start)
	wg.Wait()
	created := 0
	for i := range n {
		require.NoError(t, errs[i])
		for _, d := range results[i].Decisions {
			if d.Action == DeclareCreated {
				created++
			} else {
				require.Equal(t, DeclareUnchanged, d.Action)
			}
		}
	}
	require.Equal(t, 3, created)
	require.Equal(t, 3, countOf(t, db, "SELECT count(*) FROM schedules"))
}

// TestDeclareUnderARevokedGrant: a declaration that changes a schedule
// whose grant was revoked since updates it, grant and all (its slots are
// skipped at fire time, saying why); giving it a revoked grant anew is
// refused.
func TestDeclareUnderARevokedGrant(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)
	grant, err := sc.CreateGrant(ctx, &GrantParams{Subject: "reporting-bot", Scopes: []string{ScopeExecute("tick")}})
	require.NoError(t, err)
	decl := func(cron string) *Declaration {
		d := reportsDecl(1, cron)
		d.Schedules[0].GrantID = &grant.ID
		return d
	}
	_, err = sc.Declare(ctx, decl("0 2 * * *"))
	require.NoError(t, err)
	_, err = sc.RevokeGrant(ctx, grant.ID, "rotated")
	require.NoError(t, err)

	res, err := sc.Declare(ctx, decl("0 3 * * *"))
	require.NoError(t, err)
	require.Equal(t, []string{`updated nightly-report: Cron "0 2 * * *" → "0 3 * * *"`}, actions(res))

	other, err := sc.Create(ctx, &Params{Name: "other", Workflow: "tick", Cron: "@daily"})
	require.NoError(t, err)
	_, err = sc.Update(ctx, ByID(other.ID), &UpdateParams{GrantID: &grant.ID})
	require.ErrorIs(t, err, ErrInvalid)
	require.Contains(t, err.Error(), "revoked")
}
