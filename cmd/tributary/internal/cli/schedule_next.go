package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
)

// newScheduleNextCommand is `tributary schedule next`.
func newScheduleNextCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "next --cron <expression> | --rrule <rule> [--tz <zone>] [--dst-gap jump|shift|skip] [--dst-fold first|last|both] [--exclude <dates>] [--on-excluded skip|next-business-day] [--from <time>] [--count <n>] [--json]",
		Short: "Print when a cron expression fires next in a time zone, with its DST rules (needs no database)",
		Example: `tributary schedule next --cron "30 2 * * *" --tz America/New_York --from 2026-03-07T00:00:00Z
			tributary schedule next --cron "30 1 * * *" --tz America/New_York --dst-fold both --from 2026-10-31T00:00:00Z
			tributary schedule next --cron "0 18 LW * *" --tz America/New_York --count 12 --exclude 2027-12-31
			tributary schedule next --cron "0 9 * * 1-5" --exclude 2026-12-25,2027-01-01 --on-excluded next-business-day
			tributary schedule next --rrule "DTSTART:20270105T090000;RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU" --tz Europe/Paris
			tributary schedule next --cron @hourly --count 24 --json`,
	}, setupScheduleNext)
}

func setupScheduleNext(fs *pflag.FlagSet, env *Env) Action {
	expr := fs.String("cron", "", "cron `expression`: 5 fields like \"0 9 * * 1-5\", 6 with leading seconds, or a descriptor like @daily or \"@every 1h\" (required)")
	rruleText := fs.String("rrule", "", "an RFC 5545 recurrence `rule` instead of --cron: a DTSTART (the first occurrence's local time) and the RULE, on two lines or joined by ;, such as \"DTSTART:20270105T090000;RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU\"")
	zone := fs.String("tz", "UTC", "IANA time `zone` the expression is in, such as Europe/Paris (default UTC)")
	from := fs.String("from", "", "print fire times after this RFC 3339 `time`, such as 2026-03-08T00:00:00Z (default now)")
	count := fs.Int("count", 5, fmt.Sprintf("print the next `n` fire times, at most %d (default 5)", maxScheduleNextCount))
	gap := fs.String("dst-gap", "jump", dstGapUsage)
	fold := fs.String("dst-fold", "first", dstFoldUsage)
	exclude := fs.String("exclude", "", "local `dates` the expression does not fire on, comma-separated, such as 2026-12-25,2027-01-01 (a holiday calendar's, for a preview)")
	onExcluded := fs.String("on-excluded", string(schedule.ExcludedSkip), onExcludedUsage)
	asJSON := fs.Bool("json", false, "print a JSON array of {at, nominal, shifted, skipped, excluded, note} instead of one time per line")

	return func(ctx context.Context, args []string) error {
		switch {
		case *expr != "" && *rruleText != "":
			return withHint(usageErrorf("pass --cron or --rrule, not both"), "a schedule has one rule")
		case len(args) > 0 && (*expr != "" || *rruleText != ""):
			return withHint(usageErrorf("unexpected argument %q", args[0]),
				`quote the whole cron expression, e.g. --cron "0 9 * * 1-5"`)
		case len(args) > 0:
			return noArgs(args)
		case *expr == "" && *rruleText == "":
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

		var spec *schedule.Spec
		var err error
		if *rruleText != "" {
			if spec, err = schedule.ParseRRule(rruleLines(*rruleText), *zone); err != nil {
				return withHint(err, "fix --rrule or --tz")
			}
		} else if spec, err = schedule.ParseSpec(*expr, *zone); err != nil {
			return withHint(err, "fix --cron or --tz")
		}
		if spec, err = spec.WithDST(schedule.DSTPolicy{Gap: schedule.DSTGap(*gap), Fold: schedule.DSTFold(*fold)}); err != nil {
			return dstUsageError(err)
		}
		var excluded []schedule.ExcludedDate
		for _, text := range strings.Split(*exclude, ",") {
			if text = strings.TrimSpace(text); text == "" {
				continue
			}
			date, err := time.Parse(time.DateOnly, text)
			if err != nil {
				return withHint(usageErrorf("--exclude %q is not a date", text), "use dates like 2026-12-25, comma-separated")
			}
			excluded = append(excluded, schedule.ExcludedDate{Date: date, Calendar: "--exclude"})
		}
		if spec, err = spec.WithExclusions(excluded, schedule.OnExcluded(*onExcluded)); err != nil {
			var verr *schedule.ValidationError
			if errors.As(err, &verr) {
				problem, _, _ := strings.Cut(verr.Problem, "; use")
				if !strings.HasPrefix(problem, `"`) {
					return withHint(usageErrorf("%s", problem), "pass --on-excluded skip")
				}
				return withHint(usageErrorf("--on-excluded %s", problem), "pass --on-excluded skip or next-business-day")
			}
			return err
		}
		occurrences := nextRuns(spec, after, *count)
		if *asJSON {
			return printJSON(env.Stdout, wire.NewOccurrences(occurrences))
		}
		return printOccurrences(env.Stdout, env.Stderr, occurrences)
	}
}

// splitList splits a comma-separated flag into its items, without
// blanks; an empty slice for "".
func splitList(text string) []string {
	out := []string{}
	for _, item := range strings.Split(text, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// rruleLines splits a one-line --rrule ("DTSTART:…;RRULE:…") into the
// lines ParseRRule reads.
func rruleLines(text string) string {
	return strings.Replace(text, ";RRULE:", "\nRRULE:", 1)
}

// The usage of the --dst-gap, --dst-fold and --on-excluded flags.
const (
	onExcludedUsage = "what a slot on an excluded date does: `skip|next-business-day` (skip it, or run at the same time on the next Monday-to-Friday date not excluded) (default skip)"
	dstGapUsage     = "what a fixed-time expression does with a time the clocks jump over: `jump|shift|skip` (run right after the jump, run later by the jump's length, or not at all: the slot is recorded as skipped) (default jump)"
	dstFoldUsage    = "what a fixed-time expression does with a time that occurs twice: run at the `first|last|both` (default first)"
)

// dstUsageError turns WithDST's *schedule.ValidationError into a usage
// error naming the flag.
func dstUsageError(err error) error {
	var verr *schedule.ValidationError
	if !errors.As(err, &verr) {
		return err
	}
	flag, values := "--dst-gap", "jump, shift or skip"
	if verr.Field == "DSTFold" {
		flag, values = "--dst-fold", "first, last or both"
	}
	problem, _, _ := strings.Cut(verr.Problem, ";")
	return withHint(usageErrorf("%s %s", flag, problem), "pass "+flag+" "+values)
}

// maxScheduleNextCount bounds `schedule next --count`.
const maxScheduleNextCount = 1000

// nextRuns returns the occurrences after after up to the count-th that
// runs: a skipped slot (DST gap policy skip) comes with them and does not
// count.
func nextRuns(spec *schedule.Spec, after time.Time, count int) []schedule.Occurrence {
	var out []schedule.Occurrence
	for runs := 0; runs < count; {
		occurrence, ok := spec.Next(after)
		if !ok {
			break
		}
		out = append(out, occurrence)
		if !occurrence.Skipped {
			runs++
		}
		after = occurrence.At
	}
	return out
}

// printOccurrences prints one RFC 3339 time per line on stdout, for
// scripts, and what daylight saving time did to any of them on stderr,
// with the slots it skipped.
func printOccurrences(stdout, stderr io.Writer, occurrences []schedule.Occurrence) error {
	for _, occurrence := range occurrences {
		at := occurrence.At.Format(time.RFC3339)
		if occurrence.Skipped {
			fmt.Fprintf(stderr, "note: skipped %s: %s\n", occurrence.Nominal, occurrence.Note)
			continue
		}
		if _, err := fmt.Fprintln(stdout, at); err != nil {
			return err
		}
		if occurrence.Note != "" {
			fmt.Fprintf(stderr, "note: %s: %s\n", at, occurrence.Note)
		}
	}
	return nil
}
