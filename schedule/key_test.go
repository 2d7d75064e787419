package schedule

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// keyed is a keyed schedule's params, a new value per call.
func keyed(owner, key string) *Params {
	return &Params{
		Name: "nightly report", Owner: owner, Key: key, Workflow: "tick", Cron: "0 2 * * *",
		TimeZone: "Europe/Paris", Input: map[string]any{"to": "ops", "copies": 2},
	}
}

// TestCreateByKey: a second Create of a key with the same spec finds the
// first schedule and writes nothing; another spec is a *KeyConflictError
// naming the fields; two owners may each have the key.
func TestCreateByKey(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)

	first, err := sc.Create(ctx, keyed("acme", "nightly-report"))
	require.NoError(t, err)
	require.False(t, first.Existing)
	require.Equal(t, "nightly-report", first.Key)
	require.Equal(t, "created by application code", first.Origin())

	// The same spec, its input's keys in another order and the schedule
	// paused: the same schedule (a pause is not part of the spec).
	again := keyed("acme", "nightly-report")
	again.Input = map[string]any{"copies": 2, "to": "ops"}
	again.Paused = true
	second, err := sc.Create(ctx, again)
	require.NoError(t, err)
	require.True(t, second.Existing)
	require.Equal(t, first.ID, second.ID)
	require.False(t, second.Paused, "Create of an existing key changes nothing")

	// Another spec: refused, naming the fields, stored → given.
	changed := keyed("acme", "nightly-report")
	changed.Cron, changed.TimeZone, changed.Input = "0 3 * * *", "UTC", map[string]any{"to": "ceo"}
	_, err = sc.Create(ctx, changed)
	require.ErrorIs(t, err, ErrKeyConflict)
	var conflict *KeyConflictError
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, first.ID, conflict.ID)
	require.Equal(t, []FieldDiff{
		{Field: "Input", Stored: `{"copies":2,"to":"ops"}`, Given: `{"to":"ceo"}`},
		{Field: "Cron", Stored: `"0 2 * * *"`, Given: `"0 3 * * *"`},
		{Field: "TimeZone", Stored: `"Europe/Paris"`, Given: `"UTC"`},
	}, conflict.Diffs)
	require.Contains(t, err.Error(), `key "nightly-report" of owner "acme" is schedule `+first.ID.String())
	require.Contains(t, err.Error(), `Cron "0 2 * * *" → "0 3 * * *"`)
	require.Contains(t, err.Error(), `Update with ByKey("acme", "nightly-report") (tributary schedule update nightly-report --owner acme …)`)

	// Another owner has a key of its own.
	other, err := sc.Create(ctx, keyed("globex", "nightly-report"))
	require.NoError(t, err)
	require.False(t, other.Existing)
	require.NotEqual(t, first.ID, other.ID)

	require.Equal(t, 2, countOf(t, db, "SELECT count(*) FROM schedules"))
	require.Equal(t, 1, countOf(t, db, "SELECT count(*) FROM schedules WHERE owner = 'acme' AND cron = '0 2 * * *'"))
	require.Equal(t, 1, countOf(t, db, "SELECT count(DISTINCT scheduled_at) FROM river_job WHERE kind = 'tributary:schedule_fire'"),
		"the existing key seeded no second fire job")
}

// TestCreateByKeyValidation: a bad key is a *ValidationError of field Key,
// and nothing is written.
func TestCreateByKeyValidation(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)

	for key, problem := range map[string]string{
		"   ":                                  `holds ' '`,
		"reports/nightly":                      `holds '/'`,
		"tab\tkey":                             `holds '\t'`,
		strings.Repeat("k", MaxKeyBytes+1):     "is 201 bytes, the limit is 200",
		"\xff\xfe":                             "is not valid UTF-8",
		"01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e": "looks like a schedule id",
	} {
		_, err := sc.Create(ctx, keyed("acme", key))
		var verr *ValidationError
		require.ErrorAs(t, err, &verr, "key %q", key)
		require.Equal(t, "Key", verr.Field, "key %q", key)
		require.Contains(t, verr.Problem, problem, "key %q", key)
	}
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM schedules"))
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM river_job"))

	// The longest key, and punctuation.
	for _, key := range []string{strings.Repeat("k", MaxKeyBytes), "digest:user@42", "réunion-hebdo"} {
		s, err := sc.Create(ctx, keyed("acme", key))
		require.NoError(t, err, "key %q", key)
		got, err := sc.Get(ctx, ByKey("acme", key))
		require.NoError(t, err)
		require.Equal(t, s.ID, got.ID)
	}
}

// TestRefByKey: every call that acts on one schedule finds it by its key as
// by its id.
func TestRefByKey(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)
	s, err := sc.Create(ctx, keyed("acme", "nightly-report"))
	require.NoError(t, err)
	ref := ByKey("acme", "nightly-report")

	got, err := sc.Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, s.ID, got.ID)
	next, err := sc.Next(ctx, ref, 2)
	require.NoError(t, err)
	require.Len(t, next, 2)

	name := "renamed"
	updated, err := sc.Update(ctx, ref, &UpdateParams{Name: &name})
	require.NoError(t, err)
	require.Equal(t, "renamed", updated.Name)
	require.Equal(t, "nightly-report", updated.Key)

	paused, err := sc.Pause(ctx, ref, "holiday")
	require.NoError(t, err)
	require.True(t, paused.Paused)
	resumed, err := sc.Resume(ctx, ref, nil)
	require.NoError(t, err)
	require.False(t, resumed.Paused)

	runID, err := sc.Trigger(ctx, ref, nil)
	require.NoError(t, err)
	res, err := sc.Backfill(ctx, ref, time.Now().Add(-72*time.Hour), time.Now().Add(-24*time.Hour), &BackfillOpts{Overlap: OverlapAllow})
	require.NoError(t, err)
	require.Equal(t, 2, res.Started)
	runs, err := sc.History(ctx, ref, nil)
	require.NoError(t, err)
	require.Len(t, runs, 3)
	require.Contains(t, []uuid.UUID{runs[0].ID, runs[1].ID, runs[2].ID}, runID)

	// The key of another owner, a key that is not there.
	for _, missing := range []Ref{ByKey("globex", "nightly-report"), ByKey("acme", "weekly-report")} {
		_, err := sc.Get(ctx, missing)
		require.ErrorIs(t, err, ErrNotFound)
		require.Contains(t, err.Error(), "no schedule has "+missing.String())
		_, err = sc.Pause(ctx, missing, "")
		require.ErrorIs(t, err, ErrNotFound)
		require.ErrorIs(t, sc.Delete(ctx, missing), ErrNotFound)
	}

	// Refs that name no schedule, or name it twice.
	for name, bad := range map[string]Ref{
		"neither":      {},
		"both":         {ID: s.ID, Key: "nightly-report"},
		"id and owner": {ID: s.ID, Owner: "acme"},
		"bad key":      ByKey("acme", "a/b"),
	} {
		_, err := sc.Get(ctx, bad)
		var verr *ValidationError
		require.ErrorAs(t, err, &verr, name)
		require.Contains(t, verr.Field, "Ref", name)
	}

	// The owner of a keyed schedule is part of its name.
	globex := "globex"
	_, err = sc.Update(ctx, ref, &UpdateParams{Owner: &globex})
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "Owner", verr.Field)
	require.Contains(t, verr.Problem, `its key "nightly-report" is unique per owner`)

	require.NoError(t, sc.Delete(ctx, ref))
	_, err = sc.Get(ctx, ByID(s.ID))
	require.ErrorIs(t, err, ErrNotFound)
	// The key is free again.
	again, err := sc.Create(ctx, keyed("acme", "nightly-report"))
	require.NoError(t, err)
	require.False(t, again.Existing)
}

// TestCreateByKeyRacing: clients creating one key at once, in as many
// transactions, make exactly one schedule; every one of them gets it back.
// (TestCreateByKeyRacingProcesses does it with processes.)
func TestCreateByKeyRacing(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, 60*time.Second)
	const n = 8
	clients := make([]*Client, n)
	for i := range clients {
		clients[i] = insertOnly(t, db)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	got := make([]*Schedule, n)
	errs := make([]error, n)
	for i, sc := range clients {
		wg.Go(func() {
			<-start
			got[i], errs[i] = sc.Create(ctx, keyed("acme", "nightly-report"))
		})
	}
	close(start)
	wg.Wait()
	created := 0
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, got[0].ID, got[i].ID)
		if !got[i].Existing {
			created++
		}
	}
	require.Equal(t, 1, created)
	require.Equal(t, 1, countOf(t, db, "SELECT count(*) FROM schedules"))
}

// TestCreateManyByKey: CreateMany run again makes nothing new; two items
// with one key and a changed spec are refused, and nothing is written.
func TestCreateManyByKey(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)
	users := func() []*Params {
		var out []*Params
		for _, u := range []string{"ada", "bob", "cy"} {
			out = append(out, &Params{Name: "digest", Owner: u, Key: "daily-digest", Workflow: "tick", Cron: "0 8 * * *", TimeZone: "America/New_York"})
		}
		return out
	}
	first, err := sc.CreateMany(ctx, users())
	require.NoError(t, err)
	for _, s := range first {
		require.False(t, s.Existing)
	}
	// Again, with a new user in the middle: the three are found, one made.
	params := users()
	params = append(params[:1], append([]*Params{{Name: "digest", Owner: "dee", Key: "daily-digest", Workflow: "tick", Cron: "0 8 * * *"}}, params[1:]...)...)
	second, err := sc.CreateMany(ctx, params)
	require.NoError(t, err)
	require.Len(t, second, 4)
	require.Equal(t, first[0].ID, second[0].ID)
	require.True(t, second[0].Existing)
	require.False(t, second[1].Existing)
	require.Equal(t, "dee", second[1].Owner)
	require.Equal(t, first[1].ID, second[2].ID)
	require.Equal(t, first[2].ID, second[3].ID)
	require.Equal(t, 4, countOf(t, db, "SELECT count(*) FROM schedules"))

	// A changed spec: the item's *KeyConflictError, nothing written.
	params = users()
	params[2].Cron = "0 9 * * *"
	params = append(params, &Params{Name: "digest", Owner: "eve", Key: "daily-digest", Workflow: "tick", Cron: "0 8 * * *"})
	_, err = sc.CreateMany(ctx, params)
	var item *ItemError
	require.ErrorAs(t, err, &item)
	require.Equal(t, 2, item.Index)
	var conflict *KeyConflictError
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, first[2].ID, conflict.ID)

	// Two items with one key under one owner.
	params = users()
	params = append(params, &Params{Name: "digest 2", Owner: "bob", Key: "daily-digest", Workflow: "tick", Cron: "0 8 * * *"})
	_, err = sc.CreateMany(ctx, params)
	require.ErrorAs(t, err, &item)
	require.Equal(t, 3, item.Index)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "Key", verr.Field)
	require.Contains(t, verr.Problem, "is the key of item 1 too")
	require.Equal(t, 4, countOf(t, db, "SELECT count(*) FROM schedules"), "nothing written")
}

// TestKeysOnTheWorkingPath: a keyed schedule fires like any other, and
// keys cost the firing nothing it can see.
func TestKeysOnTheWorkingPath(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := startClients(t, db, 1)[0]
	ctx := ctxT(t, 60*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "tick", Key: "ticker", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.NoError(t, err)
	waitRuns(t, db, s.ID, 2, 30*time.Second)
	again, err := sc.Create(ctx, &Params{Name: "tick", Key: "ticker", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.NoError(t, err)
	require.True(t, again.Existing)
	require.Equal(t, s.ID, again.ID)
	history, err := sc.History(ctx, ByKey("", "ticker"), &workflow.ListParams{Limit: 1})
	require.NoError(t, err)
	require.Len(t, history, 1)
	_, err = sc.Pause(ctx, ByKey("", "ticker"), "done")
	require.NoError(t, err)
	require.False(t, errors.Is(err, ErrNotFound))
}
