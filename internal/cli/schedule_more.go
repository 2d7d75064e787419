package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// The schedule commands that change a schedule's settings (update) or
// start its runs outside its chain of slots (trigger, backfill), and the
// one that reads its run ledger (history).
//
// trigger and backfill start runs through the CLI's insert-only workflow
// client, which registers no workflow types: a run takes the run policy
// (max attempts, queue, priority, timeout) the schedule sets, and where it
// sets none Tributary's defaults (10 attempts, queue "default", priority
// 1), not the workflow type's own, which only the service knows.
func scheduleMoreCommands(env *Env) []*cobra.Command {
	return []*cobra.Command{
		command(env, &cobra.Command{
			Use:   "update <schedule-id> [--name <name>] [--cron <expression>] [--tz <zone>] [--input <json>] [--overlap <policy>] [flags]",
			Short: "Change a schedule's settings: a new --cron or --tz takes effect at once, the others from the next slot",
			Example: `tributary schedule update 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --cron "0 3 * * *" --tz Europe/Paris
			tributary schedule update 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --overlap allow --max-attempts 5 --json`,
		}, setupScheduleUpdate),
		command(env, &cobra.Command{
			Use:   "trigger <schedule-id> [--input <json>] [--overlap <policy>] [flags]",
			Short: "Start a run of a schedule now, outside its cron; its slots are not affected",
			Example: `tributary schedule trigger 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e
			tributary schedule trigger 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --input '{"to": "me"}' --overlap allow --json`,
		}, setupScheduleTrigger),
		command(env, &cobra.Command{
			Use:   "backfill <schedule-id> --from <time> --to <time> [flags]",
			Short: "Run the slots of a past time range that have no run yet: each once, oldest first, one after the other by default",
			Long: `Backfills in batches of up to 1000 slots, oldest first, each batch in one transaction,
			with a line of progress per batch. The backfill as a whole is not atomic: when it stops
			half-way (an error, Ctrl-C), the batches it reported are done and stay done, and the error
			says where it stopped. Running it again is safe and finishes it: a slot that has its run
			already is never run twice.`,
			Example: `tributary schedule backfill 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --from 2026-03-01T00:00:00Z --to 2026-03-08T00:00:00Z`,
		}, setupScheduleBackfill),
		command(env, &cobra.Command{
			Use:   "history <schedule-id> [--status <status>] [--limit <n>] [--after <run-id>] [flags]",
			Short: "List a schedule's runs, newest first: the slots that ran or were skipped (and why), and the triggered runs",
			Example: `tributary schedule history 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e
			tributary schedule history 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --status skipped --json`,
		}, setupScheduleHistory),
	}
}

const (
	// maxBackfillSlots bounds the slots one `schedule backfill` runs. It
	// asks schedule.Client.Backfill for at most schedule.MaxBackfill at a
	// time.
	maxBackfillSlots = 100 * schedule.MaxBackfill

	// overlapPolicies lists the overlap policies, for messages.
	overlapPolicies = "skip, allow, queue or replace"
)

// updateValidationHints say which flag of update to fix for a
// *schedule.ValidationError whose message does not say what to do.
var updateValidationHints = map[string]string{
	"Name":    "pass a shorter --name",
	"Overlap": "fix --overlap",
	"Input":   "pass a smaller --input",
	"Queue":   "fix --queue",
	"Cron":    "fix --cron or --tz",
}

func setupScheduleUpdate(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	name := fs.String("name", "", "the schedule's new `name`")
	description := fs.String("description", "", "the schedule's new description, free `text` (\"\" clears it)")
	expr := fs.String("cron", "", "the new cron `expression`; the pending slot is replaced by the first slot of the new timing")
	zone := fs.String("tz", "", "the new IANA time `zone` of the expression, such as Europe/Paris (\"\" for UTC); the pending slot is replaced like --cron's")
	input := fs.String("input", "", "the new input of each run, a `JSON` value such as '{\"to\": \"ops\"}', @file.json or - for standard input")
	overlap := fs.String("overlap", "", "the new overlap `policy`: "+overlapPolicies+" (see 'schedule create --help')")
	catchUp := fs.Duration("catchup", 0, "the new catch-up window, how late a slot may fire and still run, a `duration` such as 5m (0: not at all)")
	maxAttempts := fs.Int("max-attempts", 0, "the new number `n` of attempts of each run, or 0 for the workflow type's default")
	priority := fs.Int("priority", 0, "the new River priority of each run, `n` from 1 (highest) to 4, or 0 for the workflow type's default")
	queue := fs.String("queue", "", "the new River `queue` of each run, or \"\" for the workflow type's default")
	timeout := fs.Duration("timeout", 0, "the new time limit of each run's attempts, a `duration` such as 10m, or 0 for the workflow type's default")
	asJSON := fs.Bool("json", false, "print the schedule as it is after the update, as JSON (like get --json, without fire times)")

	return func(ctx context.Context, args []string) error {
		id, err := scheduleIDArg("update", args)
		if err != nil {
			return err
		}
		// Only the flags given change: a flag's zero value is a setting too
		// (--description "", --max-attempts 0).
		p := &schedule.UpdateParams{}
		changed, inputSet := false, false
		fs.Visit(func(f *pflag.Flag) {
			changed = changed || !slices.Contains([]string{"database-url", "schema", "json", "log-level", "log-format"}, f.Name)
			switch f.Name {
			case "name":
				p.Name = name
			case "description":
				p.Description = description
			case "cron":
				p.Cron = expr
			case "tz":
				p.TimeZone = zone
			case "input":
				inputSet = true
			case "overlap":
				p.Overlap = (*schedule.OverlapPolicy)(overlap)
			case "catchup":
				p.CatchUpWindow = catchUp
			case "max-attempts":
				p.MaxAttempts = maxAttempts
			case "priority":
				p.Priority = priority
			case "queue":
				p.Queue = queue
			case "timeout":
				p.Timeout = timeout
			}
		})
		if inputSet {
			input, err := jsonFlag(env, "input", *input, `{"to": "ops"}`)
			if err != nil {
				return err
			}
			p.Input = input
		}
		switch {
		case !changed:
			return withHint(usageErrorf("schedule update needs a setting to change"),
				fmt.Sprintf(`pass one or more of --name, --description, --cron, --tz, --input, --overlap, --catchup, --max-attempts, --priority, --queue and --timeout, e.g. tributary schedule update %s --cron "0 3 * * *"`, id))
		case *catchUp < 0:
			return withHint(usageErrorf("--catchup must not be negative, not %s", *catchUp), "pass --catchup 0 to skip every slot found late")
		case *maxAttempts < 0:
			return withHint(usageErrorf("--max-attempts must be at least 1, or 0 for the workflow type's default, not %d", *maxAttempts), "leave it out to keep the schedule's")
		case *priority < 0 || *priority > 4:
			return withHint(usageErrorf("--priority must be from 1 to 4, or 0 for the workflow type's default, not %d", *priority), "leave it out to keep the schedule's")
		case *timeout < 0:
			return withHint(usageErrorf("--timeout must not be negative, not %s", *timeout), "pass --timeout 0 for the workflow type's default, or leave it out to keep the schedule's")
		}

		sc, closeClient, err := dbFlags.scheduleClient(ctx)
		if err != nil {
			return err
		}
		defer closeClient()

		before, err := sc.Get(ctx, id)
		if err != nil {
			return scheduleError(err, id)
		}
		switch {
		case p.CatchUpWindow != nil && *p.CatchUpWindow == 0:
			none := time.Duration(-1) // a window of 0 means the default to Update, and a negative one none
			p.CatchUpWindow = &none
		case p.CatchUpWindow == nil && before.CatchUpWindow == 0:
			// Update reads the stored window of 0 back as "the default",
			// and would reset it to a minute: keep it.
			none := time.Duration(-1)
			p.CatchUpWindow = &none
		}
		s, err := sc.Update(ctx, id, p)
		if err != nil {
			return paramsError(err, id, updateValidationHints)
		}
		if *asJSON {
			return printJSON(env.Stdout, s)
		}
		_, err = fmt.Fprintf(env.Stdout, "updated schedule %s (%q); %s\n", id, s.Name, nextFireText(s, time.Now()))
		return err
	}
}

// parseOverlap checks an --overlap flag of trigger, which the schedule
// package takes as is.
func parseOverlap(value string) (schedule.OverlapPolicy, error) {
	policy := schedule.OverlapPolicy(value)
	switch policy {
	case "", schedule.OverlapSkip, schedule.OverlapAllow, schedule.OverlapQueue, schedule.OverlapReplace:
		return policy, nil
	}
	return "", withHint(usageErrorf("--overlap %q is not an overlap policy", value), "use one of "+overlapPolicies)
}

func setupScheduleTrigger(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	input := fs.String("input", "", "the input of this run, a `JSON` value such as '{\"to\": \"ops\"}', @file.json or - for standard input (default the schedule's)")
	overlap := fs.String("overlap", "", "the overlap `policy` of this run, what it does while a run of the schedule is unfinished: "+overlapPolicies+" (default the schedule's)")
	asJSON := fs.Bool("json", false, "print the run as JSON (like 'workflow get --json') instead of its id")

	return func(ctx context.Context, args []string) error {
		id, err := scheduleIDArg("trigger", args)
		if err != nil {
			return err
		}
		opts := &schedule.TriggerOpts{}
		var inputErr error
		fs.Visit(func(f *pflag.Flag) {
			if f.Name == "input" {
				opts.Input, inputErr = jsonFlag(env, "input", *input, `{"to": "ops"}`)
			}
		})
		if inputErr != nil {
			return inputErr
		}
		if opts.Overlap, err = parseOverlap(*overlap); err != nil {
			return err
		}

		sc, wf, closeClient, err := dbFlags.scheduleClients(ctx)
		if err != nil {
			return err
		}
		defer closeClient()

		s, err := sc.Get(ctx, id)
		if err != nil {
			return scheduleError(err, id)
		}
		runID, err := sc.Trigger(ctx, id, opts)
		if err != nil {
			return runsError(err, id, "fix --input")
		}
		run, err := wf.GetRun(ctx, runID)
		if err != nil {
			return workflowError(err, runID)
		}
		if *asJSON {
			err = printJSON(env.Stdout, run)
		} else {
			_, err = fmt.Fprintln(env.Stdout, runID)
		}
		if err != nil {
			return err
		}
		if run.Status == workflow.StatusSkipped {
			fmt.Fprintf(env.Stderr, "note: run %s was recorded as skipped (%s): a run of schedule %s is unfinished and its overlap policy is %s; pass --overlap allow to run alongside it\n",
				runID, run.SkipReason, id, cmp.Or(opts.Overlap, s.Overlap))
		}
		return nil
	}
}

// runsError is scheduleError for a call that starts runs of schedule id
// (Trigger, Backfill): their validation errors, and the workflow client's
// (an input over its size limit), are mistakes on the command line; hint
// says what to fix when the message does not.
func runsError(err error, id uuid.UUID, hint string) error {
	if errors.Is(err, schedule.ErrInvalid) || errors.Is(err, workflow.ErrInvalid) {
		return withHint(&usageError{err: err}, hint)
	}
	return scheduleError(err, id)
}

// backfillJSON is the shape of `schedule backfill --json`: the range, and
// what became of its slots (schedule.BackfillResult).
type backfillJSON struct {
	ScheduleID uuid.UUID `json:"schedule_id"`
	From       time.Time `json:"from"`
	To         time.Time `json:"to"`
	schedule.BackfillResult
}

// addBackfill adds a batch's result to the total.
func addBackfill(total, batch *schedule.BackfillResult) {
	total.Started += batch.Started
	total.Queued += batch.Queued
	total.Existing += batch.Existing
	total.Rerun += batch.Rerun
	for reason, n := range batch.Skipped {
		if total.Skipped == nil {
			total.Skipped = map[string]int{}
		}
		total.Skipped[reason] += n
	}
}

func setupScheduleBackfill(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	from := fs.String("from", "", "the RFC 3339 `time` the range starts at, such as 2026-03-01T00:00:00Z: the slots at or after it run (required)")
	to := fs.String("to", "", "the RFC 3339 `time` the range ends at, at most now: the slots before it run (required)")
	overlap := fs.String("overlap", "", "how the backfilled runs overlap: buffer (all of them, one after the other), allow (all at once), "+
		"skip or queue (the schedule policies: slots are skipped while one runs), replace (cancel the unfinished runs, then all at once) (default buffer)")
	rerunSkipped := fs.Bool("rerun-skipped", false, "also run the slots that were recorded as skipped (overlap, missed, a grant); their record is replaced by the run")
	asJSON := fs.Bool("json", false, "print {schedule_id, from, to, slots, started, queued, existing, rerun, skipped} as JSON instead of progress lines")

	return func(ctx context.Context, args []string) error {
		id, err := scheduleIDArg("backfill", args)
		if err != nil {
			return err
		}
		var missing []string
		for flagName, value := range map[string]string{"from": *from, "to": *to} {
			if value == "" {
				missing = append(missing, "--"+flagName)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			return withHint(usageErrorf("schedule backfill needs %s", joinWords(missing)),
				fmt.Sprintf("e.g. tributary schedule backfill %s --from 2026-03-01T00:00:00Z --to 2026-03-08T00:00:00Z", id))
		}
		fromAt, err := parseFlagTime("from", *from)
		if err != nil {
			return err
		}
		toAt, err := parseFlagTime("to", *to)
		if err != nil {
			return err
		}
		now := time.Now()
		switch {
		case !toAt.After(fromAt):
			return withHint(usageErrorf("--from %s is not before --to %s", *from, *to), "the range runs from --from up to --to; pass a --from earlier than --to")
		case toAt.After(now):
			return withHint(usageErrorf("--to %s is in the future", *to), "a backfill runs past slots, and the future ones fire on their own; pass a --to up to now")
		}

		sc, closeClient, err := dbFlags.scheduleClient(ctx)
		if err != nil {
			return err
		}
		defer closeClient()

		s, err := sc.Get(ctx, id)
		if err != nil {
			return scheduleError(err, id)
		}
		spec, err := s.Spec()
		if err != nil {
			return scheduleError(err, id)
		}
		// The slots in [from, to), found as Backfill finds them.
		var slots []time.Time
		for after := fromAt.Add(-time.Second); len(slots) <= maxBackfillSlots; {
			occurrence, ok := spec.Next(after)
			if !ok || !occurrence.At.Before(toAt) {
				break
			}
			slots = append(slots, occurrence.At)
			after = occurrence.At
		}
		if len(slots) > maxBackfillSlots {
			return withHint(usageErrorf("%s … %s holds more than %d slots of %q", *from, *to, maxBackfillSlots, s.Cron),
				"backfill a shorter range at a time")
		}

		// Backfill at most schedule.MaxBackfill slots a call, each call one
		// transaction: a backfill stopped half-way leaves its earlier
		// batches done, and running it again skips the slots that have
		// their run.
		loc := scheduleLocation(s)
		out := backfillJSON{ScheduleID: id, From: fromAt, To: toAt, BackfillResult: schedule.BackfillResult{Slots: len(slots)}}
		if len(slots) == 0 && !*asJSON {
			return printBackfillProgress(env.Stdout, fromAt, toAt, loc, &out.BackfillResult, "")
		}
		opts := &schedule.BackfillOpts{Overlap: schedule.OverlapPolicy(*overlap), RerunSkipped: *rerunSkipped}
		batches := (len(slots) + schedule.MaxBackfill - 1) / schedule.MaxBackfill
		if batches > 1 && !*asJSON {
			fmt.Fprintf(env.Stdout, "backfilling %d slots in %d batches of up to %d, one transaction each\n", len(slots), batches, schedule.MaxBackfill)
		}
		for start := 0; start < len(slots); start += schedule.MaxBackfill {
			end := min(start+schedule.MaxBackfill, len(slots))
			// A batch after the first starts right after the previous
			// batch's last slot: Backfill finds its first slot as the one
			// after that, as it was found here (an @every spec counts from
			// there). It is shown starting at its first slot.
			batchFrom, shownFrom, batchTo := fromAt, fromAt, toAt
			if start > 0 {
				batchFrom, shownFrom = slots[start-1].Add(time.Second), slots[start]
			}
			if end < len(slots) {
				batchTo = slots[end]
			}
			res, err := sc.Backfill(ctx, id, batchFrom, batchTo, opts)
			if err != nil && start > 0 {
				return withHint(fmt.Errorf("backfill stopped at %s, after %d of %d slots: %w", zonedTime(shownFrom, loc), start, len(slots), err),
					fmt.Sprintf("the slots before it are backfilled and stay so: to finish, run the command again with --from %s", shownFrom.UTC().Format(time.RFC3339)))
			}
			if err != nil {
				return runsError(err, id, "")
			}
			addBackfill(&out.BackfillResult, res)
			if !*asJSON {
				done := ""
				if batches > 1 {
					done = fmt.Sprintf(" (%d of %d slots done)", end, len(slots))
				}
				if err := printBackfillProgress(env.Stdout, shownFrom, batchTo, loc, res, done); err != nil {
					return err
				}
			}
		}
		if *asJSON {
			return printJSON(env.Stdout, out)
		}
		if batches > 1 {
			_, err = fmt.Fprintf(env.Stdout, "backfilled schedule %s (%q): %s\n", id, s.Name, &out.BackfillResult)
		}
		return err
	}
}

// printBackfillProgress prints one batch of a backfill: "backfilling
// 2026-03-01 00:00:00 UTC … 2026-03-08 00:00:00 UTC: 7 slots: 1 started, 6
// queued to run one after the other", and then done.
func printBackfillProgress(w io.Writer, from, to time.Time, loc *time.Location, res *schedule.BackfillResult, done string) error {
	_, err := fmt.Fprintf(w, "backfilling %s … %s: %s%s\n", zonedTime(from, loc), zonedTime(to, loc), res, done)
	return err
}

func setupScheduleHistory(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	status := fs.String("status", "", "list only runs in this `status`: pending, running, sleeping, waiting, completed, failed, cancelled or skipped")
	limit := fs.Int("limit", defaultListLimit, fmt.Sprintf("list at most `n` runs, at most %d (default %d)", maxListLimit, defaultListLimit))
	after := fs.String("after", "", "list the runs after this `run-id` (the last one of the previous page)")
	asJSON := fs.Bool("json", false, "print a JSON array of runs (like 'workflow list --json') instead of a table")

	return func(ctx context.Context, args []string) error {
		id, err := scheduleIDArg("history", args)
		if err != nil {
			return err
		}
		params := &workflow.ListParams{Status: workflow.Status(*status), Limit: *limit}
		if *status != "" && !isRunStatus(params.Status) {
			return withHint(usageErrorf("--status %q is not a run status", *status),
				"use one of pending, running, sleeping, waiting, completed, failed, cancelled or skipped")
		}
		if err := checkLimit(*limit); err != nil {
			return err
		}
		if *after != "" {
			runID, err := parseRunID("--after", *after)
			if err != nil {
				return err
			}
			params.After = &runID
		}

		sc, closeClient, err := dbFlags.scheduleClient(ctx)
		if err != nil {
			return err
		}
		defer closeClient()

		// History lists nothing for an unknown schedule; Get tells it apart,
		// and gives the zone to show fire times in.
		s, err := sc.Get(ctx, id)
		if err != nil {
			return scheduleError(err, id)
		}
		runs, err := sc.History(ctx, id, params)
		if err != nil {
			return runsError(err, id, "")
		}
		return printListing(env, runs, *asJSON, *limit, "runs",
			func(r *workflow.Run) uuid.UUID { return r.ID },
			func(w io.Writer) error { return printHistoryTable(w, runs, scheduleLocation(s), time.Now()) })
	}
}

// printHistoryTable prints a schedule's runs, their fire times in the
// schedule's zone loc.
func printHistoryTable(w io.Writer, runs []*workflow.Run, loc *time.Location, now time.Time) error {
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "RUN\tFIRE AT\tSTATUS\tSKIP REASON\tATTEMPT\tFINISHED\tNOTE")
	for _, run := range runs {
		fireAt := "-"
		if run.FireAt != nil {
			fireAt = zonedTime(*run.FireAt, loc)
		}
		fmt.Fprintf(table, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\n", run.ID, fireAt, run.Status, orDash(oneLine(run.SkipReason)),
			run.Attempt, run.MaxAttempts, relativeTimeOrDash(run.FinishedAt, now), historyNote(run.Metadata))
	}
	return table.Flush()
}

// historyNote explains a run of a schedule from its metadata: "triggered"
// for a run of `schedule trigger`, and what daylight saving time did to its
// slot.
func historyNote(metadata json.RawMessage) string {
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(metadata, &meta) // metadata that can't be read has no note
	var notes []string
	if _, ok := meta["schedule_trigger"]; ok {
		notes = append(notes, "triggered")
	}
	var dstNote string
	if json.Unmarshal(meta["schedule_dst_note"], &dstNote) == nil && dstNote != "" {
		notes = append(notes, dstNote)
	}
	return orDash(oneLine(strings.Join(notes, "; ")))
}
