package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// The schedule commands that use the database: create, list, get, pause,
// resume and delete here; update, trigger, backfill and history in
// schedule_more.go. They work through a schedule.Client bound to an
// insert-only workflow client, which registers no workflow types (so create
// takes any workflow type name: the CLI can't know which types a service
// registers) and works no jobs: a slot's River job, which create and resume
// insert, is fired by a service that runs a schedule.Client.
func scheduleCommands(env *Env) []*cobra.Command {
	return []*cobra.Command{
		command(env, &cobra.Command{
			Use:   "create --name <name> --cron <expression> --workflow <type> [--tz <zone>] [--input <json>] [flags]",
			Short: "Create a schedule: a run of a workflow type at each time a cron expression names in a time zone",
			Example: `tributary schedule create --name "nightly report" --cron "30 2 * * *" --tz America/New_York --workflow send_report --input '{"to": "ops"}'
			tributary schedule create --name "hourly sync" --cron @hourly --workflow sync --owner team-42 --overlap allow --json
			tributary schedule create --name "user digest" --cron "0 8 * * *" --workflow digest --catchup-policy latest --grant 01a1ffb2-3fa1-781c-b9a9-3cd3e9d01250`,
		}, setupScheduleCreate),
		command(env, &cobra.Command{
			Use:   "list [--owner <owner>] [--workflow <type>] [--paused true|false] [--limit <n>] [--after <schedule-id>] [flags]",
			Short: "List schedules, newest first, with when each fires next",
			Example: `tributary schedule list --owner team-42
			tributary schedule list --paused true --json`,
		}, setupScheduleList),
		command(env, &cobra.Command{
			Use:   "get <schedule-id> [flags]",
			Short: "Show a schedule: its settings, its last and next fire, and its next 5 fire times",
			Example: `tributary schedule get 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e
			tributary schedule get 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --json`,
		}, setupScheduleGet),
		command(env, &cobra.Command{
			Use:     "pause <schedule-id> [--note <text>] [flags]",
			Short:   "Pause a schedule: no slot fires until it is resumed",
			Example: `tributary schedule pause 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --note "until the migration is done"`,
		}, setupSchedulePause),
		command(env, &cobra.Command{
			Use:   "resume <schedule-id> [--missed skip|latest|backfill] [flags]",
			Short: "Resume a paused schedule at its next slot; --missed says what the slots missed while it was paused do (default: skipped)",
			Example: `tributary schedule resume 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e
			tributary schedule resume 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --missed latest`,
		}, setupScheduleResume),
		command(env, &cobra.Command{
			Use:     "delete <schedule-id> [flags]",
			Short:   "Delete a schedule; its past runs stay, and its pending slot does not fire",
			Example: "tributary schedule delete 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e",
		}, setupScheduleDelete),
	}
}

const (
	// scheduleIDHint says what a schedule id looks like.
	scheduleIDHint = "schedule ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e"

	// grantIDHint says what an execution grant id looks like.
	grantIDHint = "grant ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d01250"

	// scheduleGetFireTimes is how many fire times `schedule get` prints.
	scheduleGetFireTimes = 5

	// nameColumnWidth is where `schedule list` cuts a schedule's name.
	nameColumnWidth = 40

	// zonedLayout is a time in a schedule's zone: "2026-03-08 03:00:00 EDT".
	zonedLayout = time.DateTime + " MST"
)

// scheduleClient connects to the database and returns a schedule client
// bound to an insert-only workflow client, and the function that closes it.
func (f *databaseFlags) scheduleClient(ctx context.Context) (*schedule.Client, func(), error) {
	sc, _, closeClient, err := f.scheduleClients(ctx)
	return sc, closeClient, err
}

// scheduleClients is scheduleClient that also returns the workflow client
// the schedule client is bound to, to read runs.
func (f *databaseFlags) scheduleClients(ctx context.Context) (*schedule.Client, *workflow.Client, func(), error) {
	pool, schema, err := f.pool(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	sc := schedule.New(&schedule.Config{Logger: f.env.Logger})
	wf, err := workflow.NewClient(pool, &workflow.Config{Schema: schema, Logger: f.env.Logger, Extensions: []workflow.Extension{sc}})
	if err != nil {
		pool.Close()
		return nil, nil, nil, withHint(err, "fix --schema or TRIBUTARY_SCHEMA")
	}
	// Inserting a slot's job also arms a timer that would make the job
	// available at its exact time. This client works no jobs and lives for
	// one command, so it is started (which works nothing without River
	// queues) only to be stopped when the command ends, which cancels the
	// timer; a running service fires the slot.
	if err := wf.Start(ctx); err != nil {
		pool.Close()
		return nil, nil, nil, withHint(err, "check the database URL and --schema")
	}
	closeClient := func() {
		_ = wf.Stop(context.WithoutCancel(ctx)) // it works no jobs: nothing to wait for
		pool.Close()
	}
	return sc, wf, closeClient, nil
}

// scheduleError turns an error of the schedule client into one that says
// what to do; id is the schedule it is about, if any.
func scheduleError(err error, id uuid.UUID) error {
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, schedule.ErrNotFound):
		return withHint(fmt.Errorf("no schedule %s", id), "see 'tributary schedule list'")
	case errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000"): // undefined_table, invalid_schema_name
		return withHint(err, "check --schema or TRIBUTARY_SCHEMA, and that 'tributary migrate up' has run")
	case errors.Is(err, context.Canceled):
		return withHint(err, "the command was interrupted; run it again")
	}
	return withHint(err, "check the database URL and --schema")
}

// createError is scheduleError for Create, whose validation errors are
// mistakes on the command line.
func createError(err error) error {
	return paramsError(err, uuid.Nil, validationHints)
}

// paramsError is scheduleError for a call that validates schedule
// settings (Create, Update): its validation errors are mistakes on the
// command line, and hints say which flag to fix for the ones whose message
// does not say what to do.
func paramsError(err error, id uuid.UUID, hints map[string]string) error {
	var validation *schedule.ValidationError
	switch {
	case errors.As(err, &validation):
		hint := hints[validation.Field]
		if hint == "" && !strings.Contains(err.Error(), "; ") {
			return &usageError{err: err} // Main adds "see --help"
		}
		return withHint(&usageError{err: err}, hint)
	case errors.Is(err, schedule.ErrInvalid):
		// A *CronError, *ZoneError or *NoOccurrenceError says what to do.
		return withHint(&usageError{err: err}, "fix --cron or --tz")
	}
	return scheduleError(err, id)
}

// validationHints say which flag of create to fix for a
// *schedule.ValidationError whose message does not say what to do.
var validationHints = map[string]string{
	"Name":     "pass a shorter --name",
	"Workflow": "fix --workflow",
	"Overlap":  "fix --overlap",
	"EndAt":    "pass an --end later than --start",
	"Input":    "pass a smaller --input",
	"Cron":     "fix --cron, --start or --end",
	"CatchUp":  "fix --catchup-policy",
	"GrantID":  "fix --grant",
}

// scheduleIDArg parses the positional arguments of a schedule command that
// takes a schedule id and nothing else; flags may come before or after the
// id.
func scheduleIDArg(cmd string, args []string) (uuid.UUID, error) {
	switch {
	case len(args) == 0:
		return uuid.Nil, withHint(usageErrorf("schedule %s needs <schedule-id>", cmd),
			fmt.Sprintf("run it as 'tributary schedule %s <schedule-id>'; find schedule ids with 'tributary schedule list'", cmd))
	case len(args) > 1:
		return uuid.Nil, usageErrorf("unexpected argument %q", args[1])
	}
	return parseScheduleID("", args[0])
}

// parseScheduleID parses a schedule id given on the command line; what
// names it in the error, such as "--after".
func parseScheduleID(what, s string) (uuid.UUID, error) {
	return parseID("schedule", scheduleIDHint, what, s)
}

// parseGrantID parses an execution grant id given as --grant.
func parseGrantID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, withHint(usageErrorf("--grant %q is not a grant id", s), grantIDHint)
	}
	return id, nil
}

// parseFlagTime parses an RFC 3339 time flag; the zero time when unset.
func parseFlagTime(name, value string) (time.Time, error) {
	if value == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return time.Time{}, withHint(usageErrorf("--%s %q is not an RFC 3339 time", name, value),
			"use a time like 2026-03-08T00:00:00Z or 2026-03-08T09:00:00+01:00")
	}
	return t, nil
}

func setupScheduleCreate(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	name := fs.String("name", "", "the schedule's `name`, shown to operators (required)")
	expr := fs.String("cron", "", "cron `expression`: 5 fields like \"0 9 * * 1-5\", 6 with leading seconds, or a descriptor like @daily or \"@every 1h\" (required)")
	workflowType := fs.String("workflow", "", "the workflow `type` each slot starts, as a service registers it (required)")
	zone := fs.String("tz", "UTC", "IANA time `zone` the expression is in, such as Europe/Paris (default UTC)")
	input := fs.String("input", "null", "the input of each run, a `JSON` value such as '{\"to\": \"ops\"}', @file.json or - for standard input (default null)")
	owner := fs.String("owner", "", "the `owner` (tenant or user) the schedule belongs to, for 'schedule list --owner'")
	description := fs.String("description", "", "free `text` about the schedule")
	overlap := fs.String("overlap", string(schedule.OverlapSkip), "the overlap `policy`, what a slot does while the previous run is unfinished: skip (the slot), allow (a run alongside), queue (the run until the previous one finishes) or replace (cancel the previous run) (default skip)")
	catchUp := fs.Duration("catchup", schedule.DefaultCatchUpWindow, "how late a slot may fire and still run, a `duration` such as 5m (0: not at all); --catchup-policy says what a slot found later does (default 1m)")
	catchUpPolicy := fs.String("catchup-policy", string(schedule.CatchUpWindow), "what a slot found later than --catchup does, a `policy`: window (it is skipped as missed) or latest (of the slots found that late, only the most recent runs, once) (default window)")
	start := fs.String("start", "", "the RFC 3339 `time` of the earliest slot, such as 2026-03-08T00:00:00Z (default now)")
	end := fs.String("end", "", "the RFC 3339 `time` the schedule ends: slots fire before it only (default never)")
	maxAttempts := fs.Int("max-attempts", 0, "the number `n` of attempts each run gets, at least 1 (default the workflow type's)")
	queue := fs.String("queue", "", "River `queue` of each run (default the workflow type's)")
	priority := fs.Int("priority", 0, "River priority of each run, `n` from 1 (highest) to 4 (default the workflow type's)")
	timeout := fs.Duration("timeout", 0, "time limit of each run's attempts, a `duration` such as 10m (default the workflow type's)")
	paused := fs.Bool("paused", false, "create the schedule paused; 'schedule resume' starts it")
	note := fs.String("note", "", "`text` saying why the schedule is paused (with --paused)")
	grant := fs.String("grant", "", "the `id` of the execution grant the runs act under (made with schedule.Client.CreateGrant); it must allow the workflow type, and a slot it no longer allows is skipped")
	requireWorker := fs.Bool("require-worker", false, "refuse to create the schedule when no live worker serves --workflow (without it: create it and warn)")
	asJSON := fs.Bool("json", false, "print the schedule as JSON instead of its id")

	return func(ctx context.Context, args []string) error {
		if len(args) > 0 && *expr != "" {
			return withHint(usageErrorf("unexpected argument %q", args[0]),
				`quote the whole cron expression, e.g. --cron "0 9 * * 1-5"`)
		}
		if err := noArgs(args); err != nil {
			return err
		}
		var missing []string
		for flagName, value := range map[string]string{"name": *name, "cron": *expr, "workflow": *workflowType} {
			if strings.TrimSpace(value) == "" {
				missing = append(missing, "--"+flagName)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			return withHint(usageErrorf("schedule create needs %s", joinWords(missing)),
				`e.g. tributary schedule create --name "nightly report" --cron "30 2 * * *" --workflow send_report`)
		}
		inputJSON, err := jsonFlag(env, "input", *input, `{"to": "ops"}`)
		if err != nil {
			return err
		}
		startAt, err := parseFlagTime("start", *start)
		if err != nil {
			return err
		}
		endAt, err := parseFlagTime("end", *end)
		if err != nil {
			return err
		}
		switch {
		case *catchUp < 0:
			return withHint(usageErrorf("--catchup must not be negative, not %s", *catchUp), "pass --catchup 0 to skip every slot found late")
		case *maxAttempts < 0:
			return withHint(usageErrorf("--max-attempts must be at least 1, not %d", *maxAttempts), "leave it out for the workflow type's default")
		case *priority < 0 || *priority > 4:
			return withHint(usageErrorf("--priority must be from 1 to 4, not %d", *priority), "leave it out for the workflow type's default")
		case *timeout < 0:
			return withHint(usageErrorf("--timeout must not be negative, not %s", *timeout), "leave it out for the workflow type's default")
		case *note != "" && !*paused:
			return withHint(usageErrorf("--note is the note of a paused schedule"), "pass --paused too, or leave --note out")
		case *catchUpPolicy != string(schedule.CatchUpWindow) && *catchUpPolicy != string(schedule.CatchUpLatest):
			return withHint(usageErrorf("--catchup-policy %q is not window or latest", *catchUpPolicy),
				"pass --catchup-policy window to skip the slots found late, or latest to run the most recent of them")
		}
		var grantID *uuid.UUID
		if *grant != "" {
			id, err := parseGrantID(*grant)
			if err != nil {
				return err
			}
			grantID = &id
		}
		params := &schedule.Params{
			Name: *name, Description: *description, Owner: *owner,
			Workflow: *workflowType, Input: inputJSON,
			Cron: *expr, TimeZone: *zone, StartAt: startAt, EndAt: endAt,
			Overlap: schedule.OverlapPolicy(*overlap), CatchUpWindow: *catchUp,
			MaxAttempts: *maxAttempts, Priority: *priority, Queue: *queue, Timeout: *timeout,
			Paused: *paused, PauseNote: *note, CatchUp: schedule.CatchUpPolicy(*catchUpPolicy), GrantID: grantID,
			RequireWorker: *requireWorker,
		}
		if params.CatchUpWindow == 0 {
			params.CatchUpWindow = -1 // Params takes 0 for the default, and a negative window for none
		}

		sc, wf, closeClient, err := dbFlags.scheduleClients(ctx)
		if err != nil {
			return err
		}
		defer closeClient()

		if grantID != nil {
			// Create only checks that the grant exists; a grant that does
			// not allow the runs would make a schedule none of whose slots
			// ever runs.
			g, err := sc.GetGrant(ctx, *grantID)
			if errors.Is(err, schedule.ErrGrantNotFound) {
				return withHint(usageErrorf("no execution grant %s", *grantID),
					"create one with schedule.Client.CreateGrant and pass its id (the CLI has no grant commands yet)")
			}
			if err != nil {
				return scheduleError(err, uuid.Nil)
			}
			if err := grantRefusal(g, *workflowType, time.Now()); err != nil {
				return err
			}
		}
		s, err := sc.Create(ctx, params)
		var noWorker *workflow.NoWorkerError
		if errors.As(err, &noWorker) {
			return withHint(err, "start the service that works it first, or leave --require-worker out to create the schedule anyway")
		}
		if err != nil {
			return createError(err)
		}
		if !*requireWorker { // else Create checked it
			warnNoWorker(ctx, env, wf, s.Workflow)
		}
		if *asJSON {
			return printJSON(env.Stdout, s)
		}
		_, err = fmt.Fprintln(env.Stdout, s.ID)
		return err
	}
}

// joinWords joins "a", "a and b", "a, b and c".
func joinWords(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

func setupScheduleList(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	owner := fs.String("owner", "", "list only the schedules of this `owner`")
	workflowType := fs.String("workflow", "", "list only the schedules that start this workflow `type`")
	paused := fs.String("paused", "", "`true|false`: list only paused schedules, or only active ones")
	limit := fs.Int("limit", defaultListLimit, fmt.Sprintf("list at most `n` schedules, at most %d (default %d)", maxListLimit, defaultListLimit))
	after := fs.String("after", "", "list the schedules after this `schedule-id` (the last one of the previous page)")
	asJSON := fs.Bool("json", false, "print a JSON array of schedules instead of a table")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		params := &schedule.ListParams{Owner: *owner, Workflow: *workflowType, Limit: *limit}
		if *paused != "" {
			b, err := strconv.ParseBool(*paused)
			if err != nil {
				return withHint(usageErrorf("--paused %q is not true or false", *paused),
					"pass --paused true for paused schedules, or --paused false for active ones")
			}
			params.Paused = &b
		}
		if err := checkLimit(*limit); err != nil {
			return err
		}
		if *after != "" {
			id, err := parseScheduleID("--after", *after)
			if err != nil {
				return err
			}
			params.After = &id
		}

		sc, closeClient, err := dbFlags.scheduleClient(ctx)
		if err != nil {
			return err
		}
		defer closeClient()

		schedules, err := sc.List(ctx, params)
		if err != nil {
			return scheduleError(err, uuid.Nil)
		}
		return printListing(env, schedules, *asJSON, *limit, "schedules",
			func(s *schedule.Schedule) uuid.UUID { return s.ID },
			func(w io.Writer) error { return printSchedulesTable(w, schedules, time.Now()) })
	}
}

// scheduleGetJSON is the shape of `schedule get --json`: the schedule, and
// its next fire times.
type scheduleGetJSON struct {
	*schedule.Schedule
	NextFireTimes []occurrenceJSON `json:"next_fire_times"`
	// WorkerLive says whether a live worker serves the schedule's workflow
	// type (the worker registry); false means its runs wait.
	WorkerLive bool `json:"worker_live"`
}

func setupScheduleGet(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	asJSON := fs.Bool("json", false, fmt.Sprintf("print the schedule and its next %d fire times as JSON", scheduleGetFireTimes))

	return func(ctx context.Context, args []string) error {
		id, err := scheduleIDArg("get", args)
		if err != nil {
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
		workerLive, err := wf.TypeServed(ctx, s.Workflow)
		if err != nil {
			return scheduleError(err, id)
		}
		occurrences, err := sc.Next(ctx, id, scheduleGetFireTimes)
		if err != nil {
			return scheduleError(err, id)
		}
		var grant *schedule.Grant // nil: none, or not found
		if s.GrantID != nil && !*asJSON {
			grant, err = sc.GetGrant(ctx, *s.GrantID)
			if err != nil && !errors.Is(err, schedule.ErrGrantNotFound) {
				return scheduleError(err, id)
			}
		}
		if *asJSON {
			out := scheduleGetJSON{Schedule: s, NextFireTimes: make([]occurrenceJSON, len(occurrences)), WorkerLive: workerLive}
			for i, occurrence := range occurrences {
				out.NextFireTimes[i] = occurrenceJSON{At: occurrence.At, Nominal: occurrence.Nominal, Shifted: occurrence.Shifted, Note: occurrence.Note}
			}
			return printJSON(env.Stdout, out)
		}
		return printSchedule(env.Stdout, s, grant, occurrences, workerLive, time.Now())
	}
}

// warnNoWorker prints a warning on stderr when no live worker serves
// workflow type typ: a run or schedule of it was accepted but will wait.
func warnNoWorker(ctx context.Context, env *Env, wf *workflow.Client, typ string) {
	served, err := wf.TypeServed(ctx, typ)
	switch {
	case err != nil:
		fmt.Fprintf(env.Stderr, "tributary: warning: could not read the worker registry (%v); check that 'tributary migrate up' has run\n", err)
	case !served:
		fmt.Fprintln(env.Stderr, "tributary: warning: "+workflow.NoWorkerWarning(typ))
	}
}

func setupSchedulePause(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	note := fs.String("note", "", "`text` saying why the schedule is paused, shown by 'schedule get'")
	asJSON := fs.Bool("json", false, "print the schedule as it is after the pause, as JSON (like get --json, without fire times)")

	return func(ctx context.Context, args []string) error {
		id, err := scheduleIDArg("pause", args)
		if err != nil {
			return err
		}
		noteSet := fs.Changed("note")

		sc, closeClient, err := dbFlags.scheduleClient(ctx)
		if err != nil {
			return err
		}
		defer closeClient()

		s, err := sc.Get(ctx, id)
		if err != nil {
			return scheduleError(err, id)
		}
		// Pausing again would clear the note unless a new one is given.
		wasPaused := s.Paused
		if !wasPaused || noteSet {
			if s, err = sc.Pause(ctx, id, *note); err != nil {
				return scheduleError(err, id)
			}
		}
		if *asJSON {
			return printJSON(env.Stdout, s)
		}
		switch {
		case wasPaused && noteSet:
			_, err = fmt.Fprintf(env.Stdout, "schedule %s (%q) was already paused; its note is now %q\n", id, s.Name, s.PauseNote)
		case wasPaused:
			_, err = fmt.Fprintf(env.Stdout, "schedule %s (%q) is already paused\n", id, s.Name)
		default:
			_, err = fmt.Fprintf(env.Stdout, "paused schedule %s (%q); no slot fires until 'tributary schedule resume %s'\n", id, s.Name, id)
		}
		return err
	}
}

func setupScheduleResume(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	missed := fs.String("missed", string(schedule.MissedSkip), fmt.Sprintf("what the slots missed while the schedule was paused do, a `policy`: skip (none runs), "+
		"latest (the most recent one runs, once, now) or backfill (each one runs once, now, oldest first; at most %d) (default skip)", schedule.MaxBackfill))
	asJSON := fs.Bool("json", false, "print the schedule as it is after the resumption, as JSON (like get --json, without fire times)")

	return func(ctx context.Context, args []string) error {
		id, err := scheduleIDArg("resume", args)
		if err != nil {
			return err
		}
		policy := schedule.MissedPolicy(*missed)
		if !slices.Contains([]schedule.MissedPolicy{schedule.MissedSkip, schedule.MissedLatest, schedule.MissedBackfill}, policy) {
			return withHint(usageErrorf("--missed %q is not skip, latest or backfill", *missed),
				"pass --missed skip to skip the slots missed while paused, latest to run the most recent of them, or backfill to run each")
		}
		sc, closeClient, err := dbFlags.scheduleClient(ctx)
		if err != nil {
			return err
		}
		defer closeClient()

		// Resume does nothing to a schedule that is not paused; read it
		// first to say so.
		s, err := sc.Get(ctx, id)
		if err != nil {
			return scheduleError(err, id)
		}
		wasPaused := s.Paused
		var due []schedule.Occurrence // the missed slots that run
		if wasPaused {
			if due, err = s.MissedSlots(policy, time.Now()); err != nil {
				return scheduleError(err, id)
			}
			if s, err = sc.Resume(ctx, id, &schedule.ResumeOpts{Missed: policy}); err != nil {
				return scheduleError(err, id)
			}
		}
		if *asJSON {
			return printJSON(env.Stdout, s)
		}
		next := nextFireText(s, time.Now())
		loc := scheduleLocation(s)
		switch {
		case !wasPaused:
			_, err = fmt.Fprintf(env.Stdout, "schedule %s (%q) is not paused; %s\n", id, s.Name, next)
		case policy == schedule.MissedSkip:
			_, err = fmt.Fprintf(env.Stdout, "resumed schedule %s (%q); %s\n", id, s.Name, next)
		case len(due) == 0:
			_, err = fmt.Fprintf(env.Stdout, "resumed schedule %s (%q); no slot was missed while it was paused; %s\n", id, s.Name, next)
		case policy == schedule.MissedLatest:
			_, err = fmt.Fprintf(env.Stdout, "resumed schedule %s (%q); the latest slot missed while it was paused, %s, runs now; %s\n",
				id, s.Name, zonedTime(due[0].At, loc), next)
		default:
			_, err = fmt.Fprintf(env.Stdout, "resumed schedule %s (%q); the %s missed while it was paused (%s … %s) run now, one after the other, oldest first; %s\n",
				id, s.Name, slotCount(len(due)), zonedTime(due[0].At, loc), zonedTime(due[len(due)-1].At, loc), next)
		}
		return err
	}
}

// nextFireText says when s fires next: "it fires next at 2026-03-08
// 03:00:00 EDT (in 3h)".
func nextFireText(s *schedule.Schedule, now time.Time) string {
	switch {
	case s.NextFireAt != nil:
		return "it fires next at " + zonedTime(*s.NextFireAt, scheduleLocation(s)) + " (" + relativeDays(*s.NextFireAt, now) + ")"
	case s.Paused:
		return fmt.Sprintf("it is paused: no slot fires until 'tributary schedule resume %s'", s.ID)
	}
	return "it has no slot left before its end"
}

// slotCount is "1 slot", "7 slots".
func slotCount(n int) string {
	if n == 1 {
		return "1 slot"
	}
	return strconv.Itoa(n) + " slots"
}

// grantSkipReason is the skip reason schedule.Grant.Check gives a slot of a
// schedule of workflowType under grant g (nil: not found) at now, the
// reason firing records; "" when g allows it.
func grantSkipReason(g *schedule.Grant, workflowType string, now time.Time) string {
	var grantErr *schedule.GrantError
	if errors.As(g.Check(workflowType, now), &grantErr) {
		return grantErr.Reason
	}
	return ""
}

// grantProblem says why grant g does not allow runs of workflowType at
// now: "was revoked 2h ago (left the team)", "expired 3d ago", "does not
// allow workflow type …"; "" when it does.
func grantProblem(g *schedule.Grant, workflowType string, now time.Time) string {
	switch grantSkipReason(g, workflowType, now) {
	case schedule.SkipReasonGrantRevoked:
		text := "was revoked " + relativeDays(*g.RevokedAt, now)
		if g.RevokeReason != "" {
			text += " (" + oneLine(g.RevokeReason) + ")"
		}
		return text
	case schedule.SkipReasonGrantExpired:
		return "expired " + relativeDays(*g.ExpiresAt, now)
	case schedule.SkipReasonGrantOutOfScope:
		return fmt.Sprintf("does not allow workflow type %q (its scopes: %s)", workflowType, strings.Join(g.Scopes, ", "))
	}
	return ""
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
		text += "; expires " + g.ExpiresAt.UTC().Format(time.RFC3339) + ", " + relativeDays(*g.ExpiresAt, now)
	}
	return text + ")"
}

func setupScheduleDelete(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	asJSON := fs.Bool("json", false, "print the schedule as it was before the deletion, as JSON (like get --json, without fire times)")

	return func(ctx context.Context, args []string) error {
		id, err := scheduleIDArg("delete", args)
		if err != nil {
			return err
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
		if err := sc.Delete(ctx, id); err != nil {
			return scheduleError(err, id)
		}
		if *asJSON {
			return printJSON(env.Stdout, s)
		}
		_, err = fmt.Fprintf(env.Stdout, "deleted schedule %s (%q); its past runs stay, and its pending slot does not fire\n", id, s.Name)
		return err
	}
}

// scheduleLocation is the schedule's time zone, or UTC when it can't be
// loaded (it was valid when the schedule was created).
func scheduleLocation(s *schedule.Schedule) *time.Location {
	loc, err := time.LoadLocation(s.TimeZone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// zonedTime is t in loc: "2026-03-08 03:00:00 EDT".
func zonedTime(t time.Time, loc *time.Location) string {
	return t.In(loc).Format(zonedLayout)
}

// zonedTimeUTC is t in loc, then in UTC and relative to now:
// "2026-03-08 03:00:00 EDT (2026-03-08T07:00:00Z, in 3d)".
func zonedTimeUTC(t time.Time, loc *time.Location, now time.Time) string {
	return zonedTime(t, loc) + " (" + t.UTC().Format(time.RFC3339) + ", " + relativeDays(t, now) + ")"
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

func printSchedulesTable(w io.Writer, schedules []*schedule.Schedule, now time.Time) error {
	locations := make(map[string]*time.Location)
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "ID\tNAME\tOWNER\tWORKFLOW\tCRON\tZONE\tNEXT\tRUNS\tFAILURES\tPAUSED")
	for _, s := range schedules {
		next := "-"
		if s.NextFireAt != nil {
			loc, ok := locations[s.TimeZone]
			if !ok {
				loc = scheduleLocation(s)
				locations[s.TimeZone] = loc
			}
			next = zonedTime(*s.NextFireAt, loc) + " (" + relativeDays(*s.NextFireAt, now) + ")"
		}
		fmt.Fprintf(table, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", s.ID, shorten(oneLine(s.Name), nameColumnWidth),
			orDash(oneLine(s.Owner)), oneLine(s.Workflow), oneLine(s.Cron), s.TimeZone, next, s.RunCount, s.FailureCount, yesNo(s.Paused))
	}
	return table.Flush()
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
	if workerLive {
		field("Workflow", "%s", s.Workflow)
	} else {
		field("Workflow", "%s (warning: %s)", s.Workflow, workflow.NoWorkerWarning(s.Workflow))
	}
	field("Input", "%s", jsonText(s.Input))
	field("Cron", "%s", s.Cron)
	field("Time zone", "%s", s.TimeZone)
	if s.StartAt != nil {
		field("Start", "%s (%s)", zonedTime(*s.StartAt, loc), s.StartAt.UTC().Format(time.RFC3339))
	}
	if s.EndAt != nil {
		field("End", "%s (%s)", zonedTime(*s.EndAt, loc), s.EndAt.UTC().Format(time.RFC3339))
	}
	field("Overlap", "%s", overlapText(s.Overlap))
	field("Catch-up window", "%s (how late a slot may fire and still run)", humanDuration(s.CatchUpWindow))
	field("Catch-up policy", "%s", catchUpText(s.CatchUp))
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
		policy = append(policy, "timeout "+humanDuration(s.Timeout))
	}
	if len(policy) > 0 {
		field("Run policy", "%s (the rest: the workflow type's defaults)", strings.Join(policy, ", "))
	} else {
		field("Run policy", "the workflow type's defaults")
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
	field("Created", "%s (%s)", s.CreatedAt.UTC().Format(time.RFC3339), relativeDays(s.CreatedAt, now))
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
			relativeDays(occurrence.At, now), orDash(occurrence.Note))
	}
	if err := table.Flush(); err != nil {
		return err
	}
	if s.Paused {
		_, err := fmt.Fprintf(w, "\nthe schedule is paused: these slots fire only once it is resumed ('tributary schedule resume %s')\n", s.ID)
		return err
	}
	return nil
}
