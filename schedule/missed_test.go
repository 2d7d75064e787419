package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

func TestScheduleMissedSlots(t *testing.T) {
	t.Parallel()

	utc := func(hour, minute int) time.Time { return time.Date(2026, 3, 8, hour, minute, 0, 0, time.UTC) }
	at := func(slots []Occurrence) []time.Time {
		out := []time.Time{}
		for _, occ := range slots {
			out = append(out, occ.At.UTC())
		}
		return out
	}
	// paused is an hourly schedule paused at 00:30 UTC.
	paused := func() *Schedule {
		pausedAt := utc(0, 30)
		return &Schedule{Cron: "0 * * * *", TimeZone: "UTC", Paused: true, PausedAt: &pausedAt}
	}
	now := utc(5, 10) // 5 slots missed: 01:00 … 05:00

	t.Run("Policies", func(t *testing.T) {
		t.Parallel()

		for missed, want := range map[MissedPolicy][]time.Time{
			"":             {},
			MissedSkip:     {},
			MissedLatest:   {utc(5, 0)},
			MissedBackfill: {utc(1, 0), utc(2, 0), utc(3, 0), utc(4, 0), utc(5, 0)},
		} {
			slots, err := paused().MissedSlots(missed, now)
			require.NoError(t, err)
			require.Equal(t, want, at(slots), "policy %q", missed)
		}
	})

	t.Run("SlotAtNowIsMissedSlotAtPauseIsNot", func(t *testing.T) {
		t.Parallel()

		s := paused()
		*s.PausedAt = utc(1, 0)
		slots, err := s.MissedSlots(MissedBackfill, utc(3, 0))
		require.NoError(t, err)
		require.Equal(t, []time.Time{utc(2, 0), utc(3, 0)}, at(slots))
	})

	t.Run("BeforeEnd", func(t *testing.T) {
		t.Parallel()

		s := paused()
		end := utc(3, 0)
		s.EndAt = &end
		slots, err := s.MissedSlots(MissedBackfill, now)
		require.NoError(t, err)
		require.Equal(t, []time.Time{utc(1, 0), utc(2, 0)}, at(slots))
		slots, err = s.MissedSlots(MissedLatest, now)
		require.NoError(t, err)
		require.Equal(t, []time.Time{utc(2, 0)}, at(slots))

		*s.EndAt = utc(0, 45) // it ended while paused
		slots, err = s.MissedSlots(MissedLatest, now)
		require.NoError(t, err)
		require.Empty(t, slots)
	})

	t.Run("NotPaused", func(t *testing.T) {
		t.Parallel()

		s := paused()
		s.Paused, s.PausedAt = false, nil
		for _, missed := range []MissedPolicy{MissedSkip, MissedLatest, MissedBackfill} {
			slots, err := s.MissedSlots(missed, now)
			require.NoError(t, err)
			require.Empty(t, slots)
		}
	})

	t.Run("NoneMissed", func(t *testing.T) {
		t.Parallel()

		slots, err := paused().MissedSlots(MissedLatest, utc(0, 59))
		require.NoError(t, err)
		require.Empty(t, slots)
	})

	t.Run("BackfillStopsAtMaxBackfillLatestDoesNot", func(t *testing.T) {
		t.Parallel()

		// Every second, paused for 2000 seconds.
		s := paused()
		s.Cron = "* * * * * *"
		slots, err := s.MissedSlots(MissedBackfill, s.PausedAt.Add(2000*time.Second))
		require.NoError(t, err)
		require.Len(t, slots, MaxBackfill)
		require.Equal(t, s.PausedAt.Add(time.Second), slots[0].At.UTC(), "oldest first")
		slots, err = s.MissedSlots(MissedLatest, s.PausedAt.Add(2000*time.Second))
		require.NoError(t, err)
		require.Equal(t, []time.Time{s.PausedAt.Add(2000 * time.Second)}, at(slots))
	})

	t.Run("DSTNote", func(t *testing.T) {
		t.Parallel()

		// 02:30 does not exist in New York on 8 March 2026: the slot is
		// 03:00 EDT, and says so.
		pausedAt := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)
		s := &Schedule{Cron: "30 2 * * *", TimeZone: "America/New_York", Paused: true, PausedAt: &pausedAt}
		slots, err := s.MissedSlots(MissedLatest, utc(12, 0))
		require.NoError(t, err)
		require.Len(t, slots, 1)
		require.Equal(t, utc(7, 0), slots[0].At.UTC())
		require.True(t, slots[0].Shifted)
		require.NotEmpty(t, slots[0].Note)
	})

	t.Run("BadPolicy", func(t *testing.T) {
		t.Parallel()

		_, err := paused().MissedSlots("all", now)
		require.ErrorIs(t, err, ErrInvalid)
		require.EqualError(t, err, `schedule: invalid ResumeOpts.Missed: "all" is not a policy; use skip, latest or backfill`)
	})
}

// TestResumeRunsMissedSlots checks that Resume runs exactly the slots
// MissedSlots names, by policy, on a clock the test sets.
func TestResumeRunsMissedSlots(t *testing.T) {
	t.Parallel()

	pausedAt := time.Date(2026, 3, 8, 0, 30, 0, 0, time.UTC)
	now := time.Date(2026, 3, 8, 5, 10, 0, 0, time.UTC)

	for _, missed := range []MissedPolicy{MissedSkip, MissedLatest, MissedBackfill} {
		t.Run(string(missed), func(t *testing.T) {
			t.Parallel()

			db := testdb.New(t)
			ctx := ctxT(t, 60*time.Second)
			wf, err := workflow.NewClient(db.Pool, &workflow.Config{Clock: func() time.Time { return now }, Schema: db.Schema})
			require.NoError(t, err)
			sc, err := New(wf, nil)
			require.NoError(t, err)
			s, err := sc.Create(ctx, &Params{Name: "m", Workflow: "tick", Cron: "0 * * * *", Overlap: OverlapAllow, Paused: true})
			require.NoError(t, err)
			_, err = db.Pool.Exec(ctx, "UPDATE schedules SET paused_at = $2 WHERE id = $1", s.ID, pausedAt)
			require.NoError(t, err)
			s, err = sc.Get(ctx, ByID(s.ID))
			require.NoError(t, err)

			due, err := s.MissedSlots(missed, now)
			require.NoError(t, err)
			want := []time.Time{}
			for _, occ := range due {
				want = append(want, occ.At.UTC())
			}

			resumed, err := sc.Resume(ctx, ByID(s.ID), &ResumeOpts{Missed: missed})
			require.NoError(t, err)
			require.False(t, resumed.Paused)
			require.Equal(t, time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC), resumed.NextFireAt.UTC())

			rows, err := db.Pool.Query(ctx, "SELECT fire_at FROM workflow_runs r WHERE schedule_id = $1 AND "+notPreparedRun+" ORDER BY fire_at", s.ID)
			require.NoError(t, err)
			ran := []time.Time{}
			for rows.Next() {
				var at time.Time
				require.NoError(t, rows.Scan(&at))
				ran = append(ran, at.UTC())
			}
			require.NoError(t, rows.Err())
			require.Equal(t, want, ran)
			require.Len(t, ran, map[MissedPolicy]int{MissedSkip: 0, MissedLatest: 1, MissedBackfill: 5}[missed])
		})
	}
}
