package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/durfmt"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/workflow"
)

// newWorkflowGetCommand is `tributary workflow get`.
func newWorkflowGetCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "get <run-id> [flags]",
		Aliases: []string{"history"},
		Short:   "Show a run: its status, input, output or error, and its step timeline",
		Long: `With --json it prints the run and its recorded history (its steps, in order, with their
outputs): the file tributarytest.Replay replays against today's code in a test, so that a
team can keep production histories as regression tests. ` + "`workflow history`" + ` is another name for it.`,
		Example: `tributary workflow get 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e
					tributary workflow history --json 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e > testdata/run.json`,
	}, setupWorkflowGet)
}

func setupWorkflowGet(fs *pflag.FlagSet, env *Env) Action {
	return runCommand(fs, env, "get", "print the run and its steps as JSON", func(ctx context.Context, c *commandRun, id uuid.UUID) error {
		run, err := c.wf.GetRun(ctx, id)
		if err != nil {
			return workflowError(err, id)
		}
		if c.asJSON {
			return printRunAnswer(ctx, env, c.wf, run, nil)
		}
		forks, err := c.wf.ListRuns(ctx, &workflow.ListParams{ForkedFrom: &id, Limit: maxForksShown + 1})
		if err != nil {
			return workflowError(err, id)
		}
		held := ""
		if run.Held != "" && run.Status == workflow.StatusPending {
			tenant, err := findTenant(ctx, c.wf, run.Type, run.Tenant)
			if err != nil {
				return workflowError(err, id)
			}
			held = heldText(run.Held, tenant)
		}
		return printRun(env.Stdout, run, held, forks, time.Now())
	})
}

// maxForksShown is how many of a run's forks get lists, newest first.
const maxForksShown = 10

// printRun prints a run's fields, then its steps; held says why a held
// run waits (heldText), "" for a run not held; forks are the run's forks,
// newest first, of which the first maxForksShown are listed.
func printRun(w io.Writer, run *workflow.Run, held string, forks []*workflow.Run, now time.Time) error {
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	field := func(name, format string, args ...any) {
		fmt.Fprintf(table, "%s:\t%s\n", name, oneLine(fmt.Sprintf(format, args...)))
	}
	field("ID", "%s", run.ID)
	field("Type", "%s", run.Type)
	if run.Tenant != "" {
		field("Tenant", "%s", run.Tenant)
	}
	field("Status", "%s", runStatusText(run))
	if held != "" {
		field("Held", "%s", held)
	}
	if run.SkipReason != "" {
		field("Skip reason", "%s", run.SkipReason)
	}
	if run.CancelRequestedAt != nil {
		field("Cancel requested", "%s", absoluteTime(*run.CancelRequestedAt, now))
	}
	if run.NextAttemptAt != nil {
		field("Attempts", "%s", nextAttemptText(run, now))
	} else {
		field("Attempts", "%d/%d", run.Attempt, run.MaxAttempts)
	}
	if retry := wire.RetryText(run); retry != "" {
		field("Retry", "%s", retry)
	}
	field("Queue", "%s (priority %d)", run.Queue, run.Priority)
	if run.JobID != 0 {
		field("River job", "%d", run.JobID)
	}
	if run.IdempotencyKey != "" {
		field("Idempotency key", "%s", run.IdempotencyKey)
	}
	if run.DebounceKey != "" {
		field("Debounce key", "%s", run.DebounceKey)
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
	if run.ForkedFrom != nil {
		field("Forked from", "%s at step %q", run.ForkedFrom, run.ForkedFromStep)
	}
	for i, fork := range forks[:min(len(forks), maxForksShown)] {
		label := ""
		if i == 0 {
			label = "Forks:"
		}
		fmt.Fprintf(table, "%s\t%s\n", label, oneLine(fmt.Sprintf("%s at step %q (%s)", fork.ID, fork.ForkedFromStep, fork.Status)))
	}
	if len(forks) > maxForksShown {
		fmt.Fprintf(table, "\tand more: GET /api/runs?forked_from=%s lists them all\n", run.ID)
	}
	field("Created", "%s", absoluteTime(run.CreatedAt, now))
	if run.StartedAt != nil {
		field("Started", "%s", absoluteTime(*run.StartedAt, now))
	}
	if run.FinishedAt != nil {
		field("Finished", "%s", absoluteTime(*run.FinishedAt, now))
		if run.StartedAt != nil {
			field("Took", "%s", durfmt.Human(run.FinishedAt.Sub(*run.StartedAt)))
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
