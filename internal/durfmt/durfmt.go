// Package durfmt writes durations and times relative to now for people,
// in one compact style: "5m", "1h30m", "1.25s", "12s ago", "in 4m". The
// schedules' notes, a retry policy's words (workflow.RetryPolicy.String),
// the dashboard and the CLI use it, so that one duration reads the same
// everywhere.
//
// Short writes a duration exactly (a DST gap, a retry policy's backoff);
// Human rounds one to what a reader cares about (how long a step took, a
// schedule's catch-up window); Relative and RelativeDays say how far a time
// is from now, the dashboard and the CLI alike: RelativeDays beside the
// time itself, Relative where it stands alone.
package durfmt

import (
	"strings"
	"time"
)

// Short is d as time.Duration's String writes it, less its trailing zero
// units: "5m" (not "5m0s"), "1h" (not "1h0m0s"), "1h30m", "1m30s", "90ms",
// "1.5s". It rounds nothing: parsed back by time.ParseDuration, it is d.
func Short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
