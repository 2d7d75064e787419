package schedule

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestCalendars: a holiday calendar is created, read, changed and
// deleted; a schedule that excludes it skips or moves its slots on the
// calendar's dates, in the ledger; a change to the calendar moves the
// pending slot of the schedules that exclude it; a calendar in use is not
// deleted.
func TestCalendars(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 60*time.Second)

	cal, err := sc.CreateCalendar(ctx, &CalendarParams{Name: "us-holidays", Description: "US federal holidays",
		Dates: []CalendarDate{{Date: "2027-12-24", Note: "Christmas Day (observed)"}, {Date: "2027-12-31", Note: "New Year's Day (observed)"}}})
	require.NoError(t, err)
	require.Equal(t, []CalendarDate{{Date: "2027-12-24", Note: "Christmas Day (observed)"}, {Date: "2027-12-31", Note: "New Year's Day (observed)"}}, cal.Dates)
	_, err = sc.CreateCalendar(ctx, &CalendarParams{Name: "us-holidays"})
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "Name", verr.Field)
	_, err = sc.CreateCalendar(ctx, &CalendarParams{Name: "US Holidays"})
	require.ErrorAs(t, err, &verr)
	_, err = sc.CreateCalendar(ctx, &CalendarParams{Name: "bad-date", Dates: []CalendarDate{{Date: "12/25/2027"}}})
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "Dates[0]", verr.Field)
	_, err = sc.GetCalendar(ctx, "bad-date")
	require.ErrorIs(t, err, ErrCalendarNotFound, "nothing written")
	ranged, err := sc.CreateCalendar(ctx, &CalendarParams{Name: "winter-break", Dates: []CalendarDate{{Date: "2027-12-27..2027-12-29", Note: "winter break"}}})
	require.NoError(t, err)
	require.Equal(t, []CalendarDate{{Date: "2027-12-27", Note: "winter break"}, {Date: "2027-12-28", Note: "winter break"}, {Date: "2027-12-29", Note: "winter break"}}, ranged.Dates)
	ranged, err = sc.RemoveCalendarDates(ctx, "winter-break", []string{"2027-12-28..2027-12-29"})
	require.NoError(t, err)
	require.Len(t, ranged.Dates, 1)
	_, err = sc.AddCalendarDates(ctx, "winter-break", []CalendarDate{{Date: "2027-12-29..2027-12-27"}})
	require.ErrorAs(t, err, &verr)
	require.NoError(t, sc.DeleteCalendar(ctx, "winter-break"))
	_, err = sc.AddCalendarDates(ctx, "no-such", []CalendarDate{{Date: "2027-01-01"}})
	require.ErrorIs(t, err, ErrCalendarNotFound)
	_, err = sc.RemoveCalendarDates(ctx, "no-such", []string{"2027-01-01"})
	require.ErrorIs(t, err, ErrCalendarNotFound)

	// The last business day of each month at 18:00 in New York, skipping
	// the calendar's dates: December 2027's (the 31st) is skipped.
	s, err := sc.Create(ctx, &Params{Name: "month end", Workflow: "tick", Cron: "0 18 LW * *", TimeZone: "America/New_York",
		Overlap: OverlapAllow, Calendars: []string{"us-holidays"}})
	require.NoError(t, err)
	require.Equal(t, []string{"us-holidays"}, s.Calendars)
	require.Equal(t, ExcludedSkip, s.OnExcluded)
	res, err := sc.Backfill(ctx, ByID(s.ID), time.Date(2027, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 2, 1, 0, 0, 0, 0, time.UTC), nil)
	require.NoError(t, err)
	require.Equal(t, 3, res.Slots)
	history, err := sc.History(ctx, ByID(s.ID), nil)
	require.NoError(t, err)
	require.Len(t, history, 3)
	require.Equal(t, "2027-12-31T23:00:00Z", history[1].FireAt.UTC().Format(time.RFC3339))
	require.Equal(t, SkipReasonExcluded+": 2027-12-31 (us-holidays)", history[1].SkipReason)
	require.Equal(t, "2027-12-31 is excluded by calendar us-holidays; skipped", metaField(t, history[1].Metadata, "schedule_dst_note"))

	// Moved to the next business day instead.
	daily, err := sc.Create(ctx, &Params{Name: "daily", Workflow: "tick", Cron: "0 9 * * 1-5", TimeZone: "America/New_York",
		Overlap: OverlapAllow, Calendars: []string{"us-holidays"}, OnExcluded: ExcludedNextBusinessDay})
	require.NoError(t, err)
	next, err := sc.Next(ctx, ByID(daily.ID), 1)
	require.NoError(t, err)
	require.Len(t, next, 1)
	// Which schedules exclude a calendar: both, newest first; none for
	// another calendar.
	excluding, err := sc.List(ctx, &ListParams{Calendar: "us-holidays"})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{daily.ID, s.ID}, []uuid.UUID{excluding[0].ID, excluding[1].ID})
	require.Len(t, excluding, 2)
	excluding, err = sc.List(ctx, &ListParams{Calendar: "no-such"})
	require.NoError(t, err)
	require.Empty(t, excluding)
	// And whose name holds a text, in any case.
	excluding, err = sc.List(ctx, &ListParams{Calendar: "us-holidays", Name: "DAIL"})
	require.NoError(t, err)
	require.Len(t, excluding, 1)
	require.Equal(t, daily.ID, excluding[0].ID)
	named, err := sc.Count(ctx, &ListParams{Name: "aily"})
	require.NoError(t, err)
	require.Equal(t, 1, named)
	slots, err := sc.Backfill(ctx, ByID(daily.ID), time.Date(2027, 12, 23, 0, 0, 0, 0, time.UTC), time.Date(2027, 12, 28, 0, 0, 0, 0, time.UTC), nil)
	require.NoError(t, err)
	require.Equal(t, 2, slots.Slots) // the 23rd, and the 24th moved to Monday the 27th
	history, err = sc.History(ctx, ByID(daily.ID), nil)
	require.NoError(t, err)
	require.Equal(t, "2027-12-27T14:00:00Z", history[0].FireAt.UTC().Format(time.RFC3339))
	require.Contains(t, metaField(t, history[0].Metadata, "schedule_dst_note"), "2027-12-24 is excluded by calendar us-holidays; runs on the next business day, 2027-12-27")

	// A change to the calendar moves the pending slot of a schedule that
	// excludes it: its date excluded, the pending slot moves past it (to
	// the next day's slot, which comes before the next business day's).
	now := time.Now().In(mustZone(t, "America/New_York"))
	soon, err := sc.Create(ctx, &Params{Name: "soon", Workflow: "tick", Cron: "0 9 * * *", TimeZone: "America/New_York",
		Overlap: OverlapAllow, Calendars: []string{"us-holidays"}, OnExcluded: ExcludedNextBusinessDay})
	require.NoError(t, err)
	pending := soon.NextFireAt.In(mustZone(t, "America/New_York"))
	_, err = sc.AddCalendarDates(ctx, "us-holidays", []CalendarDate{{Date: pending.Format(time.DateOnly), Note: "a day off"}})
	require.NoError(t, err)
	soon, err = sc.Get(ctx, ByID(soon.ID))
	require.NoError(t, err)
	require.Equal(t, pending.AddDate(0, 0, 1).Format(time.DateOnly), soon.NextFireAt.In(mustZone(t, "America/New_York")).Format(time.DateOnly),
		"now %s: the pending slot moved past the date added", now)
	cal, err = sc.RemoveCalendarDates(ctx, "us-holidays", []string{pending.Format(time.DateOnly)})
	require.NoError(t, err)
	require.Len(t, cal.Dates, 2)
	soon, err = sc.Get(ctx, ByID(soon.ID))
	require.NoError(t, err)
	require.True(t, soon.NextFireAt.Equal(pending), "the date removed runs again")

	// Unknown calendars and bad policies are refused; a calendar in use is
	// not deleted.
	_, err = sc.Create(ctx, &Params{Name: "x", Workflow: "tick", Cron: "@daily", Calendars: []string{"no-such"}})
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "Calendars", verr.Field)
	_, err = sc.Create(ctx, &Params{Name: "x", Workflow: "tick", Cron: "@daily", OnExcluded: "later"})
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "OnExcluded", verr.Field)
	err = sc.DeleteCalendar(ctx, "us-holidays")
	var inUse *CalendarInUseError
	require.ErrorAs(t, err, &inUse)
	require.Equal(t, 3, inUse.Schedules)
	list, err := sc.ListCalendars(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, 2, list[0].DateCount)
	require.Equal(t, 3, list[0].Schedules)

	none := []string{}
	for _, id := range []Ref{ByID(s.ID), ByID(daily.ID), ByID(soon.ID)} {
		_, err = sc.Update(ctx, id, &UpdateParams{Calendars: &none})
		require.NoError(t, err)
	}
	require.NoError(t, sc.DeleteCalendar(ctx, "us-holidays"))
	require.ErrorIs(t, sc.DeleteCalendar(ctx, "us-holidays"), ErrCalendarNotFound)
}
