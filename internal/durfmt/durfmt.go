// Package durfmt writes a duration for people: time.Duration's String
// without its trailing zero units. The schedules' notes, a retry
// policy's words (workflow.RetryPolicy.String), the dashboard and the CLI
// use it, so that one duration reads the same everywhere.
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
