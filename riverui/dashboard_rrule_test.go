package riverui_test

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

// nextFires are the times the schedule page's next fire times list, as
// their datetime attributes give them.
func nextFires(t *testing.T, body string) []time.Time {
	t.Helper()

	list := regexp.MustCompile(`(?s)<ol [^>]*data-testid="next-fires"[^>]*>(.*?)</ol>`).FindStringSubmatch(body)
	require.NotNil(t, list, "no next fire times")
	var out []time.Time
	for _, m := range regexp.MustCompile(`<time datetime="([^"]+)"`).FindAllStringSubmatch(list[1], -1) {
		at, err := time.Parse(time.RFC3339, m[1])
		require.NoError(t, err)
		out = append(out, at)
	}
	return out
}

// TestDashboardScheduleRRule: the new form offers an RRULE in place of a
// cron expression and creates a schedule of it, whose page and the
// schedules list show the rule on its two lines and whose next fire times
// are the rule's; the edit form turns it into a cron schedule and back.
// Bad input is shown beside the field, and nothing is written.
func TestDashboardScheduleRRule(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	ny := mustZone(t, "America/New_York")
	// newForm is the new form as a browser posts it, with an RRULE chosen;
	// the textarea sends its lines with CRLF.
	newForm := func(name, rule string) url.Values {
		return url.Values{
			"name": {name}, "workflow": {flow.Name()}, "owner": {name}, "rule": {"rrule"}, "cron": {""}, "rrule": {rule},
			"time_zone": {"America/New_York"}, "overlap": {"skip"}, "catch_up": {"window"}, "dst_gap": {"jump"}, "dst_fold": {"first"},
		}
	}
	// count is how many schedules owner has.
	count := func(t *testing.T, owner string) int {
		t.Helper()
		list, err := d.sc.List(t.Context(), &schedule.ListParams{Owner: owner})
		require.NoError(t, err)
		return len(list)
	}

	t.Run("NewForm", func(t *testing.T) {
		body := d.page(t, "/schedules/new", nil)
		require.Contains(t, body, `<input type="radio" name="rule" value="cron" checked>`)
		require.Contains(t, body, `<input type="radio" name="rule" value="rrule">`)
		require.Contains(t, body, `placeholder="DTSTART:20270105T090000&#10;RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU"`)
		require.Contains(t, body, "RRULE (a DTSTART line, the first occurrence's date and time in the time zone below, then the RRULE line)")
	})

	t.Run("CreateShowEdit", func(t *testing.T) {
		to := d.post(t, "/schedules/new", newForm("fortnightly", "DTSTART:20270105T090000\r\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU\r\n"))
		list, err := d.sc.List(t.Context(), &schedule.ListParams{Owner: "fortnightly"})
		require.NoError(t, err)
		require.Len(t, list, 1)
		s := list[0]
		require.Equal(t, fortnightly, s.RRule, "its lines with LF, as stored")
		require.Empty(t, s.Cron)
		require.Equal(t, "dashboard", s.CreatedBy)
		path := "/schedules/" + s.ID.String()
		require.Equal(t, path+"?notice=created", to)

		body := d.page(t, to, nil)
		require.Equal(t, []string{fortnightly}, texts(body, "schedule-rrule"), "the rule on its two lines")
		require.Contains(t, body, "<dt>RRULE</dt>")
		require.NotContains(t, body, "<dt>Cron</dt>")
		fires := nextFires(t, body)
		require.Len(t, fires, 10)
		for i, at := range fires {
			want := time.Date(2027, 1, 5+14*i, 9, 0, 0, 0, ny)
			require.True(t, want.Equal(at), "fire %d is %s, not %s", i, at, want)
		}

		listed := d.page(t, "/schedules?owner=fortnightly", nil)
		require.Contains(t, listed, "<th>Cron or RRULE</th>")
		require.Equal(t, []string{fortnightly}, texts(listed, "schedule-rrule"))

		// The edit form has the rule chosen and filled in; submitted as it
		// is, it changes nothing.
		form := formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		require.Equal(t, "rrule", form.Get("rule"))
		require.Equal(t, fortnightly, form.Get("rrule"))
		require.Empty(t, form.Get("cron"))
		require.Equal(t, path+"?notice=unchanged", d.post(t, path+"/edit", form))

		// A cron expression chosen replaces the rule.
		require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(form, map[string]string{"rule": "cron", "cron": "0 9 * * 1"})))
		got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Equal(t, "0 9 * * 1", got.Cron)
		require.Empty(t, got.RRule)
		body = d.page(t, path, nil)
		require.Empty(t, texts(body, "schedule-rrule"))
		require.Contains(t, body, "<code>0 9 * * 1</code> — at 09:00 on Monday")

		// And an RRULE the expression, here on one line as the CLI takes it.
		form = formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		require.Equal(t, "cron", form.Get("rule"))
		oneLine := "DTSTART:20270105T090000;RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU"
		require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(form, map[string]string{"rule": "rrule", "rrule": oneLine})))
		got, err = d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Equal(t, fortnightly, got.RRule)
		require.Empty(t, got.Cron)
		require.True(t, time.Date(2027, 1, 5, 9, 0, 0, 0, ny).Equal(*got.NextFireAt), "re-timed by the rule")

		// A bad rule is shown beside its field, as typed, and changes
		// nothing.
		form = formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		resp := d.send(t, http.MethodPost, path+"/edit", with(form, map[string]string{"rrule": "DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;BYDAY=XX"}), map[string]string{"Sec-Fetch-Site": "same-origin"})
		require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
		require.Contains(t, resp.body, `aria-invalid="true">DTSTART:20270105T090000`+"\n"+`RRULE:FREQ=WEEKLY;BYDAY=XX</textarea><span class="field-error" data-testid="field-error">`)
		errs := unescapeAll(texts(resp.body, "field-error"))
		require.Len(t, errs, 1)
		require.Contains(t, errs[0], "BYDAY=XX")
		after, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Equal(t, got.UpdatedAt, after.UpdatedAt, "nothing written")
	})

	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			form     url.Values
			field    string // the field shown invalid
			contains string
		}{
			{"BadRule", newForm("refused", "DTSTART:20270105T090000\nRRULE:FREQ=FORTNIGHTLY"), "rrule", "FREQ=FORTNIGHTLY: FREQ must be"},
			{"EmptyRule", newForm("refused", ""), "rrule", "the RRULE is empty"},
			{"NoSlotLeft", newForm("refused", "DTSTART:20200105T090000\nRRULE:FREQ=DAILY;COUNT=2"), "rrule", "has no occurrence"},
			{"BothWithoutChoice", with(newForm("refused", fortnightly), map[string]string{"rule": "", "cron": "@daily"}), "rrule", "a schedule has one rule"},
			{"NeitherWithoutChoice", with(newForm("refused", ""), map[string]string{"rule": ""}), "cron", "the cron expression is empty"},
			{"UnknownChoice", with(newForm("refused", fortnightly), map[string]string{"rule": "ical"}), "", "neither cron nor rrule"},
		} {
			resp := d.send(t, http.MethodPost, "/schedules/new", tc.form, map[string]string{"Sec-Fetch-Site": "same-origin"})
			require.Equal(t, http.StatusBadRequest, resp.status, "%s: %s", tc.name, resp.body)
			errs := unescapeAll(texts(resp.body, "field-error"))
			require.Len(t, errs, 1, tc.name)
			require.Contains(t, errs[0], tc.contains, tc.name)
			if tc.field != "" {
				require.Regexp(t, `name="`+tc.field+`"[^>]* aria-invalid="true"`, resp.body, tc.name)
			}
			require.Equal(t, tc.form.Get("name"), formFields(t, resp.body, "new-schedule-form").Get("name"), "%s: the form as typed", tc.name)
		}
		require.Zero(t, count(t, "refused"), "nothing written")
	})
}
