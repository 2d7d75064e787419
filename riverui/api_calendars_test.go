package riverui_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

// apiCalendar is a calendar as the API answers it.
type apiCalendar struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Dates       []struct {
		Date string `json:"date"`
		Note string `json:"note"`
	} `json:"dates"`
	DateCount int `json:"date_count"`
	Schedules int `json:"schedules"`
}

// dates are the calendar's dates and notes, "date note" each.
func (c apiCalendar) dates() []string {
	out := []string{}
	for _, d := range c.Dates {
		out = append(out, strings.TrimSpace(d.Date+" "+d.Note))
	}
	return out
}

// TestAPICalendars: holiday calendars are created, listed, read, given
// and relieved of dates, and deleted over the API; bad input is a 400
// naming the field, and writes nothing; a calendar schedules exclude is
// not deleted (409) until they no longer do.
func TestAPICalendars(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)

	// calendar is what GET answers about name.
	calendar := func(t *testing.T, name string) apiCalendar {
		t.Helper()
		var c apiCalendar
		f.getJSON(t, "/api/calendars/"+name, http.StatusOK, &c)
		return c
	}
	// refused requires a 400 naming field, and returns the error.
	refused := func(t *testing.T, method, path, body, field string) string {
		t.Helper()
		status, answer := f.do(t, method, path, body, nil)
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", body, answer)
		var e errorBody
		require.NoError(t, json.Unmarshal([]byte(answer), &e))
		require.Equal(t, field, e.Field, "%s: %s", body, answer)
		return e.Error
	}

	t.Run("Lifecycle", func(t *testing.T) {
		status, body := f.do(t, http.MethodPost, "/api/calendars", `{"name": "us-holidays", "description": "US federal holidays",
			"dates": [{"date": "2098-12-25", "note": "Christmas Day"}, {"date": "2098-11-26"}]}`, nil)
		require.Equal(t, http.StatusCreated, status, body)
		var created apiCalendar
		require.NoError(t, json.Unmarshal([]byte(body), &created))
		require.Equal(t, "us-holidays", created.Name)
		require.Equal(t, "US federal holidays", created.Description)
		require.Equal(t, []string{"2098-11-26", "2098-12-25 Christmas Day"}, created.dates(), "by date")
		require.Equal(t, 2, created.DateCount)
		require.Equal(t, created, calendar(t, "us-holidays"))

		// A date it has takes the new note; the others are added.
		status, body = f.do(t, http.MethodPost, "/api/calendars/us-holidays/dates", `{"dates": [{"date": "2098-11-26", "note": "Thanksgiving"}, {"date": "2098-07-04", "note": "Independence Day"}]}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		var added apiCalendar
		require.NoError(t, json.Unmarshal([]byte(body), &added))
		require.Equal(t, []string{"2098-07-04 Independence Day", "2098-11-26 Thanksgiving", "2098-12-25 Christmas Day"}, added.dates())

		// Removing a date it does not have is no error.
		status, body = f.do(t, http.MethodDelete, "/api/calendars/us-holidays/dates", `{"dates": ["2098-07-04", "2098-01-01"]}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, []string{"2098-11-26 Thanksgiving", "2098-12-25 Christmas Day"}, calendar(t, "us-holidays").dates())

		// The listing counts the dates and leaves them out.
		var list struct {
			Calendars []apiCalendar `json:"calendars"`
		}
		f.getJSON(t, "/api/calendars", http.StatusOK, &list)
		var listed *apiCalendar
		for i := range list.Calendars {
			if list.Calendars[i].Name == "us-holidays" {
				listed = &list.Calendars[i]
			}
		}
		require.NotNil(t, listed)
		require.Empty(t, listed.Dates)
		require.Equal(t, 2, listed.DateCount)
		require.Equal(t, 0, listed.Schedules)

		status, body = f.do(t, http.MethodDelete, "/api/calendars/us-holidays", "", nil)
		require.Equal(t, http.StatusNoContent, status, body)
		var e errorBody
		f.getJSON(t, "/api/calendars/us-holidays", http.StatusNotFound, &e)
		require.Equal(t, `there is no calendar "us-holidays"; GET /api/calendars lists the calendars`, e.Error)
	})

	t.Run("Refused", func(t *testing.T) {
		_, err := f.sc.CreateCalendar(t.Context(), &schedule.CalendarParams{Name: "taken", Dates: []schedule.CalendarDate{{Date: "2098-01-01", Note: "New Year"}}})
		require.NoError(t, err)
		for _, tc := range []struct {
			body, field, contains string
		}{
			{`{"name": "Bad Name"}`, "name", `"Bad Name" is not a calendar name; use 1 to 100 lowercase letters`},
			{`{"description": "no name"}`, "name", "is missing; name the calendar"},
			{`{"name": "taken"}`, "name", `calendar "taken" exists already`},
			{`{"name": "new-one", "dates": [{"date": "2098-01-01"}, {"date": "2098-13-01"}]}`, "dates[1]", `"2098-13-01" is not a date; use YYYY-MM-DD`},
			{`{"name": "new-one", "dates": [{"date": "2098-01-01", "colour": "red"}]}`, "dates[0].colour", "unknown field in a date; the fields are date and note"},
			{`{"name": "new-one", "dates": ["2098-01-01"]}`, "dates[0]", `is not a JSON object such as {"date": "2027-12-24"`},
			{`{"name": "new-one", "dates": "2098-01-01"}`, "dates", "is not an array of dates"},
			{`{"name": "new-one", "schedules": 3}`, "schedules", "is read-only"},
			{`{"name": "new-one", "colour": "red"}`, "colour", "unknown field in a calendar; the fields are name, description, dates"},
		} {
			msg := refused(t, http.MethodPost, "/api/calendars", tc.body, tc.field)
			require.Contains(t, msg, tc.contains, tc.body)
		}
		refused(t, http.MethodPost, "/api/calendars", ``, "")

		for _, tc := range []struct {
			method, body, field, contains string
		}{
			{http.MethodPost, `{"dates": []}`, "dates", "is missing or empty; send the dates to add"},
			{http.MethodPost, `{"dates": [{"date": "2098-02-30"}]}`, "dates[0]", `"2098-02-30" is not a date`},
			{http.MethodPost, `{"dates": [{"date": "2098-02-01", "note": "` + strings.Repeat("x", 201) + `"}]}`, "dates[0].note", "is 201 bytes, the limit is 200"},
			{http.MethodDelete, `{}`, "dates", "is missing or empty; send the dates to remove"},
			{http.MethodDelete, `{"dates": ["tomorrow"]}`, "dates[0]", `"tomorrow" is not a date`},
		} {
			msg := refused(t, tc.method, "/api/calendars/taken/dates", tc.body, tc.field)
			require.Contains(t, msg, tc.contains, tc.body)
		}
		status, body := f.do(t, http.MethodPost, "/api/calendars/nowhere/dates", `{"dates": [{"date": "2098-01-02"}]}`, nil)
		require.Equal(t, http.StatusNotFound, status, body)
		require.Contains(t, body, `there is no calendar \"nowhere\"`)

		// Nothing was written.
		cals, err := f.sc.ListCalendars(t.Context())
		require.NoError(t, err)
		for _, c := range cals {
			require.NotEqual(t, "new-one", c.Name)
		}
		require.Equal(t, []string{"2098-01-01 New Year"}, calendar(t, "taken").dates())
	})

	t.Run("InUse", func(t *testing.T) {
		status, body := f.do(t, http.MethodPost, "/api/calendars", `{"name": "ops-freeze", "dates": [{"date": "2098-12-24"}]}`, nil)
		require.Equal(t, http.StatusCreated, status, body)
		s, err := f.sc.Create(t.Context(), &schedule.Params{Name: "frozen", Workflow: "digest", Cron: "0 9 * * *", Calendars: []string{"ops-freeze"}})
		require.NoError(t, err)
		require.Equal(t, 1, calendar(t, "ops-freeze").Schedules)

		status, body = f.do(t, http.MethodDelete, "/api/calendars/ops-freeze", "", nil)
		require.Equal(t, http.StatusConflict, status, body)
		var e errorBody
		require.NoError(t, json.Unmarshal([]byte(body), &e))
		require.Equal(t, `calendar "ops-freeze" is excluded by 1 schedule (`+s.ID.String()+`); remove it from their "calendars" first (PATCH /api/schedules/{id}), then delete it`, e.Error)
		require.Equal(t, []string{"2098-12-24"}, calendar(t, "ops-freeze").dates(), "nothing deleted")

		status, body = f.do(t, http.MethodPatch, "/api/schedules/"+s.ID.String(), `{"calendars": []}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, `"calendars":[]`)
		status, body = f.do(t, http.MethodDelete, "/api/calendars/ops-freeze", "", nil)
		require.Equal(t, http.StatusNoContent, status, body)
	})
}

// TestAPIScheduleCalendars: a schedule's calendars and on_excluded are
// created, answered (always: [] and skip without calendars), changed and
// refused like its other fields, and its next fire times mark the slots
// its calendars skip or move with "excluded".
func TestAPIScheduleCalendars(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	// 26 December 2098 is a Friday: a Friday schedule's slot that day moves
	// to Monday 29 December, or is skipped.
	_, err := f.sc.CreateCalendar(t.Context(), &schedule.CalendarParams{Name: "holidays", Dates: []schedule.CalendarDate{
		{Date: "2098-12-25", Note: "Christmas Day"}, {Date: "2098-12-26", Note: "Boxing Day"},
	}})
	require.NoError(t, err)
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	// excluded are the next fire times that name an excluded date.
	excluded := func(s apiSchedule) []apiOccurrence {
		var out []apiOccurrence
		for _, o := range s.NextFireTimes {
			if o.Excluded != "" {
				out = append(out, o)
			}
		}
		return out
	}
	fridays := `{"name": "fridays", "workflow": "digest", "cron": "0 9 * * 5", "time_zone": "Europe/Paris", "start_at": "2098-12-01T00:00:00Z"`

	status, body := f.do(t, http.MethodPost, "/api/schedules", fridays+`, "calendars": ["holidays"], "on_excluded": "next-business-day"}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	var s apiSchedule
	require.NoError(t, json.Unmarshal([]byte(body), &s))
	require.Equal(t, []string{"holidays"}, s.Calendars)
	require.Equal(t, "next-business-day", s.OnExcluded)
	moved := excluded(s)
	require.Len(t, moved, 1)
	require.Equal(t, "2098-12-26 (holidays)", moved[0].Excluded)
	require.Equal(t, "2098-12-26T09:00:00", moved[0].Nominal)
	require.True(t, time.Date(2098, 12, 29, 9, 0, 0, 0, paris).Equal(moved[0].At), "moved to Monday: %s", moved[0].At)
	require.False(t, moved[0].Skipped)
	require.Contains(t, moved[0].Note, "runs on the next business day, 2098-12-29")
	stored, err := f.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, []string{"holidays"}, stored.Calendars)
	require.Equal(t, schedule.ExcludedNextBusinessDay, stored.OnExcluded)
	// The schedules that exclude a calendar: the API's calendar= and the
	// calendar page's link to them.
	status, body = f.do(t, http.MethodGet, "/api/schedules?calendar=holidays", "", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, s.ID.String())
	status, body = f.do(t, http.MethodGet, "/api/schedules?calendar=other", "", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.NotContains(t, body, s.ID.String())
	status, body = f.do(t, http.MethodGet, "/calendars/holidays", "", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `href="/schedules?calendar=holidays"`)
	status, body = f.do(t, http.MethodGet, "/schedules?calendar=holidays", "", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, s.ID.String())

	// skip records the slot as skipped, at its own time.
	path := "/api/schedules/" + s.ID.String()
	status, body = f.do(t, http.MethodPatch, path, `{"on_excluded": "skip"}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &s))
	skipped := excluded(s)
	require.Len(t, skipped, 1)
	require.True(t, skipped[0].Skipped)
	require.True(t, time.Date(2098, 12, 26, 9, 0, 0, 0, paris).Equal(skipped[0].At))
	require.Contains(t, skipped[0].Note, "2098-12-26 is excluded by calendar holidays; skipped")

	// A date added to the calendar applies to the schedule's next fire times.
	status, body = f.do(t, http.MethodPost, "/api/calendars/holidays/dates", `{"dates": [{"date": "2098-12-19"}]}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	f.getJSON(t, path, http.StatusOK, &s)
	require.Len(t, excluded(s), 2)
	require.Equal(t, "2098-12-19 (holidays)", excluded(s)[0].Excluded)

	// Sent back as it is, the schedule changes nothing.
	before, err := f.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err)
	status, body = f.do(t, http.MethodGet, path, "", nil)
	require.Equal(t, http.StatusOK, status, body)
	status, body = f.do(t, http.MethodPatch, path, body, nil)
	require.Equal(t, http.StatusOK, status, body)
	after, err := f.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, before.UpdatedAt, after.UpdatedAt)

	// Without calendars: [] and skip, always present.
	status, body = f.do(t, http.MethodPost, "/api/schedules", fridays+`}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	require.Contains(t, body, `"calendars":[],"on_excluded":"skip"`)
	require.NoError(t, json.Unmarshal([]byte(body), &s))
	require.Empty(t, excluded(s))

	// Refused: nothing written.
	for _, tc := range []struct {
		body, field, contains string
	}{
		{fridays + `, "calendars": ["nowhere"]}`, "calendars", `there is no calendar "nowhere"; create it first`},
		{fridays + `, "calendars": ["Bad Name"]}`, "calendars", `"Bad Name" is not a calendar name`},
		{fridays + `, "calendars": "holidays"}`, "calendars", "is not an array of strings"},
		{fridays + `, "calendars": null}`, "calendars", "cannot be null"},
		{fridays + `, "calendars": ["holidays"], "on_excluded": "later"}`, "on_excluded", `"later" is not a policy for excluded dates; use skip or next-business-day`},
		{`{"name": "every", "workflow": "digest", "cron": "@every 1h", "calendars": ["holidays"], "on_excluded": "next-business-day"}`, "on_excluded", "cannot move to the next business day; use skip"},
	} {
		status, body := f.do(t, http.MethodPost, "/api/schedules", tc.body, nil)
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", tc.body, body)
		var e errorBody
		require.NoError(t, json.Unmarshal([]byte(body), &e))
		require.Equal(t, tc.field, e.Field, body)
		require.Contains(t, e.Error, tc.contains, body)
	}
	list, err := f.sc.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, list, 2, "bad input writes nothing")

	status, body = f.do(t, http.MethodPatch, path, `{"calendars": ["holidays", "nowhere"]}`, nil)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, `"field":"calendars"`)
	unchanged, err := f.sc.Get(t.Context(), schedule.ByID(before.ID))
	require.NoError(t, err)
	require.Equal(t, before.UpdatedAt, unchanged.UpdatedAt)
}
