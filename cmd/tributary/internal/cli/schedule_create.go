package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// newScheduleCreateCommand is `tributary schedule create`.
func newScheduleCreateCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "create --name <name> --cron <expression> --workflow <type> [--tz <zone>] [--input <json>] [--key <key>] [flags]",
		Short: "Create a schedule: a run of a workflow type at each time a cron expression names in a time zone",
		Long: `With --key, the schedule is named by its key within its --owner, and creating it again
			makes nothing: when the owner has the key already with the same spec, create prints that
			schedule's id as it prints a new one's (and a note on stderr saying so); with another
			spec, it fails and says which flags differ and how to update the schedule. The other
			commands take the key (with --owner) wherever they take the id.

			Each run the schedule starts carries a tenant: --tenant, or else the --owner, so that
			per-user schedules start per-user runs with no flag ('workflow list --tenant' finds them).`,
		Example: `tributary schedule create --name "nightly report" --cron "30 2 * * *" --tz America/New_York --workflow send_report --input '{"to": "ops"}'
			tributary schedule create --key nightly-report --owner acme --name "nightly report" --cron "30 2 * * *" --workflow send_report
			tributary schedule create --name "hourly sync" --cron @hourly --workflow sync --owner team-42 --overlap allow --json
			tributary schedule create --name "user digest" --cron "0 8 * * *" --workflow digest --catchup-policy latest --grant 01a1ffb2-3fa1-781c-b9a9-3cd3e9d01250`,
	}, setupScheduleCreate)
}

func setupScheduleCreate(fs *pflag.FlagSet, env *Env) Action {
	name := fs.String("name", "", "the schedule's `name`, shown to operators (required)")
	expr := fs.String("cron", "", "cron `expression`: 5 fields like \"0 9 * * 1-5\", 6 with leading seconds, or a descriptor like @daily or \"@every 1h\" (this or --rrule is required)")
	rruleText := fs.String("rrule", "", "an RFC 5545 recurrence `rule` instead of --cron: a DTSTART (the first occurrence's local time) and the RULE, on two lines or joined by ;, such as \"DTSTART:20270105T090000;RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU\"")
	workflowType := fs.String("workflow", "", "the workflow `type` each slot starts, as a service registers it (required)")
	zone := fs.String("tz", "UTC", "IANA time `zone` the expression is in, such as Europe/Paris (default UTC)")
	input := fs.String("input", "null", "the input of each run, a `JSON` value such as '{\"to\": \"ops\"}', @file.json or - for standard input (default null)")
	owner := fs.String("owner", "", "the `owner` (tenant or user) the schedule belongs to, for 'schedule list --owner'; its --key is unique within it")
	key := fs.String("key", "", "a `key` that names the schedule within its --owner, so that creating it again makes nothing (see above); "+
		"at most 200 bytes of letters, digits and punctuation other than /, and not shaped like a schedule id (default none)")
	tenant := fs.String("tenant", "", "the `tenant` of the runs the schedule starts, 1 to 100 printable characters (default the --owner; none without one)")
	description := fs.String("description", "", "free `text` about the schedule")
	overlap := fs.String("overlap", string(schedule.OverlapSkip), "the overlap `policy`, what a slot does while the previous run is unfinished: skip (the slot), allow (a run alongside), queue (the run until the previous one finishes) or replace (cancel the previous run) (default skip)")
	catchUp := fs.Duration("catchup", schedule.DefaultCatchUpWindow, "how late a slot may fire and still run, a `duration` such as 5m (0: not at all); --catchup-policy says what a slot found later does (default 1m)")
	catchUpPolicy := fs.String("catchup-policy", string(schedule.CatchUpWindow), "what a slot found later than --catchup does, a `policy`: window (it is skipped as missed) or latest (of the slots found that late, only the most recent runs, once) (default window)")
	calendars := fs.String("calendars", "", "holiday `calendars` whose dates the schedule excludes, comma-separated (see 'tributary calendar')")
	onExcluded := fs.String("on-excluded", string(schedule.ExcludedSkip), onExcludedUsage)
	dstGap := fs.String("dst-gap", string(schedule.DSTGapJump), dstGapUsage)
	dstFold := fs.String("dst-fold", string(schedule.DSTFoldFirst), dstFoldUsage)
	start := fs.String("start", "", "the RFC 3339 `time` of the earliest slot, such as 2026-03-08T00:00:00Z (default now)")
	end := fs.String("end", "", "the RFC 3339 `time` the schedule ends: slots fire before it only (default never)")
	maxAttempts := fs.Int("max-attempts", 0, "the number `n` of attempts each run gets, at least 1 (default the workflow type's)")
	retry := addRetryFlags(fs, "each run's", "the workflow type's policy")
	keepRuns := fs.Int("keep-runs", 0, "keep the schedule's last `n` runs whatever their age; older finished runs follow the run retention (default 0: all do)")
	queue := fs.String("queue", "", "River `queue` of each run (default the workflow type's)")
	priority := fs.Int("priority", 0, "River priority of each run, `n` from 1 (highest) to 4 (default the workflow type's)")
	timeout := fs.Duration("timeout", 0, "time limit of each run's attempts, a `duration` such as 10m (default the workflow type's)")
	paused := fs.Bool("paused", false, "create the schedule paused; 'schedule resume' starts it")
	note := fs.String("note", "", "`text` saying why the schedule is paused (with --paused)")
	grant := fs.String("grant", "", "the `id` of the execution grant the runs act under (made with schedule.Client.CreateGrant); it must allow the workflow type, and a slot it no longer allows is skipped")
	requireWorker := fs.Bool("require-worker", false, "refuse to create the schedule when no live worker serves --workflow (without it: create it and warn)")
	parse := func(args []string) (*schedule.Params, error) {
		if len(args) > 0 && *expr != "" {
			return nil, withHint(usageErrorf("unexpected argument %q", args[0]),
				`quote the whole cron expression, e.g. --cron "0 9 * * 1-5"`)
		}
		if err := noArgs(args); err != nil {
			return nil, err
		}
		if fs.Changed("key") && *key == "" {
			return nil, withHint(usageErrorf("--key is empty"), "pass a key such as nightly-report, or leave --key out for a schedule without one")
		}
		var missing []string
		for flagName, value := range map[string]string{"name": *name, "cron (or --rrule)": *expr + *rruleText, "workflow": *workflowType} {
			if strings.TrimSpace(value) == "" {
				missing = append(missing, "--"+flagName)
			}
		}
		if *expr != "" && *rruleText != "" {
			return nil, withHint(usageErrorf("pass --cron or --rrule, not both"), "a schedule has one rule")
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			return nil, withHint(usageErrorf("schedule create needs %s", joinWords(missing)),
				`e.g. tributary schedule create --name "nightly report" --cron "30 2 * * *" --workflow send_report`)
		}
		inputJSON, err := jsonFlag(env, "input", *input, `{"to": "ops"}`)
		if err != nil {
			return nil, err
		}
		if err := checkTenantFlag(*tenant); err != nil {
			return nil, err
		}
		startAt, err := parseFlagTime("start", *start)
		if err != nil {
			return nil, err
		}
		endAt, err := parseFlagTime("end", *end)
		if err != nil {
			return nil, err
		}
		switch {
		case *catchUp < 0:
			return nil, withHint(usageErrorf("--catchup must not be negative, not %s", *catchUp), "pass --catchup 0 to skip every slot found late")
		case *maxAttempts < 0:
			return nil, withHint(usageErrorf("--max-attempts must be at least 1, not %d", *maxAttempts), "leave it out for the workflow type's default")
		case *priority < 0 || *priority > 4:
			return nil, withHint(usageErrorf("--priority must be from 1 to 4, not %d", *priority), "leave it out for the workflow type's default")
		case *timeout < 0:
			return nil, withHint(usageErrorf("--timeout must not be negative, not %s", *timeout), "leave it out for the workflow type's default")
		case *note != "" && !*paused:
			return nil, withHint(usageErrorf("--note is the note of a paused schedule"), "pass --paused too, or leave --note out")
		case *catchUpPolicy != string(schedule.CatchUpWindow) && *catchUpPolicy != string(schedule.CatchUpLatest):
			return nil, withHint(usageErrorf("--catchup-policy %q is not window or latest", *catchUpPolicy),
				"pass --catchup-policy window to skip the slots found late, or latest to run the most recent of them")
		}
		retryPolicy, err := retry.policy(fs)
		if err != nil {
			return nil, err
		}
		var grantID *uuid.UUID
		if *grant != "" {
			id, err := parseGrantID(*grant)
			if err != nil {
				return nil, err
			}
			grantID = &id
		}
		params := &schedule.Params{
			Name: *name, Description: *description, Owner: *owner, Key: *key, CreatedBy: "cli",
			Workflow: *workflowType, Input: inputJSON,
			Cron: *expr, RRule: rruleLines(*rruleText), TimeZone: *zone, StartAt: startAt, EndAt: endAt,
			Overlap: schedule.OverlapPolicy(*overlap), CatchUpWindow: *catchUp,
			MaxAttempts: *maxAttempts, Priority: *priority, Queue: *queue, Timeout: *timeout,
			Paused: *paused, PauseNote: *note, CatchUp: schedule.CatchUpPolicy(*catchUpPolicy), GrantID: grantID,
			RequireWorker: *requireWorker, KeepRuns: *keepRuns, Tenant: *tenant, Retry: retryPolicy,
			DSTGap: schedule.DSTGap(*dstGap), DSTFold: schedule.DSTFold(*dstFold),
			Calendars: splitList(*calendars), OnExcluded: schedule.OnExcluded(*onExcluded),
		}
		if err := (schedule.DSTPolicy{Gap: params.DSTGap, Fold: params.DSTFold}).Validate(); err != nil {
			return nil, dstUsageError(err)
		}
		if params.CatchUpWindow == 0 {
			params.CatchUpWindow = -1 // Params takes 0 for the default, and a negative window for none
		}
		return params, nil
	}
	spec := dbSpec{json: "print the schedule as JSON, as POST /api/schedules answers it, instead of its id", schedules: true}
	return dbCommand(fs, env, spec, parse, func(ctx context.Context, c *commandRun, params *schedule.Params) error {
		if grantID := params.GrantID; grantID != nil {
			// Create only checks that the grant exists; a grant that does
			// not allow the runs would make a schedule none of whose slots
			// ever runs.
			g, err := c.sc.GetGrant(ctx, *grantID)
			if errors.Is(err, schedule.ErrGrantNotFound) {
				return withHint(usageErrorf("no execution grant %s", *grantID),
					"create one with schedule.Client.CreateGrant and pass its id (the CLI has no grant commands yet)")
			}
			if err != nil {
				return scheduleError(err, schedule.Ref{})
			}
			if err := grantRefusal(g, *workflowType, time.Now()); err != nil {
				return err
			}
		}
		s, err := c.sc.Create(ctx, params)
		var noWorker *workflow.NoWorkerError
		if errors.As(err, &noWorker) {
			return withHint(err, "start the service that works it first, or leave --require-worker out to create the schedule anyway")
		}
		var conflict *schedule.KeyConflictError
		if errors.As(err, &conflict) {
			return keyConflictError(conflict, fs)
		}
		if err != nil {
			return createError(err)
		}
		if !*requireWorker { // else Create checked it
			warnNoWorker(ctx, env, c.wf, s.Workflow)
		}
		if s.Existing {
			fmt.Fprintf(env.Stderr, "note: schedule %s (%s) existed already with the same spec; nothing was created\n", s.ID, schedule.ByKey(s.Owner, s.Key))
		}
		if c.asJSON {
			return printScheduleAnswer(ctx, env, c.sc, c.wf, s, &s.Existing)
		}
		_, err = fmt.Fprintln(env.Stdout, s.ID)
		return err
	})
}

// createFlags are the flags of create that set each field of
// schedule.Params a *schedule.KeyConflictError names.
var createFlags = map[string]string{
	"Name": "name", "Description": "description", "Workflow": "workflow", "Input": "input",
	"Cron": "cron", "TimeZone": "tz", "StartAt": "start", "EndAt": "end",
	"Overlap": "overlap", "CatchUpWindow": "catchup", "CatchUp": "catchup-policy",
	"MaxAttempts": "max-attempts", "Priority": "priority", "Queue": "queue", "Timeout": "timeout",
	"GrantID": "grant", "KeepRuns": "keep-runs", "Tenant": "tenant", "DSTGap": "dst-gap", "DSTFold": "dst-fold",
	"RRule": "rrule", "Calendars": "calendars", "OnExcluded": "on-excluded",
}

// keyConflictError is the error of create with a key whose schedule has
// another spec than fs's flags give: the flags that differ, and the
// update that gives that schedule this spec.
func keyConflictError(conflict *schedule.KeyConflictError, fs *pflag.FlagSet) error {
	diffs := make([]string, len(conflict.Diffs))
	var updates, fixed []string // update's flags and values; the flags update can't change
	for i, d := range conflict.Diffs {
		name := createFlags[d.Field]
		if name == "" {
			diffs[i] = d.String() // a field create has no flag for
			continue
		}
		diffs[i] = fmt.Sprintf("--%s %s → %s", name, d.Stored, d.Given)
		if slices.Contains(updateFlags, name) {
			updates = append(updates, "--"+name+" "+shellQuote(fs.Lookup(name).Value.String()))
		} else {
			fixed = append(fixed, "--"+name)
		}
	}
	ref := schedule.ByKey(conflict.Owner, conflict.Key)
	err := fmt.Errorf("%s is schedule %s already, whose spec differs (stored → given): %s", ref, conflict.ID, strings.Join(diffs, ", "))

	hint := "pass another --key for a new schedule"
	switch {
	case conflict.DeclaredBy != "":
		hint += fmt.Sprintf(", or change that one in the code of service %s, which declares it: a 'schedule update' lasts only until the service's next Declare puts the code's spec back", conflict.DeclaredBy)
	case len(fixed) > 0:
		hint += fmt.Sprintf(", or delete that one ('tributary schedule delete %s') and create it again: update can't change %s", refArgs(ref), joinWords(fixed))
	case len(updates) > 0:
		hint += fmt.Sprintf(", or give that one this spec with: tributary schedule update %s %s", refArgs(ref), strings.Join(updates, " "))
	}
	// Not withHint, which drops a hint after a message holding "; ", as a
	// value may.
	return &hintError{err: err, hint: hint}
}

// validationHints say which flag of create to fix for a
// *schedule.ValidationError whose message does not say what to do.
var validationHints = map[string]string{
	"Name":     "pass a shorter --name",
	"Key":      "fix --key",
	"Workflow": "fix --workflow",
	"Overlap":  "fix --overlap",
	"EndAt":    "pass an --end later than --start",
	"Input":    "pass a smaller --input",
	"Cron":     "fix --cron, --start or --end",
	"CatchUp":  "fix --catchup-policy",
	"GrantID":  "fix --grant",
	"Tenant":   "fix --tenant",
}

// createError is scheduleError for Create, whose validation errors are
// mistakes on the command line.
func createError(err error) error {
	return paramsError(err, schedule.Ref{}, validationHints)
}

// parseGrantID parses an execution grant id given as --grant.
func parseGrantID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, withHint(usageErrorf("--grant %q is not a grant id", s), grantIDHint)
	}
	return id, nil
}

// grantRefusal is the error of create --grant with a grant that does not
// allow runs of workflowType: none of the schedule's slots would run.
func grantRefusal(g *schedule.Grant, workflowType string, now time.Time) error {
	reason := grantSkipReason(g, workflowType, now)
	var hint string
	switch reason {
	case "":
		return nil
	case schedule.SkipReasonGrantOutOfScope:
		hint = fmt.Sprintf("pass a grant with scope %q or \"*\"", schedule.ScopeExecute(workflowType))
	default:
		hint = "pass a grant that is in force"
	}
	return withHint(usageErrorf("execution grant %s %s, so each slot would be skipped (%q)", g.ID, grantProblem(g, workflowType, now), reason), hint)
}
