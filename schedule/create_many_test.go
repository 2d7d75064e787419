package schedule

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// manyClock is the fixed clock of TestCreateMany's insert-only client: the
// day before New York springs forward, so that "30 2 * * *" there meets a
// gap.
var manyClock = time.Date(2030, 3, 9, 12, 34, 56, 789_000_000, time.UTC)

var (
	manyCrons = []string{"0 8 * * *", "30 2 * * *", "*/15 * * * *", "0 0 1 1 *", "@hourly", "0 9 * * 1-5", "* * * * * *"}
	manyZones = []string{"", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Europe/Berlin"}
)

// manyParams are n schedules of every cron of manyCrons in every zone of
// manyZones, some paused, some starting later, some with a run policy.
func manyParams(n int) []*Params {
	out := make([]*Params, n)
	for i := range n {
		p := &Params{
			Name:     fmt.Sprintf("user %04d", i),
			Owner:    fmt.Sprintf("tenant-%d", i%3),
			Workflow: "tick",
			Input:    map[string]int{"user": i},
			Cron:     manyCrons[i%len(manyCrons)],
			TimeZone: manyZones[(i/len(manyCrons))%len(manyZones)],
		}
		switch {
		case i%97 == 0:
			p.Paused, p.PauseNote = true, "onboarding"
		case i%13 == 0:
			p.StartAt = manyClock.Add(time.Duration(i) * time.Hour)
		case i%11 == 0:
			p.Overlap, p.CatchUp, p.CatchUpWindow = OverlapAllow, CatchUpLatest, time.Hour
			p.Queue, p.Priority, p.MaxAttempts, p.Timeout = "mail", 2, 3, time.Minute
		}
		out[i] = p
	}
	return out
}

func TestCreateMany(t *testing.T) {
	t.Parallel()

	type testBundle struct {
		ctx context.Context
		db  *testdb.DB
		sc  *Client
	}

	// setup gives an insert-only client whose clock is manyClock.
	setup := func(t *testing.T) *testBundle {
		t.Helper()
		db := testdb.New(t)
		wf, err := workflow.NewClient(db.Pool, &workflow.Config{
			Clock:     func() time.Time { return manyClock },
			Schema:    db.Schema,
			Workflows: []workflow.Registrable{tick, stuck},
		})
		require.NoError(t, err)
		sc, err := New(wf, nil)
		require.NoError(t, err)
		return &testBundle{ctx: ctxT(t, 60*time.Second), db: db, sc: sc}
	}

	// counts are the schedules and the fire jobs in bundle's schema.
	counts := func(t *testing.T, bundle *testBundle) (schedules, jobs int) {
		t.Helper()
		require.NoError(t, bundle.db.Pool.QueryRow(bundle.ctx, `SELECT (SELECT count(*) FROM schedules),
			(SELECT count(*) FROM river_job WHERE kind = 'tributary:schedule_fire')`).Scan(&schedules, &jobs))
		return schedules, jobs
	}

	t.Run("CreatesWhatCreateWouldInOrder", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)
		const n = 2000
		params := manyParams(n)
		created, err := bundle.sc.CreateMany(bundle.ctx, params)
		require.NoError(t, err)
		require.Len(t, created, n)

		// What CreateTx makes of each item, in a transaction rolled back.
		want := make([]*Schedule, n)
		tx, err := bundle.db.Pool.Begin(bundle.ctx)
		require.NoError(t, err)
		for i, p := range params {
			want[i], err = bundle.sc.CreateTx(bundle.ctx, tx, p)
			require.NoError(t, err)
		}
		require.NoError(t, tx.Rollback(bundle.ctx))

		ids := make([]uuid.UUID, n)
		instants := map[time.Time]bool{}
		for i, s := range created {
			ids[i] = s.ID
			require.Equal(t, params[i].Name, s.Name, "created[%d] is params[%d]", i, i)
			require.Equal(t, params[i].Paused, s.PausedAt != nil, "created[%d]", i)
			if s.NextFireAt != nil {
				instants[s.NextFireAt.UTC()] = true
			}
			got, exp := *s, *want[i]
			got.ID, got.CreatedAt, got.UpdatedAt, got.PausedAt = uuid.UUID{}, time.Time{}, time.Time{}, nil
			exp.ID, exp.CreatedAt, exp.UpdatedAt, exp.PausedAt = uuid.UUID{}, time.Time{}, time.Time{}, nil
			require.Equal(t, exp, got, "created[%d] is what Create would make of params[%d]", i, i)
		}
		require.Less(t, len(instants), n/5, "schedules share first slots")

		var stored int
		require.NoError(t, bundle.db.Pool.QueryRow(bundle.ctx, "SELECT count(*) FROM schedules WHERE id = ANY($1)", ids).Scan(&stored))
		require.Equal(t, n, stored)
		got, err := bundle.sc.Get(bundle.ctx, ByID(created[1234].ID))
		require.NoError(t, err)
		require.Equal(t, created[1234], got)

		// One fire job per distinct first slot, at that slot.
		rows, err := bundle.db.Pool.Query(bundle.ctx, "SELECT scheduled_at FROM river_job WHERE kind = 'tributary:schedule_fire'")
		require.NoError(t, err)
		jobs, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
		require.NoError(t, err)
		require.Len(t, jobs, len(instants))
		for _, at := range jobs {
			require.True(t, instants[at.UTC()], "a fire job at %s, which is no schedule's first slot", at)
		}
	})

	t.Run("OverOneStatement", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)
		n := createManyChunk + 7
		created, err := bundle.sc.CreateMany(bundle.ctx, manyParams(n))
		require.NoError(t, err)
		require.Len(t, created, n)
		for i, s := range created {
			require.Equal(t, fmt.Sprintf("user %04d", i), s.Name, "created[%d]", i)
		}
		schedules, _ := counts(t, bundle)
		require.Equal(t, n, schedules)
	})

	t.Run("Empty", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)
		for _, params := range [][]*Params{nil, {}} {
			created, err := bundle.sc.CreateMany(bundle.ctx, params)
			require.NoError(t, err)
			require.NotNil(t, created)
			require.Empty(t, created)
		}
	})

	t.Run("TooMany", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)
		_, err := bundle.sc.CreateMany(bundle.ctx, make([]*Params, MaxCreateMany+1))
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, fmt.Sprintf("holds %d schedules, the limit is MaxCreateMany (%d) per call", MaxCreateMany+1, MaxCreateMany))
		var item *ItemError
		require.False(t, errors.As(err, &item), "the call is refused, not an item")
	})

	t.Run("InvalidItemWritesNothing", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)
		const bad = 500
		for name, tt := range map[string]struct {
			mutate func(params []*Params)
			as     any
			says   string
		}{
			"nil item": {
				mutate: func(params []*Params) { params[bad] = nil },
				as:     new(*ValidationError),
				says:   `schedule: params[500] (""): invalid Params: is nil`,
			},
			"bad zone": {
				mutate: func(params []*Params) { params[bad].TimeZone = "Mars/Olympus" },
				as:     new(*ZoneError),
				says:   `schedule: params[500] ("user 0500"): bad time zone "Mars/Olympus"`,
			},
			"bad cron": {
				mutate: func(params []*Params) { params[bad].Cron = "61 * * * *" },
				as:     new(*CronError),
				says:   `schedule: params[500] ("user 0500"): bad cron expression "61 * * * *"`,
			},
			"unknown workflow": {
				mutate: func(params []*Params) { params[bad].Workflow = "nope" },
				as:     new(*ValidationError),
				says:   `schedule: params[500] ("user 0500"): invalid Workflow: "nope" is not a workflow type of this client`,
			},
			"no occurrence in range": {
				mutate: func(params []*Params) { params[bad].Cron, params[bad].EndAt = "0 0 1 1 *", manyClock.Add(time.Hour) },
				as:     new(*ValidationError),
				says:   `schedule: params[500] ("user 0500"): invalid Cron: "0 0 1 1 *" has no occurrence`,
			},
		} {
			params := manyParams(1000)
			tt.mutate(params)
			params[bad+100].Cron = "62 * * * *" // a later bad item is not the one reported
			_, err := bundle.sc.CreateMany(bundle.ctx, params)
			require.ErrorIs(t, err, ErrInvalid, name)
			require.ErrorContains(t, err, tt.says, name)
			var item *ItemError
			require.ErrorAs(t, err, &item, name)
			require.Equal(t, bad, item.Index, name)
			require.ErrorAs(t, err, tt.as, name)

			tx, err := bundle.db.Pool.Begin(bundle.ctx)
			require.NoError(t, err)
			_, err = bundle.sc.CreateManyTx(bundle.ctx, tx, params)
			require.ErrorIs(t, err, ErrInvalid, name)
			require.NoError(t, tx.Commit(bundle.ctx), "the transaction is still usable: nothing was sent")
		}
		schedules, jobs := counts(t, bundle)
		require.Zero(t, schedules)
		require.Zero(t, jobs)
	})

	t.Run("Grants", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)
		ticks, err := bundle.sc.CreateGrant(bundle.ctx, &GrantParams{Subject: "tenant-1", Scopes: []string{ScopeExecute("tick")}})
		require.NoError(t, err)
		all, err := bundle.sc.CreateGrant(bundle.ctx, &GrantParams{Subject: "tenant-2", Scopes: []string{"*"}})
		require.NoError(t, err)
		withGrants := func() []*Params {
			params := manyParams(600)
			for i, p := range params {
				switch i % 3 {
				case 1:
					p.GrantID = &ticks.ID
				case 2:
					p.GrantID = &all.ID
				}
			}
			return params
		}

		created, err := bundle.sc.CreateMany(bundle.ctx, withGrants())
		require.NoError(t, err)
		require.Nil(t, created[0].GrantID)
		require.Equal(t, ticks.ID, *created[1].GrantID)
		require.Equal(t, all.ID, *created[2].GrantID)
		schedules, jobs := counts(t, bundle)
		require.Equal(t, 600, schedules)

		check := func(name string, params []*Params, index int, says string) {
			t.Helper()
			_, err := bundle.sc.CreateMany(bundle.ctx, params)
			require.ErrorIs(t, err, ErrInvalid, name)
			var item *ItemError
			require.ErrorAs(t, err, &item, name)
			require.Equal(t, index, item.Index, name)
			var invalid *ValidationError
			require.ErrorAs(t, err, &invalid, name)
			require.Equal(t, "GrantID", invalid.Field, name)
			require.ErrorContains(t, err, says, name)
			s, j := counts(t, bundle)
			require.Equal(t, schedules, s, "%s: nothing written", name)
			require.Equal(t, jobs, j, "%s: nothing written", name)
		}

		params := withGrants()
		params[4].Workflow = "stuck" // under ticks, which does not cover stuck
		check("out of scope", params, 4, `params[4] ("user 0004"): invalid GrantID: grant `+ticks.ID.String()+` (subject "tenant-1") would skip every slot ("grant out of scope")`)

		params = withGrants()
		missing := uuid.New()
		params[300].GrantID = &missing
		check("unknown", params, 300, `params[300] ("user 0300"): invalid GrantID: `+missing.String()+`: schedule: execution grant not found; create the grant first`)

		_, err = bundle.sc.RevokeGrant(bundle.ctx, all.ID, "tenant left")
		require.NoError(t, err)
		check("revoked", withGrants(), 2, `params[2] ("user 0002"): invalid GrantID: grant `+all.ID.String()+` (subject "tenant-2") would skip every slot ("grant revoked")`)
	})

	t.Run("TxRollsBackWithTheCaller", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)
		for _, commit := range []bool{false, true} {
			err := pgx.BeginFunc(bundle.ctx, bundle.db.Pool, func(tx pgx.Tx) error {
				created, err := bundle.sc.CreateManyTx(bundle.ctx, tx, manyParams(100))
				require.NoError(t, err)
				require.Len(t, created, 100)
				if !commit {
					return errors.New("roll back")
				}
				return nil
			})
			schedules, jobs := counts(t, bundle)
			if !commit {
				require.Error(t, err)
				require.Zero(t, schedules)
				require.Zero(t, jobs)
				continue
			}
			require.NoError(t, err)
			require.Equal(t, 100, schedules)
			require.NotZero(t, jobs)
		}
	})

	t.Run("Fires", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		sc := startClients(t, db, 1)[0]
		ctx := ctxT(t, 60*time.Second)
		var params []*Params
		for i := range 8 {
			p := &Params{Name: fmt.Sprintf("s%d", i), Workflow: "tick", Cron: "0 0 1 1 *"}
			if i%3 == 0 {
				p.Cron, p.Overlap = "* * * * * *", OverlapAllow
			}
			params = append(params, p)
		}
		created, err := sc.CreateMany(ctx, params)
		require.NoError(t, err)
		var everySecond []*Schedule
		for _, s := range created {
			if s.Cron == "* * * * * *" {
				everySecond = append(everySecond, s)
			}
		}
		require.Len(t, everySecond, 3)
		require.Equal(t, everySecond[0].NextFireAt, everySecond[2].NextFireAt, "one clock reading for the batch: the same first slot")
		for _, s := range everySecond {
			waitRuns(t, db, s.ID, 3, 30*time.Second)
		}
		rows, err := db.Pool.Query(ctx, "SELECT count(*) FROM workflow_runs WHERE schedule_id = $1 AND fire_at = $2", everySecond[1].ID, *everySecond[1].NextFireAt)
		require.NoError(t, err)
		first, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[int])
		require.NoError(t, err)
		require.Equal(t, 1, first, "the first slot CreateMany gave it ran, once")
	})
}
