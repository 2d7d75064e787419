package riverui_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

// New York springs forward on 10 March 2030, when 02:30 does not exist,
// and falls back on 3 November 2030, when 01:30 occurs twice.
const (
	nyGap  = "2030-03-10T02:30:00"
	nyFold = "2030-11-03T01:30:00"
)

// TestAPIScheduleDSTPolicy: a schedule's DST policy, dst_gap and dst_fold,
// is created, answered (always, the defaults too), changed and compared
// like its other policies, and its next fire times mark the slots the
// policy moves or skips. TestAPIScheduleBodyErrors refuses bad values.
func TestAPIScheduleDSTPolicy(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)

	// create posts a schedule in New York with the fields of extra, and
	// returns what GET then answers, which is what the create answered.
	create := func(t *testing.T, cron, start, extra string) apiSchedule {
		t.Helper()

		status, body := f.do(t, http.MethodPost, "/api/schedules", `{"name": "dst", "workflow": "digest", "cron": "`+cron+`",
			"time_zone": "America/New_York", "start_at": "`+start+`"`+extra+`}`, nil)
		require.Equal(t, http.StatusCreated, status, body)
		var created, got apiSchedule
		require.NoError(t, json.Unmarshal([]byte(body), &created))
		f.getJSON(t, "/api/schedules/"+created.ID.String(), http.StatusOK, &got)
		require.Equal(t, created, got)
		return got
	}

	t.Run("Create", func(t *testing.T) {
		at := func(s string) time.Time {
			v, err := time.Parse(time.RFC3339, s)
			require.NoError(t, err)
			return v
		}
		for _, tc := range []struct {
			name, cron, start, extra string
			gap, fold                string // as answered
			nominal                  string
			want                     []apiOccurrence // at, shifted, skipped
		}{
			{"Defaults", "30 2 * * *", "2030-03-08T00:00:00Z", ``, "jump", "first", nyGap, []apiOccurrence{{At: at("2030-03-10T07:00:00Z"), Shifted: true}}},
			{"GapJump", "30 2 * * *", "2030-03-08T00:00:00Z", `, "dst_gap": "jump"`, "jump", "first", nyGap, []apiOccurrence{{At: at("2030-03-10T07:00:00Z"), Shifted: true}}},
			{"GapShift", "30 2 * * *", "2030-03-08T00:00:00Z", `, "dst_gap": "shift"`, "shift", "first", nyGap, []apiOccurrence{{At: at("2030-03-10T07:30:00Z"), Shifted: true}}},
			{"GapSkip", "30 2 * * *", "2030-03-08T00:00:00Z", `, "dst_gap": "skip"`, "skip", "first", nyGap, []apiOccurrence{{At: at("2030-03-10T07:00:00Z"), Skipped: true}}},
			{"FoldFirst", "30 1 * * *", "2030-11-01T00:00:00Z", `, "dst_fold": "first"`, "jump", "first", nyFold, []apiOccurrence{{At: at("2030-11-03T05:30:00Z")}}},
			{"FoldLast", "30 1 * * *", "2030-11-01T00:00:00Z", `, "dst_fold": "last"`, "jump", "last", nyFold, []apiOccurrence{{At: at("2030-11-03T06:30:00Z")}}},
			{"FoldBoth", "30 1 * * *", "2030-11-01T00:00:00Z", `, "dst_gap": "skip", "dst_fold": "both"`, "skip", "both", nyFold, []apiOccurrence{{At: at("2030-11-03T05:30:00Z")}, {At: at("2030-11-03T06:30:00Z")}}},
		} {
			s := create(t, tc.cron, tc.start, tc.extra)
			require.Equal(t, tc.gap, s.DSTGap, tc.name)
			require.Equal(t, tc.fold, s.DSTFold, tc.name)
			stored, err := f.sc.Get(t.Context(), schedule.ByID(s.ID))
			require.NoError(t, err)
			require.Equal(t, schedule.DSTGap(tc.gap), stored.DSTGap, tc.name)
			require.Equal(t, schedule.DSTFold(tc.fold), stored.DSTFold, tc.name)

			var got []apiOccurrence
			for _, o := range s.NextFireTimes {
				if o.Nominal == tc.nominal {
					require.NotEmpty(t, o.Note, "%s: daylight saving time played a part", tc.name)
					got = append(got, apiOccurrence{At: o.At, Shifted: o.Shifted, Skipped: o.Skipped})
				}
			}
			require.Equal(t, tc.want, got, tc.name)
		}
	})

	t.Run("Update", func(t *testing.T) {
		s := create(t, "30 2 * * *", "2030-03-08T00:00:00Z", ``)
		path := "/api/schedules/" + s.ID.String()
		status, body := f.do(t, http.MethodPatch, path, `{"dst_gap": "skip", "dst_fold": "last"}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		var patched apiSchedule
		require.NoError(t, json.Unmarshal([]byte(body), &patched))
		require.Equal(t, "skip", patched.DSTGap)
		require.Equal(t, "last", patched.DSTFold)
		require.Equal(t, s.Cron, patched.Cron, "fields not named are kept")
		skipped := 0
		for _, o := range patched.NextFireTimes {
			if o.Skipped {
				skipped++
				require.Equal(t, nyGap, o.Nominal)
				require.Contains(t, o.Note, "skipped")
			}
		}
		require.Equal(t, 1, skipped, "the new policy applies at once")
		stored, err := f.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Equal(t, schedule.DSTGapSkip, stored.DSTGap)
		require.Equal(t, schedule.DSTFoldLast, stored.DSTFold)

		// The same values again change nothing.
		status, body = f.do(t, http.MethodPatch, path, `{"dst_gap": "skip"}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		again, err := f.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Equal(t, stored.UpdatedAt, again.UpdatedAt)

		status, body = f.do(t, http.MethodPatch, path, `{"dst_gap": "jump", "dst_fold": "first"}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		require.NoError(t, json.Unmarshal([]byte(body), &patched))
		require.Equal(t, "jump", patched.DSTGap)
		require.Equal(t, "first", patched.DSTFold)
	})

	t.Run("KeyConflict", func(t *testing.T) {
		keyed := `{"name": "keyed", "owner": "ops", "key": "dst-policy", "workflow": "digest", "cron": "30 2 * * *", "time_zone": "America/New_York"`
		status, body := f.do(t, http.MethodPost, "/api/schedules", keyed+`}`, nil)
		require.Equal(t, http.StatusCreated, status, body)
		// Left out, the policy is the default, the stored one: the same spec.
		status, body = f.do(t, http.MethodPost, "/api/schedules", keyed+`, "dst_gap": "jump"}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, true, object(t, body)["existing"])
		// Another policy is another spec.
		status, body = f.do(t, http.MethodPost, "/api/schedules", keyed+`, "dst_gap": "skip"}`, nil)
		require.Equal(t, http.StatusConflict, status, body)
		var c struct {
			Error string               `json:"error"`
			Diffs []schedule.FieldDiff `json:"diffs"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &c))
		require.Len(t, c.Diffs, 1)
		require.Equal(t, "dst_gap", c.Diffs[0].Field)
		require.Contains(t, c.Diffs[0].Stored, "jump")
		require.Contains(t, c.Diffs[0].Given, "skip")
		require.Contains(t, c.Error, "dst_gap")
	})
}
