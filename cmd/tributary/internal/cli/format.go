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

// absoluteTime is "2026-03-08T09:00:00Z (3m ago)"; beside the time itself,
// a far one counts days: "(40d ago)".
func absoluteTime(t, now time.Time) string {
	return t.UTC().Format(time.RFC3339) + " (" + durfmt.RelativeDays(t, now) + ")"
}

// relativeTimeOrDash is durfmt.Relative, or "-" for a nil t.
func relativeTimeOrDash(t *time.Time, now time.Time) string {
	if t == nil {
		return "-"
	}
	return durfmt.Relative(*t, now)
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
