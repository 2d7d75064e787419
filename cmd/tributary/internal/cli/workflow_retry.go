package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"

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
			return printRunAnswer(ctx, env, client, run, nil)
		}
		_, err = fmt.Fprintf(env.Stdout, "retrying run %s (River job %d); its completed steps are not run again\n", id, run.JobID)
		return err
	}
}
