package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSimulate(t *testing.T) {
	t.Parallel()

	year := &SimulateOpts{From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}

	t.Run("DailyAcrossDSTInBothHemispheres", func(t *testing.T) {
		t.Parallel()

		for _, zone := range []string{"America/New_York", "Europe/Berlin", "Australia/Sydney", "Pacific/Auckland"} {
			slots, err := Simulate(&Params{Cron: "30 2 * * *", TimeZone: zone}, year)
			require.NoError(t, err)
			require.Len(t, slots, 365, zone)
			days := map[string]int{}
			moved := 0
			loc, _ := time.LoadLocation(zone)
			for _, s := range slots {
				days[s.At.In(loc).Format(time.DateOnly)]++
				require.Empty(t, s.Skipped)
				if s.Note != "" {
					moved++
				}
			}
			for day, n := range days {
				require.Equal(t, 1, n, "%s %s", zone, day)
			}
			require.GreaterOrEqual(t, moved, 1, "%s: the spring-forward day's slot is moved and explained", zone)
		}
	})

	t.Run("HourlyFollowsRealHours", func(t *testing.T) {
		t.Parallel()

		slots, err := Simulate(&Params{Cron: "0 * * * *", TimeZone: "America/New_York"}, year)
		require.NoError(t, err)
		// From is exclusive: every real hour of the year but its first, so
		// 23 on the spring-forward day and 25 on the fall-back day.
		require.Len(t, slots, 365*24-1)
	})

	t.Run("LeapDay", func(t *testing.T) {
		t.Parallel()

		slots, err := Simulate(&Params{Cron: "0 0 29 2 *"}, &SimulateOpts{From: year.From, To: time.Date(2033, 1, 1, 0, 0, 0, 0, time.UTC)})
		require.NoError(t, err)
		require.Len(t, slots, 2) // 2028 and 2032
		require.Equal(t, 2028, slots[0].At.Year())
	})

	t.Run("DowntimeNeverMassFires", func(t *testing.T) {
		t.Parallel()

		from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		opts := &SimulateOpts{From: from, To: from.Add(48 * time.Hour), Down: []Window{{From: from.Add(time.Hour), To: from.Add(25*time.Hour + 30*time.Minute)}}}
		slots, err := Simulate(&Params{Cron: "*/5 * * * *"}, opts)
		require.NoError(t, err)
		missed := 0
		for _, s := range slots {
			if s.Skipped != "" {
				missed++
			}
		}
		require.Equal(t, 1, missed, "the overdue slot is recorded, the chain jumps past the outage")

		wide := &Params{Cron: "0 * * * *", CatchUpWindow: 48 * time.Hour}
		slots, err = Simulate(wide, opts)
		require.NoError(t, err)
		require.Len(t, slots, 47, "with a wide catch-up window each missed slot runs once")

		latest := &Params{Cron: "0 * * * *", CatchUp: CatchUpLatest}
		slots, err = Simulate(latest, opts)
		require.NoError(t, err)
		ranLate := 0
		for _, s := range slots {
			if s.Skipped == "" && s.FiredAt.After(s.At) {
				ranLate++
			}
		}
		require.Equal(t, 1, ranLate, "only the latest missed slot runs")
	})

	t.Run("PauseAndResume", func(t *testing.T) {
		t.Parallel()

		from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		pause := []Window{{From: from.Add(90 * time.Minute), To: from.Add(5*time.Hour + 30*time.Minute)}}
		// 01:00 fires; 02:00 to 05:00 are missed while paused; 06:00 to
		// 23:00 fire after the resume at 05:30.
		for missed, want := range map[MissedPolicy]int{MissedSkip: 19, MissedLatest: 20, MissedBackfill: 23} {
			slots, err := Simulate(&Params{Cron: "0 * * * *"}, &SimulateOpts{From: from, To: from.Add(24 * time.Hour), Paused: pause, Missed: missed})
			require.NoError(t, err)
			require.Len(t, slots, want, missed)
		}
	})
}

func BenchmarkSimulateYearHourly(b *testing.B) {
	opts := &SimulateOpts{From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
	for b.Loop() {
		if _, err := Simulate(&Params{Cron: "0 * * * *", TimeZone: "Europe/London"}, opts); err != nil {
			b.Fatal(err)
		}
	}
}
