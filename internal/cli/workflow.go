package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/workflow"
)

// newWorkflowCommand is the `tributary workflow` group: it reads and
// controls runs through an insert-only workflow.Client, which needs no
// workflow types registered, so it works on the runs of any service sharing
// the database.
func newWorkflowCommand(env *Env) *cobra.Command {
	return group(&cobra.Command{
		Use:   "workflow",
		Short: "Start, list, inspect, signal, cancel and retry workflow runs",
		Example: `tributary workflow list --status failed
			tributary workflow get 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e
			tributary workflow signal 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e approved --payload '{"by": "ops"}'`,
	},
		command(env, &cobra.Command{
			Use:     "cancel <run-id> [flags]",
			Short:   "Cancel a run: at once when it is pending, sleeping or waiting, else at its next step boundary",
			Example: "tributary workflow cancel 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e",
		}, setupWorkflowCancel),
		command(env, &cobra.Command{
			Use:   "get <run-id> [flags]",
			Short: "Show a run: its status, input, output or error, and its step timeline",
			Example: `tributary workflow get 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e
					tributary workflow get --json 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e`,
		}, setupWorkflowGet),
		command(env, &cobra.Command{
			Use:   "list [--type <type>] [--status <status>] [--schedule <id>] [--limit <n>] [--after <run-id>] [flags]",
			Short: "List runs, newest first",
			Example: `tributary workflow list --status waiting
					tributary workflow list --type process_order --limit 200 --json`,
		}, setupWorkflowList),
		command(env, &cobra.Command{
			Use:     "retry <run-id> [flags]",
			Short:   "Run a failed or cancelled run again, from where it stopped (completed steps are not redone)",
			Example: "tributary workflow retry 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e",
		}, setupWorkflowRetry),
		command(env, &cobra.Command{
			Use:   "signal <run-id> <signal-name> [--payload <json>] [flags]",
			Short: "Send a named signal with a JSON payload to a run (WaitSignal receives it)",
			Example: `tributary workflow signal 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e approved --payload '{"by": "ops"}'
					tributary workflow signal 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e continue`,
		}, setupWorkflowSignal),
		command(env, &cobra.Command{
			Use:   "start <type> [--input <json>] [flags]",
			Short: "Start a run of a workflow type, for the service that registers it to work",
			Long: `Inserts the run and its River job in one transaction and prints the run's id. This process has
					no workflow code: the run waits until a working client that registers the type fetches it.
					With --idempotency-key, starting the same type with the same key again prints the first
					run instead of starting another.`,
			Example: `tributary workflow start send_report --input '{"to": "ops"}'
					tributary workflow start import_users --input @users.json --idempotency-key import-2026-11-25`,
		}, setupWorkflowStart),
		command(env, &cobra.Command{
			Use:     "steps <run-id> [flags]",
			Short:   "Show a run's step timeline: steps, sleeps, signal waits and child runs",
			Example: "tributary workflow steps 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --json",
		}, setupWorkflowSteps),
	)
}

const (
	// defaultListLimit and maxListLimit bound `workflow list --limit`.
	defaultListLimit = 50
	maxListLimit     = 1000

	// runIDHint says what a run id looks like.
	runIDHint = "run ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e"

	// errorColumnWidth is where `workflow list` cuts a run's error.
	errorColumnWidth = 60

	// maxJSONValueWidth is where `workflow get` cuts an input or output; the
	// whole value is in --json.
	maxJSONValueWidth = 500
)

// runStatuses are the values --status accepts.
var runStatuses = []workflow.Status{
	workflow.StatusPending, workflow.StatusRunning, workflow.StatusSleeping, workflow.StatusWaiting,
	workflow.StatusCompleted, workflow.StatusFailed, workflow.StatusCancelled, workflow.StatusSkipped,
}

// workflowClient connects to the database and returns an insert-only
// workflow client, which reads runs and changes them (cancel, signal,
// retry: row updates and River job inserts) without working any, and the
// function that closes its pool. It registers no workflow types, so it
// serves runs of any type.
func (f *databaseFlags) workflowClient(ctx context.Context) (*workflow.Client, func(), error) {
	pool, schema, err := f.pool(ctx)
	if err != nil {
		return nil, nil, err
	}
	client, err := workflow.NewClient(pool, &workflow.Config{Logger: f.env.Logger, Schema: schema})
	if err != nil {
		pool.Close()
		return nil, nil, withHint(err, "fix --schema or TRIBUTARY_SCHEMA")
	}
	return client, pool.Close, nil
}

// wantArgs checks the number of positional arguments; names are what
// each one is, for the error message.
func wantArgs(cmd string, args []string, names ...string) error {
	if len(args) < len(names) {
		return withHint(usageErrorf("workflow %s needs <%s>", cmd, strings.Join(names[len(args):], "> and <")),
			fmt.Sprintf("run it as 'tributary workflow %s <%s>'; find run ids with 'tributary workflow list'", cmd, strings.Join(names, "> <")))
	}
	if len(args) > len(names) {
		return usageErrorf("unexpected argument %q", args[len(names)])
	}
	return nil
}

// parseRunID parses a run id given on the command line; what names it in
// the error, such as "--after".
func parseRunID(what, s string) (uuid.UUID, error) { return parseID("run", runIDHint, what, s) }

// parseID parses the id of a noun (run, schedule) given as what (a flag,
// or "" for an argument), with hint when it is not one.
func parseID(noun, hint, what, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		if what != "" {
			what += " "
		}
		return uuid.Nil, withHint(usageErrorf("%s%q is not a %s id", what, s, noun), hint)
	}
	return id, nil
}

// runIDArg parses the positional arguments of a command that takes a run id
// and nothing else; flags may come before or after the id.
func runIDArg(cmd string, args []string) (uuid.UUID, error) {
	if err := wantArgs(cmd, args, "run-id"); err != nil {
		return uuid.Nil, err
	}
	return parseRunID("", args[0])
}

// workflowError turns an error of the workflow client into one that says
// what to do.
func workflowError(err error, id uuid.UUID) error {
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, workflow.ErrNotFound):
		return withHint(fmt.Errorf("no run %s", id), "check the id with 'tributary workflow list'")
	case errors.Is(err, workflow.ErrInvalid):
		return &usageError{err: err}
	case errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000"): // undefined_table, invalid_schema_name
		return withHint(err, "check --schema or TRIBUTARY_SCHEMA, and that 'tributary migrate up' has run")
	case errors.Is(err, context.Canceled):
		return withHint(err, "the command was interrupted; run it again")
	}
	return withHint(err, "check the database URL and --schema")
}

// runStatusOf reads a run's status for an error message, or "" when it
// can't.
func runStatusOf(ctx context.Context, client *workflow.Client, id uuid.UUID) workflow.Status {
	run, err := client.GetRun(ctx, id)
	if err != nil {
		return ""
	}
	return run.Status
}

func setupWorkflowList(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	typeName := fs.String("type", "", "list only runs of this workflow `type`")
	status := fs.String("status", "", "list only runs in this `status`: pending, running, sleeping, waiting, completed, failed, cancelled or skipped")
	scheduleID := fs.String("schedule", "", "list only runs started by the schedule with this `id`")
	limit := fs.Int("limit", defaultListLimit, fmt.Sprintf("list at most `n` runs, at most %d (default %d)", maxListLimit, defaultListLimit))
	after := fs.String("after", "", "list the runs after this `run-id` (the last one of the previous page)")
	asJSON := fs.Bool("json", false, "print a JSON array of runs instead of a table")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		params := &workflow.ListParams{Type: *typeName, Limit: *limit}
		if *status != "" {
			params.Status = workflow.Status(*status)
			if !isRunStatus(params.Status) {
				return withHint(usageErrorf("--status %q is not a run status", *status),
					"use one of pending, running, sleeping, waiting, completed, failed, cancelled or skipped")
			}
		}
		if err := checkLimit(*limit); err != nil {
			return err
		}
		if *scheduleID != "" {
			id, err := parseScheduleID("--schedule", *scheduleID)
			if err != nil {
				return err
			}
			params.ScheduleID = &id
		}
		if *after != "" {
			id, err := parseRunID("--after", *after)
			if err != nil {
				return err
			}
			params.After = &id
		}

		client, closePool, err := dbFlags.workflowClient(ctx)
		if err != nil {
			return err
		}
		defer closePool()

		runs, err := client.ListRuns(ctx, params)
		if err != nil {
			return workflowError(err, uuid.Nil)
		}
		return printListing(env, runs, *asJSON, *limit, "runs",
			func(r *workflow.Run) uuid.UUID { return r.ID },
			func(w io.Writer) error { return printRunsTable(w, runs, time.Now()) })
	}
}

func isRunStatus(status workflow.Status) bool {
	return slices.Contains(runStatuses, status)
}

func setupWorkflowGet(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	asJSON := fs.Bool("json", false, "print the run and its steps as JSON")

	return func(ctx context.Context, args []string) error {
		id, err := runIDArg("get", args)
		if err != nil {
			return err
		}
		client, closePool, err := dbFlags.workflowClient(ctx)
		if err != nil {
			return err
		}
		defer closePool()

		run, err := client.GetRun(ctx, id)
		if err != nil {
			return workflowError(err, id)
		}
		if *asJSON {
			return printJSON(env.Stdout, run)
		}
		return printRun(env.Stdout, run, time.Now())
	}
}

func setupWorkflowSteps(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	asJSON := fs.Bool("json", false, "print a JSON array of the run's steps instead of a table")

	return func(ctx context.Context, args []string) error {
		id, err := runIDArg("steps", args)
		if err != nil {
			return err
		}
		client, closePool, err := dbFlags.workflowClient(ctx)
		if err != nil {
			return err
		}
		defer closePool()

		// GetRun, not Steps: Steps can't tell an unknown run from one that
		// has no steps yet.
		run, err := client.GetRun(ctx, id)
		if err != nil {
			return workflowError(err, id)
		}
		if *asJSON {
			return printJSON(env.Stdout, run.Steps)
		}
		return printSteps(env.Stdout, run.Steps, time.Now())
	}
}

func setupWorkflowCancel(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	asJSON := fs.Bool("json", false, "print the run as it is after the cancellation, as JSON (like get --json)")

	return func(ctx context.Context, args []string) error {
		id, err := runIDArg("cancel", args)
		if err != nil {
			return err
		}
		client, closePool, err := dbFlags.workflowClient(ctx)
		if err != nil {
			return err
		}
		defer closePool()

		// A finished run is left as it is, and that is an answer, not an
		// error: as pausing a paused schedule is.
		finished := false
		if err := client.Cancel(ctx, id); err != nil {
			if !errors.Is(err, workflow.ErrRunFinished) {
				return workflowError(err, id)
			}
			finished = true
		}
		run, err := client.GetRun(ctx, id)
		if err != nil {
			return workflowError(err, id)
		}
		if *asJSON {
			return printJSON(env.Stdout, run)
		}
		if finished {
			_, err := fmt.Fprintf(env.Stdout, "run %s has already finished (%s); nothing to cancel\n", id, run.Status)
			return err
		}
		switch {
		case run.Status == workflow.StatusCancelled:
			_, err = fmt.Fprintf(env.Stdout, "cancelled run %s\n", id)
		case run.Status.Finished():
			// A running run finished on its own before it saw the request.
			_, err = fmt.Fprintf(env.Stdout, "cancellation requested, but run %s finished first: it is %s\n", id, run.Status)
		default:
			_, err = fmt.Fprintf(env.Stdout, "cancellation of run %s requested; the run stops at its next step boundary\n", id)
		}
		return err
	}
}

// statusSuffix is " (completed)" for an error message, or "" when the
// status is unknown.
func statusSuffix(status workflow.Status) string {
	if status == "" {
		return ""
	}
	return " (" + string(status) + ")"
}

func setupWorkflowSignal(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	payload := fs.String("payload", "null", "the signal's payload, a `JSON` value such as '{\"approved\": true}', @file.json or - for standard input (default null)")
	asJSON := fs.Bool("json", false, "print the run as it is after the signal, as JSON (like get --json)")

	return func(ctx context.Context, args []string) error {
		if err := wantArgs("signal", args, "run-id", "signal-name"); err != nil {
			return err
		}
		id, err := parseRunID("", args[0])
		if err != nil {
			return err
		}
		name := args[1]
		payloadJSON, err := jsonFlag(env, "payload", *payload, `{"approved": true}`)
		if err != nil {
			return err
		}

		client, closePool, err := dbFlags.workflowClient(ctx)
		if err != nil {
			return err
		}
		defer closePool()

		sent, err := client.SendSignal(ctx, id, name, payloadJSON)
		if err != nil {
			if errors.Is(err, workflow.ErrRunFinished) {
				return withHint(fmt.Errorf("run %s has already finished%s, so signal %q was not sent", id, statusSuffix(runStatusOf(ctx, client, id)), name),
					"only a run that has not finished can receive signals")
			}
			return workflowError(err, id)
		}
		if *asJSON {
			run, err := client.GetRun(ctx, id)
			if err != nil {
				return workflowError(err, id)
			}
			return printJSON(env.Stdout, run)
		}
		_, err = fmt.Fprintf(env.Stdout, "sent signal %q to run %s%s\n", name, id, signalNote(sent, name))
		return err
	}
}

// signalNote says, after "sent signal", when the run was not waiting for
// the signal: it is kept until the run waits for its name.
func signalNote(sent *workflow.SignalResult, name string) string {
	if sent.Waiting {
		return ""
	}
	pending := ""
	if sent.Pending > 1 {
		pending = fmt.Sprintf(" (%d of that name are pending)", sent.Pending)
	}
	if sent.WaitingFor != "" {
		return fmt.Sprintf("; it is waiting for signal %q, not for this one, so the signal is kept until the run waits for %q%s",
			sent.WaitingFor, name, pending)
	}
	state := string(sent.Status)
	if sent.Status == workflow.StatusWaiting {
		state = "waiting for a child run" // parked, and not in a WaitSignal
	}
	return fmt.Sprintf("; it is %s, not waiting for a signal now, so the signal is kept until the run waits for %q%s", state, name, pending)
}

func setupWorkflowRetry(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	asJSON := fs.Bool("json", false, "print the run as it is after the retry, as JSON (like get --json)")

	return func(ctx context.Context, args []string) error {
		id, err := runIDArg("retry", args)
		if err != nil {
			return err
		}
		client, closePool, err := dbFlags.workflowClient(ctx)
		if err != nil {
			return err
		}
		defer closePool()

		if err := client.Retry(ctx, id); err != nil {
			if errors.Is(err, workflow.ErrRunNotRetryable) {
				return withHint(fmt.Errorf("run %s is %s", id, cmp.Or(string(runStatusOf(ctx, client, id)), "not failed or cancelled")),
					"only a failed or cancelled run can be retried")
			}
			return workflowError(err, id)
		}
		run, err := client.GetRun(ctx, id)
		if err != nil {
			return workflowError(err, id)
		}
		if *asJSON {
			return printJSON(env.Stdout, run)
		}
		_, err = fmt.Fprintf(env.Stdout, "retrying run %s (River job %d); its completed steps are not run again\n", id, run.JobID)
		return err
	}
}

func printJSON(w io.Writer, v any) error {
	encoder := json.NewEncoder(w)
	encoder.SetIndent("", "  ")
	return encoder.Encode(v)
}

func printRunsTable(w io.Writer, runs []*workflow.Run, now time.Time) error {
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "ID\tTYPE\tSTATUS\tATTEMPT\tCREATED\tFINISHED\tERROR")
	for _, run := range runs {
		fmt.Fprintf(table, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", run.ID, oneLine(run.Type), run.Status, run.Attempt, run.MaxAttempts,
			relativeTime(run.CreatedAt, now), relativeTimeOrDash(run.FinishedAt, now), shorten(runErrorText(run.Error), errorColumnWidth))
	}
	return table.Flush()
}

// printRun prints a run's fields, then its steps.
func printRun(w io.Writer, run *workflow.Run, now time.Time) error {
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	field := func(name, format string, args ...any) {
		fmt.Fprintf(table, "%s:\t%s\n", name, oneLine(fmt.Sprintf(format, args...)))
	}
	field("ID", "%s", run.ID)
	field("Type", "%s", run.Type)
	field("Status", "%s", run.Status)
	if run.SkipReason != "" {
		field("Skip reason", "%s", run.SkipReason)
	}
	if run.CancelRequestedAt != nil {
		field("Cancel requested", "%s", absoluteTime(*run.CancelRequestedAt, now))
	}
	field("Attempts", "%d/%d", run.Attempt, run.MaxAttempts)
	field("Queue", "%s (priority %d)", run.Queue, run.Priority)
	if run.JobID != 0 {
		field("River job", "%d", run.JobID)
	}
	if run.IdempotencyKey != "" {
		field("Idempotency key", "%s", run.IdempotencyKey)
	}
	if len(run.Tags) > 0 {
		field("Tags", "%s", strings.Join(run.Tags, ", "))
	}
	if run.ScheduleID != nil {
		field("Schedule", "%s", run.ScheduleID)
	}
	if run.FireAt != nil {
		field("Fire at", "%s", absoluteTime(*run.FireAt, now))
	}
	if run.ParentID != nil {
		field("Parent", "%s (step %q)", run.ParentID, run.ParentStep)
	}
	field("Created", "%s", absoluteTime(run.CreatedAt, now))
	if run.StartedAt != nil {
		field("Started", "%s", absoluteTime(*run.StartedAt, now))
	}
	if run.FinishedAt != nil {
		field("Finished", "%s", absoluteTime(*run.FinishedAt, now))
		if run.StartedAt != nil {
			field("Took", "%s", humanDuration(run.FinishedAt.Sub(*run.StartedAt)))
		}
	}
	field("Input", "%s", jsonText(run.Input))
	if len(run.Output) > 0 {
		field("Output", "%s", jsonText(run.Output))
	}
	if run.Error != nil {
		field("Error", "%s", runErrorText(run.Error))
		if run.Error.Step != "" {
			field("Failed step", "%s (attempt %d)", run.Error.Step, run.Error.Attempt)
		}
	}
	if err := table.Flush(); err != nil {
		return err
	}
	if run.Error != nil && run.Error.Stack != "" {
		if _, err := fmt.Fprintf(w, "\nStack where it panicked:\n%s\n", strings.TrimRight(run.Error.Stack, "\n")); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	return printSteps(w, run.Steps, now)
}

// printSteps prints a run's step timeline.
func printSteps(w io.Writer, steps []workflow.StepRun, now time.Time) error {
	if len(steps) == 0 {
		_, err := fmt.Fprintln(w, "no steps recorded yet")
		return err
	}
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "NAME\tKIND\tSTATUS\tATTEMPTS\tSTARTED\tDURATION\tWAKE\tCHILD")
	for _, step := range steps {
		duration := "-"
		if step.FinishedAt != nil {
			duration = humanDuration(step.Duration())
		}
		// A wake time matters while the step is parked; a finished signal
		// wait's deadline does not.
		wake := "-"
		if step.Status == workflow.StepStatusSleeping || step.Status == workflow.StepStatusWaiting {
			wake = relativeTimeOrDash(step.WakeAt, now)
		}
		child := "-"
		if step.ChildRunID != nil {
			child = step.ChildRunID.String()
		}
		fmt.Fprintf(table, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", oneLine(step.Name), step.Kind, step.Status, step.Attempts,
			relativeTime(step.StartedAt, now), duration, wake, child)
	}
	return table.Flush()
}

// runErrorText is "kind: message", or "-" without an error.
func runErrorText(e *workflow.RunError) string {
	if e == nil {
		return "-"
	}
	return oneLine(e.Kind + ": " + e.Message)
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

// humanDuration rounds d to what a reader cares about: 850µs, 12ms, 1.25s,
// 3m12s, 50m, 2h5m, 1h.
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
	s := d.String() // "1m30s", "50m0s", "2h5m0s", "1h0m0s"
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
