package riverui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

// TestDashboardCalendars: the calendars page lists the calendars and
// creates one from a textarea of dates and ranges; a calendar's page shows
// its dates and notes, adds dates, removes one, and deletes the calendar,
// refused with the reason while a schedule excludes it. The schedule forms
// take calendars and on_excluded, and the schedule's page shows them and
// marks the slots they move or skip. Bad input is shown with the form as
// typed, and nothing is written.
func TestDashboardCalendars(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	same := map[string]string{"Sec-Fetch-Site": "same-origin"}

	body := d.page(t, "/calendars", nil)
	requireNav(t, body, "")
	require.Equal(t, []string{"page"}, attrs(body, "nav-calendars", "aria-current"))
	require.Equal(t, []string{"No calendar yet: create one below."}, texts(body, "no-calendars"))

	// Refused: the error beside its field, the form as typed.
	for _, tc := range []struct {
		form     url.Values
		field    string
		contains string
	}{
		{url.Values{"name": {"holidays"}, "dates": {"2098-12-24..2098-12-20 backwards"}}, "dates", `line 1: "2098-12-24..2098-12-20" is not a range of dates, first to last; write one date a line`},
		{url.Values{"name": {"holidays"}, "dates": {"2098-12-24\r\nChristmas"}}, "dates", `line 2: "Christmas" is not a date`},
		{url.Values{"name": {"Holidays!"}, "dates": {"2098-12-24"}}, "name", `"Holidays!" is not a calendar name`},
	} {
		resp := d.send(t, http.MethodPost, "/calendars", tc.form, same)
		require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
		errs := unescapeAll(texts(resp.body, "field-error"))
		require.Len(t, errs, 1, resp.body)
		require.Contains(t, errs[0], tc.contains)
		require.Regexp(t, `name="`+tc.field+`"[^>]* aria-invalid="true"`, resp.body)
		require.Equal(t, tc.form.Get("name"), formFields(t, resp.body, "new-calendar-form").Get("name"))
	}
	cals, err := d.sc.ListCalendars(t.Context())
	require.NoError(t, err)
	require.Empty(t, cals, "nothing written")

	// Created from lines of dates and ranges, each with its note. 26
	// December 2098 is a Friday.
	to := d.post(t, "/calendars", url.Values{"name": {"holidays"}, "description": {"Office closed"},
		"dates": {"# the winter break\r\n2098-12-24..2098-12-26 Christmas <break>\r\n\r\n2098-12-31\tNew Year's Eve\r\n"}})
	require.Equal(t, "/calendars/holidays?notice=calendar-created", to)
	body = d.page(t, to, nil)
	require.Equal(t, []string{"holidays"}, texts(body, "calendar-name"))
	require.Equal(t, []string{"2098-12-24", "2098-12-25", "2098-12-26", "2098-12-31"}, attrs(body, "date-row", "data-date"))
	require.Equal(t, []string{"Christmas <break>", "Christmas <break>", "Christmas <break>", "New Year's Eve"}, unescapeAll(texts(body, "date-note")))
	require.NotContains(t, body, "<break>", "escaped")

	// Dates added; a bad line is refused with the text kept.
	resp := d.send(t, http.MethodPost, "/calendars/holidays/dates", url.Values{"dates": {"2099-01-01 New Year\r\n2099-01-32"}}, same)
	require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
	require.Contains(t, unescapeAll(texts(resp.body, "error"))[0], `line 2: "2099-01-32" is not a date`)
	require.Contains(t, resp.body, "2099-01-01 New Year\r\n2099-01-32</textarea>")
	require.Equal(t, "/calendars/holidays?notice=dates-added", d.post(t, "/calendars/holidays/dates", url.Values{"dates": {"2099-01-01 New Year"}}))
	require.Equal(t, "/calendars/holidays?notice=date-removed", d.post(t, "/calendars/holidays/remove", url.Values{"date": {"2098-12-31"}}))
	body = d.page(t, "/calendars/holidays", nil)
	require.Equal(t, []string{"2098-12-24", "2098-12-25", "2098-12-26", "2099-01-01"}, attrs(body, "date-row", "data-date"))
	resp = d.send(t, http.MethodGet, "/calendars/nowhere", nil, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
	require.Contains(t, unescapeAll(texts(resp.body, "error"))[0], `there is no calendar "nowhere"; the Calendars page lists them`)

	// The new form offers the calendars; a Friday slot moves to Monday.
	form := formFields(t, d.page(t, "/schedules/new", nil), "new-schedule-form")
	require.Equal(t, "skip", form.Get("on_excluded"))
	require.Empty(t, form["calendars"])
	form = with(form, map[string]string{"name": "fridays", "owner": "fridays", "workflow": flow.Name(), "cron": "0 9 * * 5",
		"time_zone": "Europe/Paris", "start_at": "2098-12-01T00:00", "calendars": "holidays", "on_excluded": "next-business-day"})
	to = d.post(t, "/schedules/new", form)
	list, err := d.sc.List(t.Context(), &schedule.ListParams{Owner: "fridays"})
	require.NoError(t, err)
	require.Len(t, list, 1)
	s := list[0]
	require.Equal(t, []string{"holidays"}, s.Calendars)
	require.Equal(t, schedule.ExcludedNextBusinessDay, s.OnExcluded)
	body = d.page(t, to, nil)
	require.Equal(t, []string{"/calendars/holidays"}, attrs(body, "schedule-calendar", "href"))
	require.Contains(t, texts(body, "schedule-on-excluded")[0], "runs at the same wall time on the next business day")
	require.Equal(t, []string{"moved"}, texts(body, "fire-moved"))
	require.Contains(t, strings.Join(unescapeAll(texts(body, "fire-note")), "\n"), "2098-12-26 is excluded by calendar holidays; runs on the next business day, 2098-12-29")

	// The edit form has it checked; skip marks the slot skipped.
	path := "/schedules/" + s.ID.String()
	form = formFields(t, d.page(t, path+"/edit", nil), "edit-form")
	require.Equal(t, []string{"holidays"}, form["calendars"])
	require.Equal(t, path+"?notice=unchanged", d.post(t, path+"/edit", form))
	require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(form, map[string]string{"on_excluded": "skip"})))
	body = d.page(t, path, nil)
	require.Empty(t, texts(body, "fire-moved"))
	require.Equal(t, []string{"skipped"}, texts(body, "fire-skipped"))
	require.Contains(t, strings.Join(unescapeAll(texts(body, "fire-note")), "\n"), "2098-12-26 is excluded by calendar holidays; skipped")

	// In use, the calendar is not deleted, and its page says why.
	resp = d.send(t, http.MethodPost, "/calendars/holidays/delete", url.Values{}, same)
	require.Equal(t, http.StatusConflict, resp.status, resp.body)
	require.Equal(t, []string{`calendar "holidays" is excluded by 1 schedule (` + s.ID.String() + `); remove it from their calendars first (each schedule's Edit page), then delete it`},
		unescapeAll(texts(resp.body, "error")))
	require.Equal(t, []string{"2098-12-24", "2098-12-25", "2098-12-26", "2099-01-01"}, attrs(resp.body, "date-row", "data-date"))
	body = d.page(t, "/calendars", nil)
	require.Equal(t, []string{"4"}, texts(body, "calendar-dates"))
	require.Equal(t, []string{"1"}, texts(body, "calendar-schedules"))

	// Unchecked on the edit form, it is removed from the schedule; then it
	// is deleted.
	form = formFields(t, d.page(t, path+"/edit", nil), "edit-form")
	form.Del("calendars")
	require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", form))
	got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err)
	require.Empty(t, got.Calendars)
	require.Empty(t, attrs(d.page(t, path, nil), "schedule-calendar", "href"))
	require.Equal(t, "/calendars?notice=calendar-deleted", d.post(t, "/calendars/holidays/delete", url.Values{}))
	cals, err = d.sc.ListCalendars(t.Context())
	require.NoError(t, err)
	require.Empty(t, cals)
}
