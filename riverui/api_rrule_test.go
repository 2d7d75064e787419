package riverui_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

// fortnightly is the RRULE of the RRULE tests: every other Tuesday at
// 09:00 from 5 January 2027.
const fortnightly = "DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU"

// TestAPIScheduleRRule: a schedule of an RRULE is created and read back
// with its rule in "rrule" and "cron" "", its next fire times from the
// rule; a GET's body sent back changes nothing; a PATCH turns it into a
// cron schedule and back. Both rules, neither, a malformed rule and a rule
// without a slot are 400s naming the field, and write nothing; a key
// conflict names the rule's field.
func TestAPIScheduleRRule(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	create := func(t *testing.T, fields map[string]any) (int, string) {
		t.Helper()
		body := map[string]any{"name": "fortnightly", "workflow": "digest", "time_zone": "America/New_York"}
		for k, v := range fields {
			body[k] = v
		}
		return f.do(t, http.MethodPost, "/api/schedules", encode(t, body), nil)
	}
	// count is how many schedules owner has.
	count := func(t *testing.T, owner string) int {
		t.Helper()
		list, err := f.sc.List(t.Context(), &schedule.ListParams{Owner: owner})
		require.NoError(t, err)
		return len(list)
	}

	t.Run("CreateReadUpdate", func(t *testing.T) {
		status, body := create(t, map[string]any{"rrule": fortnightly, "owner": "rrule-crud"})
		require.Equal(t, http.StatusCreated, status, body)
		var created apiSchedule
		require.NoError(t, json.Unmarshal([]byte(body), &created))
		require.Equal(t, fortnightly, created.RRule)
		require.Empty(t, created.Cron)
		require.Contains(t, object(t, body), "rrule")
		require.Len(t, created.NextFireTimes, 10)
		ny := mustZone(t, "America/New_York")
		for i, o := range created.NextFireTimes {
			want := time.Date(2027, 1, 5+14*i, 9, 0, 0, 0, ny)
			require.True(t, want.Equal(o.At), "fire %d is %s, not %s", i, o.At, want)
		}
		path := "/api/schedules/" + created.ID.String()

		status, read := f.do(t, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusOK, status, read)
		require.Equal(t, fortnightly, object(t, read)["rrule"])
		require.Equal(t, "", object(t, read)["cron"])

		// A GET's body sent back changes nothing.
		status, patched := f.do(t, http.MethodPatch, path, read, nil)
		require.Equal(t, http.StatusOK, status, patched)
		require.JSONEq(t, read, patched)

		// A cron expression replaces the rule, and a rule the expression.
		status, body = f.do(t, http.MethodPatch, path, `{"cron": "0 9 * * 1"}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, "0 9 * * 1", object(t, body)["cron"])
		require.Equal(t, "", object(t, body)["rrule"])
		got, err := f.sc.Get(t.Context(), schedule.ByID(created.ID))
		require.NoError(t, err)
		require.Equal(t, "0 9 * * 1", got.Cron)
		require.Empty(t, got.RRule)
		require.Equal(t, time.Monday, got.NextFireAt.In(ny).Weekday(), "re-timed by the expression")

		status, body = f.do(t, http.MethodPatch, path, encode(t, map[string]string{"rrule": fortnightly}), nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, fortnightly, object(t, body)["rrule"])
		require.Equal(t, "", object(t, body)["cron"])
		got, err = f.sc.Get(t.Context(), schedule.ByID(created.ID))
		require.NoError(t, err)
		require.Equal(t, fortnightly, got.RRule)
		require.Empty(t, got.Cron)
		require.True(t, time.Date(2027, 1, 5, 9, 0, 0, 0, ny).Equal(*got.NextFireAt), "re-timed by the rule")

		// The refused PATCHes write nothing.
		for _, tc := range []struct {
			name, body, field, contains string
		}{
			{"Both", encode(t, map[string]string{"cron": "@daily", "rrule": "DTSTART:20270106T090000\nRRULE:FREQ=DAILY"}), "rrule", "a schedule has one rule"},
			{"Malformed", encode(t, map[string]string{"rrule": "DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;BYDAY=XX"}), "rrule", "BYDAY=XX"},
			{"Empty", `{"rrule": ""}`, "rrule", "without a rule"},
		} {
			status, body := f.do(t, http.MethodPatch, path, tc.body, nil)
			require.Equal(t, http.StatusBadRequest, status, "%s: %s", tc.name, body)
			var e errorBody
			require.NoError(t, json.Unmarshal([]byte(body), &e))
			require.Equal(t, tc.field, e.Field, tc.name)
			require.Contains(t, e.Error, tc.contains, tc.name)
		}
		after, err := f.sc.Get(t.Context(), schedule.ByID(created.ID))
		require.NoError(t, err)
		require.Equal(t, got.UpdatedAt, after.UpdatedAt, "nothing written")
	})

	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			fields   map[string]any
			field    string
			contains []string
		}{
			{"Both", map[string]any{"cron": "0 9 * * 2", "rrule": fortnightly}, "rrule", []string{"rrule: sent with cron \"0 9 * * 2\"", "a schedule has one rule"}},
			{"Neither", map[string]any{}, "cron", []string{"cron or rrule", "0 9 * * 1-5", "DTSTART:"}},
			{"NeitherEmpty", map[string]any{"cron": "", "rrule": " "}, "cron", []string{"cron or rrule"}},
			{"BadFreq", map[string]any{"rrule": "DTSTART:20270105T090000\nRRULE:FREQ=FORTNIGHTLY"}, "rrule", []string{"rrule: bad RRULE", "FREQ=FORTNIGHTLY"}},
			{"NoDTSTART", map[string]any{"rrule": "RRULE:FREQ=WEEKLY"}, "rrule", []string{"DTSTART"}},
			{"UTCStart", map[string]any{"rrule": "DTSTART:20270105T090000Z\nRRULE:FREQ=WEEKLY"}, "rrule", []string{"DTSTART:20270105T090000Z", "local to the schedule's time zone"}},
			{"NoSlotLeft", map[string]any{"rrule": "DTSTART:20200105T090000\nRRULE:FREQ=DAILY;COUNT=2"}, "rrule", []string{"invalid rrule: has no occurrence", "COUNT or UNTIL"}},
			{"CronIsARule", map[string]any{"cron": fortnightly}, "cron", []string{"set it as rrule"}},
		} {
			status, body := create(t, withFields(tc.fields, "owner", "refused"))
			require.Equal(t, http.StatusBadRequest, status, "%s: %s", tc.name, body)
			var e errorBody
			require.NoError(t, json.Unmarshal([]byte(body), &e))
			require.Equal(t, tc.field, e.Field, "%s: %s", tc.name, body)
			for _, c := range tc.contains {
				require.Contains(t, e.Error, c, tc.name)
			}
		}
		require.Zero(t, count(t, "refused"), "nothing written")
	})

	t.Run("KeyConflict", func(t *testing.T) {
		status, body := create(t, map[string]any{"owner": "rrule-keys", "key": "fortnightly", "rrule": fortnightly})
		require.Equal(t, http.StatusCreated, status, body)
		status, body = create(t, map[string]any{"owner": "rrule-keys", "key": "fortnightly", "rrule": fortnightly})
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, true, object(t, body)["existing"], "the same rule is the same schedule")

		other := "DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;BYDAY=TU"
		for _, tc := range []struct {
			name   string
			fields map[string]any
			diffs  []schedule.FieldDiff
			says   string
		}{
			{"AnotherRule", map[string]any{"rrule": other}, []schedule.FieldDiff{
				{Field: "rrule", Stored: `"DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU"`, Given: `"DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;BYDAY=TU"`},
			}, `rrule "DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU" → "DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;BYDAY=TU"`},
			{"ACron", map[string]any{"cron": "0 9 * * 2"}, []schedule.FieldDiff{
				{Field: "cron", Stored: `""`, Given: `"0 9 * * 2"`},
				{Field: "rrule", Stored: `"DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU"`, Given: `""`},
			}, `cron "" → "0 9 * * 2"; rrule "DTSTART:`},
		} {
			status, body := create(t, withFields(tc.fields, "owner", "rrule-keys", "key", "fortnightly"))
			require.Equal(t, http.StatusConflict, status, "%s: %s", tc.name, body)
			var c keyConflict
			require.NoError(t, json.Unmarshal([]byte(body), &c))
			require.Equal(t, tc.diffs, c.Diffs, tc.name)
			require.Contains(t, c.Error, tc.says, tc.name)
		}
		require.Equal(t, 1, count(t, "rrule-keys"), "nothing written")
	})
}

// withFields is fields with the pairs of kv set.
func withFields(fields map[string]any, kv ...string) map[string]any {
	out := map[string]any{}
	for k, v := range fields {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
