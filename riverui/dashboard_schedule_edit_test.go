package riverui_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

// formFields returns the fields of the form with data-testid=testid as a
// browser would submit them: its inputs' values (a radio button's or a
// checkbox's when it is checked), its selects' selected options and its
// textareas' text, unescaped.
func formFields(t *testing.T, body, testid string) url.Values {
	t.Helper()

	form := regexp.MustCompile(`(?s)<form [^>]*data-testid="` + regexp.QuoteMeta(testid) + `"[^>]*>(.*?)</form>`).FindStringSubmatch(body)
	require.NotNil(t, form, "no form %s", testid)
	out := url.Values{}
	value := regexp.MustCompile(` value="([^"]*)"`)
	for _, m := range regexp.MustCompile(`<input [^>]*name="([^"]+)"[^>]*>`).FindAllStringSubmatch(form[1], -1) {
		if (strings.Contains(m[0], `type="radio"`) || strings.Contains(m[0], `type="checkbox"`)) && !strings.Contains(m[0], " checked") {
			continue
		}
		v := ""
		if vm := value.FindStringSubmatch(m[0]); vm != nil {
			v = html.UnescapeString(vm[1])
		}
		if strings.Contains(m[0], `type="checkbox"`) && strings.Contains(m[0], " checked") {
			out.Add(m[1], v) // a checkbox checked, one of several of a name
			continue
		}
		out.Set(m[1], v)
	}
	for _, m := range regexp.MustCompile(`(?s)<select name="([^"]+)">(.*?)</select>`).FindAllStringSubmatch(form[1], -1) {
		selected := regexp.MustCompile(`<option value="([^"]*)" selected>`).FindStringSubmatch(m[2])
		if selected == nil {
			selected = regexp.MustCompile(`<option value="([^"]*)"`).FindStringSubmatch(m[2]) // the first
		}
		out.Set(m[1], html.UnescapeString(selected[1]))
	}
	for _, m := range regexp.MustCompile(`(?s)<textarea [^>]*name="([^"]+)"[^>]*>(.*?)</textarea>`).FindAllStringSubmatch(form[1], -1) {
		out.Set(m[1], html.UnescapeString(m[2]))
	}
	return out
}

// with returns a copy of form with the fields of change set.
func with(form url.Values, change map[string]string) url.Values {
	out := url.Values{}
	for k, v := range form {
		out[k] = append([]string(nil), v...)
	}
	for k, v := range change {
		out.Set(k, v)
	}
	return out
}

func TestDashboardScheduleEdit(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)

	// editable creates a schedule to edit, with every field set. It starts
	// in 2098, so no slot fires while a test reads it.
	editable := func(t *testing.T, name string) *schedule.Schedule {
		t.Helper()

		return d.createSchedule(t, &schedule.Params{
			Name: name, Description: "the nightly one", Owner: "team-a", Cron: "0 3 * * *", TimeZone: "Europe/Paris",
			StartAt: time.Date(2098, 1, 1, 8, 0, 0, 0, time.UTC), EndAt: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC),
			Overlap: schedule.OverlapQueue, CatchUp: schedule.CatchUpLatest, CatchUpWindow: 10 * time.Minute,
			MaxAttempts: 3, Priority: 2, Queue: "reports", Timeout: time.Hour, Input: flowInput{User: "ada"}, KeepRuns: 30,
		})
	}

	t.Run("Prefilled", func(t *testing.T) {
		s := editable(t, "prefilled")
		path := "/schedules/" + s.ID.String()
		require.Equal(t, []string{path + "/edit"}, attrs(d.page(t, path, nil), "edit", "href"))

		resp := d.send(t, http.MethodGet, path+"/edit", nil, nil)
		require.Equal(t, http.StatusOK, resp.status, resp.body)
		requireNav(t, resp.body, "")
		requireCSP(t, resp)
		require.Contains(t, resp.body, `action="/schedules/`+s.ID.String()+`/edit"`)
		require.Contains(t, resp.body, "Start (in Europe/Paris; empty for none)")
		form := formFields(t, resp.body, "edit-form")
		require.Equal(t, url.Values{
			"name": {"prefilled"}, "workflow": {flow.Name()}, "description": {"the nightly one"}, "owner": {"team-a"}, "tenant": {""},
			"rule": {"cron"}, "cron": {"0 3 * * *"}, "rrule": {""}, "time_zone": {"Europe/Paris"},
			"start_at": {"2098-01-01T09:00"}, "end_at": {"2099-01-01T01:00"}, // in Paris
			"overlap": {"queue"}, "catch_up": {"latest"}, "catch_up_window": {"10m0s"}, "dst_gap": {"jump"}, "dst_fold": {"first"},
			"calendars_field": {"1"}, "on_excluded": {"skip"}, // no calendar checked: none
			"max_attempts": {"3"}, "priority": {"2"}, "queue": {"reports"}, "timeout": {"1h0m0s"}, "keep_runs": {"30"},
			"grant_id": {""}, "input": {"{\n  \"mode\": \"\",\n  \"user\": \"ada\"\n}"},
			"retry_field": {"1"}, "retry_delay": {""}, "retry_base": {""}, "retry_factor": {""}, "retry_max": {""}, "retry_jitter": {""}, // none
		}, form)

		// Submitting it as it is changes nothing.
		to := d.post(t, path+"/edit", form)
		require.Equal(t, path+"?notice=unchanged", to)
		require.Equal(t, []string{"Nothing to update: the form matched the schedule."}, texts(d.page(t, to, nil), "flash"))
		got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Equal(t, s.UpdatedAt, got.UpdatedAt)

		resp = d.send(t, http.MethodGet, "/schedules/"+uuid.NewString()+"/edit", nil, nil)
		require.Equal(t, http.StatusNotFound, resp.status)
		require.Equal(t, []string{"schedule: schedule not found"}, texts(resp.body, "error"))
	})

	t.Run("Update", func(t *testing.T) {
		s := editable(t, "update")
		path := "/schedules/" + s.ID.String()
		form := formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		to := d.post(t, path+"/edit", with(form, map[string]string{
			"name": "update v2", "description": "line one\r\nline two", "owner": "team-b", "cron": "30 8 * * 1-5", "time_zone": "Asia/Tokyo",
			"start_at": "", "end_at": "2098-06-01T12:00", "overlap": "allow", "catch_up": "window", "catch_up_window": "0s",
			"max_attempts": "", "priority": "4", "queue": "", "timeout": "90s", "input": `{"user": "bob"}`, "keep_runs": "",
		}))
		require.Equal(t, path+"?notice=updated", to)
		body := d.page(t, to, nil)
		require.Equal(t, []string{"Schedule updated. A new cron expression or RRULE, time zone, start or end applies at once; other changes from the next slot."}, texts(body, "flash"))
		require.Contains(t, body, "<dt>Time zone</dt><dd>Asia/Tokyo</dd>")

		got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Equal(t, "update v2", got.Name)
		require.Equal(t, "line one\nline two", got.Description)
		require.Equal(t, "team-b", got.Owner)
		require.Equal(t, "30 8 * * 1-5", got.Cron)
		require.Equal(t, "Asia/Tokyo", got.TimeZone)
		require.Nil(t, got.StartAt)
		require.NotNil(t, got.EndAt)
		require.Equal(t, "2098-06-01T12:00:00+02:00", got.EndAt.In(mustZone(t, "Europe/Paris")).Format(time.RFC3339), "read in the zone the form showed")
		require.Equal(t, schedule.OverlapAllow, got.Overlap)
		require.Equal(t, schedule.CatchUpWindow, got.CatchUp)
		require.Zero(t, got.CatchUpWindow, "0s is no window")
		require.Zero(t, got.MaxAttempts)
		require.Zero(t, got.KeepRuns, "empty: the run retention applies to all")
		require.Equal(t, 4, got.Priority)
		require.Empty(t, got.Queue)
		require.Equal(t, 90*time.Second, got.Timeout)
		require.JSONEq(t, `{"user": "bob"}`, string(got.Input))
		require.NotNil(t, got.NextFireAt)
		require.Equal(t, "08:30", got.NextFireAt.In(mustZone(t, "Asia/Tokyo")).Format("15:04"), "re-timed at once")

		// The form shows it as it is now: submitted again, it changes
		// nothing. An empty input is none.
		form = formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		require.Equal(t, "0s", form.Get("catch_up_window"))
		require.Equal(t, path+"?notice=unchanged", d.post(t, path+"/edit", with(form, map[string]string{"description": "line one\r\nline two"})))
		require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(form, map[string]string{"input": ""})))
		got, err = d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.JSONEq(t, `null`, string(got.Input))
	})

	t.Run("OnlyChangedFields", func(t *testing.T) {
		// Under a grant revoked since: an edit that leaves the grant alone
		// does not check it again, which would refuse every edit.
		grant, err := d.sc.CreateGrant(t.Context(), &schedule.GrantParams{Subject: "user-7", Scopes: []string{schedule.ScopeExecute(flow.Name())}})
		require.NoError(t, err)
		s := d.createSchedule(t, &schedule.Params{
			Name: "granted", Cron: "0 3 * * *", TimeZone: "Europe/Paris", GrantID: &grant.ID,
			StartAt: time.Date(2098, 1, 1, 8, 0, 0, 0, time.UTC),
		})
		_, err = d.sc.RevokeGrant(t.Context(), grant.ID, "left")
		require.NoError(t, err)
		path := "/schedules/" + s.ID.String()
		form := formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		require.Equal(t, grant.ID.String(), form.Get("grant_id"))
		require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(form, map[string]string{"description": "still granted"})))
		got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Equal(t, "still granted", got.Description)
		require.Equal(t, grant.ID, *got.GrantID)
		require.Equal(t, s.NextFireAt, got.NextFireAt)

		// Naming an unknown grant is refused; removing the grant is not.
		resp := d.send(t, http.MethodPost, path+"/edit", with(form, map[string]string{"grant_id": uuid.NewString()}), nil)
		require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
		require.Contains(t, texts(resp.body, "error")[0], "execution grant not found")
		require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(form, map[string]string{"grant_id": ""})))
		got, err = d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Nil(t, got.GrantID)
	})

	t.Run("Invalid", func(t *testing.T) {
		s := editable(t, "invalid")
		path := "/schedules/" + s.ID.String()
		form := formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		for name, tc := range map[string]struct {
			field, value, err string
		}{
			"BadCron":     {"cron", "61 * * * *", `schedule: bad cron expression &#34;61 * * * *&#34;`},
			"NeverFires":  {"cron", "0 0 30 2 *", "never fires"},
			"UnknownZone": {"time_zone", "Mars/Olympus", `schedule: bad time zone &#34;Mars/Olympus&#34;: unknown time zone`},
			"BadJSON":     {"input", `{"user":`, "the input is not valid JSON"},
			"EmptyName":   {"name", "", "schedule: invalid Name: is empty"},
			"BadDuration": {"catch_up_window", "soon", `catch-up window &#34;soon&#34; is not a duration`},
			"BadTime":     {"end_at", "tomorrow", `end &#34;tomorrow&#34; is not a time`},
			"EndFirst":    {"end_at", "2097-01-01T08:00", "schedule: invalid EndAt"},
			"BadPriority": {"priority", "9", "schedule: invalid Priority"},
			"BadOverlap":  {"overlap", "sometimes", "is not an overlap policy"},
			"BadDSTGap":   {"dst_gap", "later", "is not a DST gap policy; use jump, shift or skip"},
			"BadGrant":    {"grant_id", "nope", `grant &#34;nope&#34; is not an id`},
		} {
			resp := d.send(t, http.MethodPost, path+"/edit", with(form, map[string]string{tc.field: tc.value, "description": "changed too"}), map[string]string{"Sec-Fetch-Site": "same-origin"})
			require.Equal(t, http.StatusBadRequest, resp.status, name)
			errs := texts(resp.body, "error")
			require.Len(t, errs, 1, name)
			require.Contains(t, errs[0], tc.err, name)

			// The form again, as typed.
			again := formFields(t, resp.body, "edit-form")
			if tc.field != "overlap" && tc.field != "dst_gap" { // a select shows only its options
				require.Equal(t, tc.value, again.Get(tc.field), name)
			}
			require.Equal(t, "changed too", again.Get("description"), name)
		}
		got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Equal(t, s.UpdatedAt, got.UpdatedAt, "nothing was written")
		require.Equal(t, "the nightly one", got.Description)
		require.Equal(t, "0 3 * * *", got.Cron)
	})

	t.Run("Escaped", func(t *testing.T) {
		s := d.createSchedule(t, &schedule.Params{Name: hostile, Owner: hostile, Cron: "0 3 * * *", Input: flowInput{User: hostile}})
		path := "/schedules/" + s.ID.String()
		body := d.page(t, path+"/edit", nil)
		require.NotContains(t, body, "<script>") // no inline script; a live page loads refresh.js
		require.Contains(t, body, `<input name="name" value="&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"`)
		form := formFields(t, body, "edit-form")
		require.Equal(t, hostile, form.Get("owner"))

		// In an error, and in the form shown again with it.
		resp := d.send(t, http.MethodPost, path+"/edit", with(form, map[string]string{"cron": hostile}), nil)
		require.Equal(t, http.StatusBadRequest, resp.status)
		require.NotContains(t, resp.body, "<script")
		require.Contains(t, texts(resp.body, "error")[0], "&lt;script&gt;")
		require.Equal(t, hostile, formFields(t, resp.body, "edit-form").Get("cron"))
	})

	t.Run("CrossOrigin", func(t *testing.T) {
		s := editable(t, "cross")
		path := "/schedules/" + s.ID.String()
		form := formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		for _, header := range []map[string]string{
			{"Sec-Fetch-Site": "cross-site"},
			{"Origin": "https://evil.example"},
		} {
			resp := d.send(t, http.MethodPost, path+"/edit", with(form, map[string]string{"cron": "* * * * *"}), header)
			require.Equal(t, http.StatusForbidden, resp.status, header)
			require.Contains(t, texts(resp.body, "error")[0], "cross-site request refused")
		}
		got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Equal(t, "0 3 * * *", got.Cron)

		resp := d.send(t, http.MethodPut, path+"/edit", url.Values{}, nil)
		require.Equal(t, http.StatusMethodNotAllowed, resp.status)
		require.Equal(t, "GET, POST", resp.header.Get("Allow"))
	})
}

func TestDashboardScheduleBackfill(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	newYork := mustZone(t, "America/New_York")

	// backfillable is a schedule at 06:00 in New York that runs its
	// slots side by side. It is paused, so that only backfills start runs.
	backfillable := func(t *testing.T, cron string) *schedule.Schedule {
		t.Helper()

		// Its runs wait for a signal: the first one backfilled stays
		// unfinished, so what queues or skips behind it does not depend on
		// how fast the worker is.
		return d.createSchedule(t, &schedule.Params{
			Name: "backfill", Cron: cron, TimeZone: "America/New_York", Overlap: schedule.OverlapAllow, Paused: true,
			Input: flowInput{Mode: "wait"},
		})
	}
	// slots are the fire times of the schedule's runs, oldest first, in New
	// York.
	slots := func(t *testing.T, id uuid.UUID) []string {
		t.Helper()

		runs, err := d.sc.History(t.Context(), schedule.ByID(id), nil)
		require.NoError(t, err)
		var at []time.Time
		for _, run := range runs {
			require.NotNil(t, run.FireAt)
			at = append(at, *run.FireAt)
		}
		slices.SortFunc(at, time.Time.Compare)
		out := []string{}
		for _, a := range at {
			out = append(out, a.In(newYork).Format("2006-01-02 15:04 MST"))
		}
		return out
	}

	t.Run("Backfill", func(t *testing.T) {
		s := backfillable(t, "0 6 * * *")
		path := "/schedules/" + s.ID.String()
		body := d.page(t, path, nil)
		require.Contains(t, body, `action="/schedules/`+s.ID.String()+`/backfill"`)
		require.Contains(t, body, "From (America/New_York)")
		require.Contains(t, body, `<option value="">buffer: all, one after the other</option>`)
		require.Contains(t, body, `name="rerun_skipped"`)

		// Wall times in New York: three mornings.
		to := d.post(t, path+"/backfill", url.Values{"from": {"2026-03-05T00:00"}, "to": {"2026-03-08T00:00"}})
		require.Equal(t, path+"?existing=0&notice=backfilled&queued=2&rerun=0&slots=3&started=1", to)
		body = d.page(t, to, nil)
		require.Equal(t, []string{"Backfilled 3 slots: 1 started, 2 queued to run one after the other."}, texts(body, "flash"))
		require.Len(t, attrs(body, "run-link", "href"), 3)
		require.Equal(t, []string{"2026-03-05 06:00 EST", "2026-03-06 06:00 EST", "2026-03-07 06:00 EST"}, slots(t, s.ID))

		// A wider range starts only the slot that has no run; RFC 3339
		// works too, across the change to summer time.
		to = d.post(t, path+"/backfill", url.Values{"from": {"2026-03-04T00:00"}, "to": {"2026-03-08T00:00"}})
		require.Equal(t, path+"?existing=3&notice=backfilled&queued=1&rerun=0&slots=4&started=0", to)
		require.Equal(t, []string{"Backfilled 4 slots: 1 queued to run one after the other, 3 had run (or been skipped) already."}, texts(d.page(t, to, nil), "flash"))
		// Overlap skip, chosen in the form: the first run above waits, so
		// the slot is skipped, and the notice says why.
		to = d.post(t, path+"/backfill", url.Values{"from": {"2026-03-09T00:00:00Z"}, "to": {"2026-03-10T00:00:00Z"}, "overlap": {"skip"}})
		require.Equal(t, path+"?existing=0&notice=backfilled&queued=0&rerun=0&skipped_overlap=1&slots=1&started=0", to)
		require.Equal(t, []string{"Backfilled 1 slot: 1 skipped (overlap)."}, texts(d.page(t, to, nil), "flash"))
		to = d.post(t, path+"/backfill", url.Values{"from": {"2026-03-09T00:00:00Z"}, "to": {"2026-03-10T00:00:00Z"}, "rerun_skipped": {"1"}})
		require.Equal(t, []string{"Backfilled 1 slot: 1 queued to run one after the other, 1 of them run again after a skip."}, texts(d.page(t, to, nil), "flash"))
		require.Equal(t, []string{"2026-03-04 06:00 EST", "2026-03-05 06:00 EST", "2026-03-06 06:00 EST", "2026-03-07 06:00 EST", "2026-03-09 06:00 EDT"}, slots(t, s.ID))

		to = d.post(t, path+"/backfill", url.Values{"from": {"2026-03-05T07:00"}, "to": {"2026-03-06T05:00"}})
		require.Equal(t, []string{"Backfill found no slot in the range."}, texts(d.page(t, to, nil), "flash"))

		// Counts the dashboard did not write show nothing.
		require.Empty(t, texts(d.page(t, path+"?notice=backfilled&slots=2&started=5", nil), "flash"))
		require.Empty(t, texts(d.page(t, path+"?notice=backfilled&slots=x", nil), "flash"))
	})

	t.Run("BadRange", func(t *testing.T) {
		s := backfillable(t, "0 6 * * *")
		every := backfillable(t, "* * * * *")
		for name, tc := range map[string]struct {
			s          *schedule.Schedule
			from, to   string
			overlap    string
			wantStatus int
			wantErr    string
		}{
			"Reversed":   {s, "2026-03-08T00:00", "2026-03-05T00:00", "", http.StatusBadRequest, "schedule: invalid to: is not after from"},
			"NoTo":       {s, "2026-03-05T00:00", "", "", http.StatusBadRequest, "enter both ends of the range to backfill, from and to (in America/New_York)"},
			"NotATime":   {s, "yesterday", "2026-03-05T00:00", "", http.StatusBadRequest, `from &#34;yesterday&#34; is not a time`},
			"BadOverlap": {s, "2026-03-05T00:00", "2026-03-08T00:00", "sometimes", http.StatusBadRequest, "is not an overlap policy"},
			"OverTheCap": {every, "2026-03-05T00:00", "2026-03-06T00:00", "", http.StatusBadRequest, "holds more than 1000 slots; backfill a shorter range at a time"},
			"Hostile":    {s, hostile, "2026-03-05T00:00", "", http.StatusBadRequest, "&lt;script&gt;"},
		} {
			path := "/schedules/" + tc.s.ID.String()
			form := url.Values{"from": {tc.from}, "to": {tc.to}, "overlap": {tc.overlap}}
			resp := d.send(t, http.MethodPost, path+"/backfill", form, map[string]string{"Sec-Fetch-Site": "same-origin"})
			require.Equal(t, tc.wantStatus, resp.status, name)
			errs := texts(resp.body, "error")
			require.Len(t, errs, 1, name)
			require.Contains(t, errs[0], tc.wantErr, name)
			require.NotContains(t, resp.body, "<script", name)

			// The schedule's page again, with the form as typed and
			// unfolded.
			require.Equal(t, []string{"paused"}, texts(resp.body, "schedule-state"), name)
			require.Contains(t, resp.body, `<details class="backfill" open>`, name)
			again := formFields(t, resp.body, "backfill")
			require.Equal(t, tc.from, again.Get("from"), name)
			require.Equal(t, tc.to, again.Get("to"), name)
		}
		require.Empty(t, slots(t, s.ID), "nothing was written")
		require.Empty(t, slots(t, every.ID), "nothing was written")

		resp := d.send(t, http.MethodPost, "/schedules/"+uuid.NewString()+"/backfill", url.Values{"from": {"2026-03-05T00:00"}, "to": {"2026-03-06T00:00"}}, nil)
		require.Equal(t, http.StatusNotFound, resp.status)
	})

	t.Run("CrossOrigin", func(t *testing.T) {
		s := backfillable(t, "0 6 * * *")
		resp := d.send(t, http.MethodPost, "/schedules/"+s.ID.String()+"/backfill",
			url.Values{"from": {"2026-03-05T00:00"}, "to": {"2026-03-08T00:00"}}, map[string]string{"Sec-Fetch-Site": "cross-site"})
		require.Equal(t, http.StatusForbidden, resp.status)
		require.Empty(t, slots(t, s.ID))
	})
}
