package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/durfmt"
	"github.com/tributary-go/tributary/internal/wfruntime"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
)

// scheduleGetFireTimes is how many fire times `schedule get` prints.
const scheduleGetFireTimes = 5

// newScheduleGetCommand is `tributary schedule get`.
func newScheduleGetCommand(env *Env) *cobra.Command {
	return refCommand(env, &cobra.Command{
		Use:   "get " + scheduleRefUsage + " [flags]",
		Short: "Show a schedule: its settings, its last and next fire, and its next 5 fire times",
		Example: `tributary schedule get 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e
			tributary schedule get nightly-report --owner acme --json`,
	}, setupScheduleGet)
}

func setupScheduleGet(fs *pflag.FlagSet, env *Env) Action {
	return scheduleCommand(fs, env, "get", fmt.Sprintf("print the schedule and its next %d fire times as JSON, as GET /api/schedules/{id} answers it", wire.NextFireTimes), func(ctx context.Context, c *commandRun, ref schedule.Ref) error {
		s, err := c.sc.Get(ctx, ref)
		if err != nil {
			return scheduleError(err, ref)
		}
		if c.asJSON {
			return printScheduleAnswer(ctx, env, c.sc, c.wf, s, nil)
		}
		ref = schedule.ByID(s.ID) // the schedule read is the one shown
		workerLive, err := c.wf.TypeServed(ctx, s.Workflow)
		if err != nil {
			return scheduleError(err, ref)
		}
		occurrences, err := c.sc.Next(ctx, ref, scheduleGetFireTimes)
		if err != nil {
			return scheduleError(err, ref)
		}
		var grant *schedule.Grant // nil: none, or not found
		if s.GrantID != nil {
			grant, err = c.sc.GetGrant(ctx, *s.GrantID)
			if err != nil && !errors.Is(err, schedule.ErrGrantNotFound) {
				return scheduleError(err, ref)
			}
		}
		return printSchedule(env.Stdout, s, grant, occurrences, workerLive, time.Now())
	})
}

// grantText describes a schedule's execution grant g for `schedule get`;
// g is nil when the grant is not found.
func grantText(id uuid.UUID, g *schedule.Grant, workflowType string, now time.Time) string {
	if g == nil {
		return fmt.Sprintf("%s (not found: each slot is skipped as %q)", id, grantSkipReason(nil, workflowType, now))
	}
	if problem := grantProblem(g, workflowType, now); problem != "" {
		return fmt.Sprintf("%s (subject %q): it %s; each slot is skipped as %q", id, g.Subject, problem, grantSkipReason(g, workflowType, now))
	}
	text := fmt.Sprintf("%s (subject %q, scopes %s", id, g.Subject, strings.Join(g.Scopes, ", "))
	if g.ExpiresAt != nil {
		text += "; expires " + g.ExpiresAt.UTC().Format(time.RFC3339) + ", " + durfmt.RelativeDays(*g.ExpiresAt, now)
	}
	return text + ")"
}

// zonedTimeUTC is t in loc, then in UTC and relative to now:
// "2026-03-08 03:00:00 EDT (2026-03-08T07:00:00Z, in 3d)".
func zonedTimeUTC(t time.Time, loc *time.Location, now time.Time) string {
	return zonedTime(t, loc) + " (" + t.UTC().Format(time.RFC3339) + ", " + durfmt.RelativeDays(t, now) + ")"
}

// overlapText explains an overlap policy.
func overlapText(policy schedule.OverlapPolicy) string {
	switch policy {
	case schedule.OverlapSkip:
		return "skip (a slot is skipped while the previous run is unfinished)"
	case schedule.OverlapAllow:
		return "allow (a slot starts its run even while the previous one is unfinished)"
	case "queue":
		return "queue (a slot's run waits for the previous run to finish; at most one waits)"
	case "replace":
		return "replace (a slot cancels the unfinished runs and starts its own)"
	}
	return string(policy)
}

// catchUpText explains a catch-up policy.
func catchUpText(policy schedule.CatchUpPolicy) string {
	switch policy {
	case schedule.CatchUpWindow, "":
		return "window (a slot found later than the catch-up window is skipped as missed)"
	case schedule.CatchUpLatest:
		return "latest (of the slots found later than the catch-up window, only the most recent runs, once; the older ones do not run)"
	}
	return string(policy)
}

// printSchedule prints a schedule's fields, then its next fire times; grant
// is its execution grant, nil when it has none or it is not found.
func printSchedule(w io.Writer, s *schedule.Schedule, grant *schedule.Grant, occurrences []schedule.Occurrence, workerLive bool, now time.Time) error {
	loc := scheduleLocation(s)
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	field := func(name, format string, args ...any) {
		fmt.Fprintf(table, "%s:\t%s\n", name, oneLine(fmt.Sprintf(format, args...)))
	}
	field("ID", "%s", s.ID)
	field("Name", "%s", s.Name)
	if s.Description != "" {
		field("Description", "%s", s.Description)
	}
	field("Owner", "%s", orDash(s.Owner))
	if s.Key != "" {
		field("Key", "%s", s.Key)
	}
	field("Run tenant", "%s", runTenantDetail(s))
	if note := declaredNote(s); note != "" {
		field("Origin", "%s: %s", s.Origin(), note)
	} else {
		field("Origin", "%s", s.Origin())
	}
	if workerLive {
		field("Workflow", "%s", s.Workflow)
	} else {
		field("Workflow", "%s (warning: %s)", s.Workflow, wfruntime.NoWorkerWarning(s.Workflow))
	}
	field("Input", "%s", jsonText(s.Input))
	if s.RRule != "" {
		field("RRULE", "%s", strings.ReplaceAll(s.RRule, "\n", "; "))
	} else {
		field("Cron", "%s", s.Cron)
	}
	field("Time zone", "%s", s.TimeZone)
	if s.StartAt != nil {
		field("Start", "%s (%s)", zonedTime(*s.StartAt, loc), s.StartAt.UTC().Format(time.RFC3339))
	}
	if s.EndAt != nil {
		field("End", "%s (%s)", zonedTime(*s.EndAt, loc), s.EndAt.UTC().Format(time.RFC3339))
	}
	field("Overlap", "%s", overlapText(s.Overlap))
	field("Catch-up window", "%s (how late a slot may fire and still run)", durfmt.Human(s.CatchUpWindow))
	field("Catch-up policy", "%s", catchUpText(s.CatchUp))
	if len(s.Calendars) > 0 {
		what := "a slot on their dates is skipped"
		if s.OnExcluded == schedule.ExcludedNextBusinessDay {
			what = "a slot on their dates moves to the next business day"
		}
		field("Calendars", "%s (%s)", strings.Join(s.Calendars, ", "), what)
	}
	if dst := s.DescribeDST(); dst != "" {
		field("DST policy", "%s", dst) // the defaults (jump, first) go without saying, as the package documents them
	}
	var policy []string
	if s.MaxAttempts != 0 {
		policy = append(policy, fmt.Sprintf("max attempts %d", s.MaxAttempts))
	}
	if s.Queue != "" {
		policy = append(policy, "queue "+s.Queue)
	}
	if s.Priority != 0 {
		policy = append(policy, fmt.Sprintf("priority %d", s.Priority))
	}
	if s.Timeout != 0 {
		policy = append(policy, "timeout "+durfmt.Human(s.Timeout))
	}
	if s.Retry != nil {
		policy = append(policy, s.Retry.String())
	}
	if len(policy) > 0 {
		field("Run policy", "%s (the rest: the workflow type's defaults)", strings.Join(policy, ", "))
	} else {
		field("Run policy", "the workflow type's defaults")
	}
	if s.KeepRuns > 0 {
		field("Keeps runs", "the last %d whatever their age (older finished runs follow the run retention)", s.KeepRuns)
	}
	if s.GrantID != nil {
		field("Grant", "%s", grantText(*s.GrantID, grant, s.Workflow, now))
	}
	switch {
	case s.Paused && s.PauseNote != "":
		field("Paused", "yes: %s", s.PauseNote)
	default:
		field("Paused", "%s", yesNo(s.Paused))
	}
	switch {
	case s.NextFireAt != nil:
		field("Next fire", "%s", zonedTimeUTC(*s.NextFireAt, loc, now))
	case s.Paused:
		field("Next fire", "- (paused)")
	default:
		field("Next fire", "- (no slot left before its end)")
	}
	if s.LastFireAt != nil {
		field("Last fire", "%s", zonedTimeUTC(*s.LastFireAt, loc, now))
	} else {
		field("Last fire", "never")
	}
	field("Runs", "%d started, %d failed", s.RunCount, s.FailureCount)
	if s.LastRunStatus != "" {
		field("Last run status", "%s", s.LastRunStatus)
	}
	field("Created", "%s (%s)", s.CreatedAt.UTC().Format(time.RFC3339), durfmt.RelativeDays(s.CreatedAt, now))
	if err := table.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	return printFireTimes(w, s, occurrences, now)
}

// printFireTimes prints a schedule's next fire times, with what daylight
// saving time does to them.
func printFireTimes(w io.Writer, s *schedule.Schedule, occurrences []schedule.Occurrence, now time.Time) error {
	if len(occurrences) == 0 {
		_, err := fmt.Fprintln(w, "no fire times left before its end")
		return err
	}
	loc := scheduleLocation(s)
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "NEXT FIRE TIMES\tUTC\tIN\tNOTE")
	for _, occurrence := range occurrences {
		fmt.Fprintf(table, "%s\t%s\t%s\t%s\n", zonedTime(occurrence.At, loc), occurrence.At.UTC().Format(time.RFC3339),
			durfmt.RelativeDays(occurrence.At, now), orDash(occurrence.Note))
	}
	if err := table.Flush(); err != nil {
		return err
	}
	if s.Paused {
		_, err := fmt.Fprintf(w, "\nthe schedule is paused: these slots fire only once it is resumed ('tributary schedule resume %s')\n", scheduleArgs(s))
		return err
	}
	return nil
}
