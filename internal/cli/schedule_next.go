package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/schedule"
)

// newScheduleNextCommand is `tributary schedule next`.
func newScheduleNextCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "next --cron <expression> [--tz <zone>] [--from <time>] [--count <n>] [--json]",
		Short: "Print when a cron expression fires next in a time zone, with its DST rules (needs no database)",
		Example: `tributary schedule next --cron "30 2 * * *" --tz America/New_York --from 2026-03-07T00:00:00Z
			tributary schedule next --cron @hourly --count 24 --json`,
	}, setupScheduleNext)
}

func setupScheduleNext(fs *pflag.FlagSet, env *Env) Action {
	expr := fs.String("cron", "", "cron `expression`: 5 fields like \"0 9 * * 1-5\", 6 with leading seconds, or a descriptor like @daily or \"@every 1h\" (required)")
	zone := fs.String("tz", "UTC", "IANA time `zone` the expression is in, such as Europe/Paris (default UTC)")
	from := fs.String("from", "", "print fire times after this RFC 3339 `time`, such as 2026-03-08T00:00:00Z (default now)")
	count := fs.Int("count", 5, fmt.Sprintf("print the next `n` fire times, at most %d (default 5)", maxScheduleNextCount))
	asJSON := fs.Bool("json", false, "print a JSON array of {at, nominal, shifted, note} instead of one time per line")

	return func(ctx context.Context, args []string) error {
		switch {
		case len(args) > 0 && *expr != "":
			return withHint(usageErrorf("unexpected argument %q", args[0]),
				`quote the whole cron expression, e.g. --cron "0 9 * * 1-5"`)
		case len(args) > 0:
			return noArgs(args)
		case *expr == "":
			return withHint(usageErrorf("schedule next needs --cron"),
				`pass a cron expression, e.g. --cron "0 9 * * 1-5" or --cron @daily`)
		case *count < 1 || *count > maxScheduleNextCount:
			return withHint(usageErrorf("--count must be from 1 to %d, not %d", maxScheduleNextCount, *count),
				fmt.Sprintf("pass --count 5, or up to --count %d", maxScheduleNextCount))
		}

		after := time.Now()
		if *from != "" {
			var err error
			if after, err = time.Parse(time.RFC3339, *from); err != nil {
				return withHint(usageErrorf("--from %q is not an RFC 3339 time", *from),
					"use a time like 2026-03-08T00:00:00Z or 2026-03-08T09:00:00+01:00")
			}
		}

		spec, err := schedule.ParseSpec(*expr, *zone)
		if err != nil {
			return withHint(err, "fix --cron or --tz")
		}
		occurrences := spec.NextN(after, *count)
		if *asJSON {
			return printOccurrencesJSON(env.Stdout, occurrences)
		}
		return printOccurrences(env.Stdout, env.Stderr, occurrences)
	}
}

// maxScheduleNextCount bounds `schedule next --count`.
const maxScheduleNextCount = 1000

// printOccurrences prints one RFC 3339 time per line on stdout, for
// scripts, and what daylight saving time did to any of them on stderr.
func printOccurrences(stdout, stderr io.Writer, occurrences []schedule.Occurrence) error {
	for _, occurrence := range occurrences {
		at := occurrence.At.Format(time.RFC3339)
		if _, err := fmt.Fprintln(stdout, at); err != nil {
			return err
		}
		if occurrence.Note != "" {
			fmt.Fprintf(stderr, "note: %s: %s\n", at, occurrence.Note)
		}
	}
	return nil
}

// occurrenceJSON is the shape of one element of `schedule next --json`.
type occurrenceJSON struct {
	At      time.Time `json:"at"`
	Nominal string    `json:"nominal"`
	Shifted bool      `json:"shifted"`
	Note    string    `json:"note"`
}

func printOccurrencesJSON(w io.Writer, occurrences []schedule.Occurrence) error {
	out := make([]occurrenceJSON, len(occurrences))
	for i, occurrence := range occurrences {
		out[i] = occurrenceJSON{At: occurrence.At, Nominal: occurrence.Nominal, Shifted: occurrence.Shifted, Note: occurrence.Note}
	}
	encoder := json.NewEncoder(w)
	encoder.SetIndent("", "  ")
	return encoder.Encode(out)
}
