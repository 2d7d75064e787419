package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/workflow"
)

// newWorkflowCancelCommand is `tributary workflow cancel`.
func newWorkflowCancelCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "cancel <run-id> [flags]",
		Short:   "Cancel a run: at once when it is pending, sleeping or waiting, else at its next step boundary",
		Example: "tributary workflow cancel 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e",
	}, setupWorkflowCancel)
}

func setupWorkflowCancel(fs *pflag.FlagSet, env *Env) Action {
	return runCommand(fs, env, "cancel", "print the run as it is after the cancellation, as JSON (like get --json)", func(ctx context.Context, c *commandRun, id uuid.UUID) error {
		// A finished run is left as it is, and that is an answer, not an
		// error: as pausing a paused schedule is.
		finished := false
		if err := c.wf.Cancel(ctx, id); err != nil {
			if !errors.Is(err, workflow.ErrRunFinished) {
				return workflowError(err, id)
			}
			finished = true
		}
		run, err := c.wf.GetRun(ctx, id)
		if err != nil {
			return workflowError(err, id)
		}
		if c.asJSON {
			return printRunAnswer(ctx, env, c.wf, run, nil)
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
	})
}
