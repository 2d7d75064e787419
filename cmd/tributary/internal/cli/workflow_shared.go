package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-go/tributary/internal/durfmt"
	"github.com/tributary-go/tributary/workflow"
)

// runIDHint says what a run id looks like.
const runIDHint = "run ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e"

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

func isRunStatus(status workflow.Status) bool {
	return slices.Contains(runStatuses, status)
}

// runErrorText is "kind: message", or "-" without an error.
func runErrorText(e *workflow.RunError) string {
	if e == nil {
		return "-"
	}
	return oneLine(e.Kind + ": " + e.Message)
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
			duration = durfmt.Human(step.Duration())
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
			durfmt.Relative(step.StartedAt, now), duration, wake, child)
	}
	return table.Flush()
}
