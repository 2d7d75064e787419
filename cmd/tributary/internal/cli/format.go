package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tributary-go/tributary/internal/durfmt"
)

const (
	// errorColumnWidth is where a table cuts an error, such as a run's in
	// `workflow list`.
	errorColumnWidth = 60

	// maxJSONValueWidth is where jsonText cuts a value, such as a run's
	// input or output in `workflow get`; the whole value is in --json.
	maxJSONValueWidth = 500
)

func printJSON(w io.Writer, v any) error {
	encoder := json.NewEncoder(w)
	encoder.SetIndent("", "  ")
	return encoder.Encode(v)
}

// jsonText is a stored JSON value for a human, cut when long.
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	s := oneLine(string(raw))
	if len(s) > maxJSONValueWidth {
		return shorten(s, maxJSONValueWidth) + fmt.Sprintf(" (%d bytes; see --json)", len(raw))
	}
	return s
}

// oneLine collapses whitespace, so that a value can't break a table.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// shorten cuts s to at most width runes, ending it with "…" when cut.
func shorten(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	runes := []rune(s)
	return string(runes[:width-1]) + "…"
}

// absoluteTime is "2026-03-08T09:00:00Z (3m ago)".
func absoluteTime(t, now time.Time) string {
	return t.UTC().Format(time.RFC3339) + " (" + relativeTime(t, now) + ")"
}

func relativeTimeOrDash(t *time.Time, now time.Time) string {
	if t == nil {
		return "-"
	}
	return relativeTime(*t, now)
}

// relativeTime is "just now", "12s ago", "3m ago", "5h ago", "2d ago", or
// "in 4m" for a time to come; beyond 30 days it is the RFC 3339 time.
func relativeTime(t, now time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var amount string
	switch {
	case d < time.Second:
		return "just now"
	case d < time.Minute:
		amount = strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		amount = strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		amount = strconv.Itoa(int(d/time.Hour)) + "h"
	case d < 30*24*time.Hour:
		amount = strconv.Itoa(int(d/(24*time.Hour))) + "d"
	default:
		return t.UTC().Format(time.RFC3339)
	}
	if future {
		return "in " + amount
	}
	return amount + " ago"
}

// relativeDays is relativeTime, in days beyond relativeTime's 30: "in 45d".
func relativeDays(t, now time.Time) string {
	const month = 30 * 24 * time.Hour
	switch d := t.Sub(now); {
	case d >= month:
		return fmt.Sprintf("in %dd", d/(24*time.Hour))
	case d <= -month:
		return fmt.Sprintf("%dd ago", -d/(24*time.Hour))
	}
	return relativeTime(t, now)
}

// humanDuration rounds d to what a reader cares about, and writes it as
// everything else Tributary writes a duration (durfmt.Short): 850µs, 12ms,
// 1.25s, 3m12s, 50m, 2h5m, 1h.
func humanDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	case d < time.Hour:
		d = d.Round(time.Second)
	default:
		d = d.Round(time.Minute)
	}
	return durfmt.Short(d)
}

// counted is n with one or many after it, as n asks: "1 date", "3 dates".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
