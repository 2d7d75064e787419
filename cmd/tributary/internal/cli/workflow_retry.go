package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/workflow"
)

// newWorkflowRetryCommand is `tributary workflow retry`.
func newWorkflowRetryCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "retry <run-id> [flags]",
		Short:   "Run a failed or cancelled run again, from where it stopped (completed steps are not redone)",
		Example: "tributary workflow retry 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e",
	}, setupWorkflowRetry)
}

func setupWorkflowRetry(fs *pflag.FlagSet, env *Env) Action {
	return runCommand(fs, env, "retry", "print the run as it is after the retry, as JSON (like get --json)", func(ctx context.Context, c *commandRun, id uuid.UUID) error {
		if err := c.wf.Retry(ctx, id); err != nil {
			if errors.Is(err, workflow.ErrRunNotRetryable) {
				return withHint(fmt.Errorf("run %s is %s", id, cmp.Or(string(runStatusOf(ctx, c.wf, id)), "not failed or cancelled")),
					"only a failed or cancelled run can be retried")
			}
			return workflowError(err, id)
		}
		run, err := c.wf.GetRun(ctx, id)
		if err != nil {
			return workflowError(err, id)
		}
		if c.asJSON {
			return printRunAnswer(ctx, env, c.wf, run, nil)
		}
		_, err = fmt.Fprintf(env.Stdout, "retrying run %s (River job %d); its completed steps are not run again\n", id, run.JobID)
		return err
	})
}
