package schedule

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRRuleMatchesDateutil checks the expansion of RRULE against another
// implementation's: python-dateutil's, for 500 random rules mixing every
// part Tributary takes (testdata/rrule_dateutil.json, written by
// testdata/rrule_dateutil.py, whose doc says how to write it again). Each
// rule's first occurrences, as wall times, must be dateutil's, and the
// rule must end where dateutil's does when it ends within the file's
// horizon.
func TestRRuleMatchesDateutil(t *testing.T) {
	t.Parallel()

	raw, err := os.ReadFile("testdata/rrule_dateutil.json")
	require.NoError(t, err)
	var golden struct {
		Dateutil       string `json:"dateutil"`
		HorizonYears   int    `json:"horizon_years"`
		MaxOccurrences int    `json:"max_occurrences"`
		Rules          []struct {
			Rule        string   `json:"rule"`
			Occurrences []string `json:"occurrences"`
		} `json:"rules"`
	}
	require.NoError(t, json.Unmarshal(raw, &golden))
	require.Len(t, golden.Rules, 500, "written by dateutil %s", golden.Dateutil)
	require.Positive(t, golden.MaxOccurrences)

	quirks := 0
	for _, g := range golden.Rules {
		r, err := parseRRule(g.Rule)
		require.NoError(t, err, "%s", g.Rule)

		// dateutil's first WEEKLY period begins at DTSTART, not at the
		// start of its week (WKST), so BYSETPOS counts in a part of it
		// (dateutil/dateutil#1398, open); RFC 5545 section 3.3.10: "A set
		// of recurrence instances starts at the beginning of the interval
		// defined by the FREQ rule part". Such a rule is compared from its
		// second week on, where a COUNT no longer agrees.
		want, from := g.Occurrences, r.dtstart()
		quirk := r.freq == rrWeekly && len(r.setPos) > 0 && from.Weekday() != r.wkst
		if quirk {
			quirks++
			from = from.Truncate(24 * time.Hour)
			for from.Weekday() != r.wkst {
				from = from.AddDate(0, 0, 1)
			}
			want = slices.DeleteFunc(slices.Clone(want), func(w string) bool { return w < from.Format(rrWallFormat) })
		}

		horizon := r.dtstart().AddDate(golden.HorizonYears, 0, 0)
		var got []string
		after := from.Add(-time.Second)
		for len(got) < len(want) {
			next, ok := r.next(after, horizon)
			if !ok {
				break
			}
			got = append(got, next.Format(rrWallFormat))
			after = next
		}
		require.Equal(t, want, got, "%s", g.Rule)
		if len(g.Occurrences) < golden.MaxOccurrences && !(quirk && strings.Contains(g.Rule, "COUNT=")) {
			next, ok := r.next(after, horizon)
			require.False(t, ok, "%s: dateutil ends after %d occurrences, this goes on to %s", g.Rule, len(g.Occurrences), next)
		}
	}
	t.Logf("%d rules, %d of them compared from their second week (dateutil#1398)", len(golden.Rules), quirks)
}

// rrWallFormat writes a wall time as DTSTART and UNTIL do.
const rrWallFormat = "20060102T150405"
