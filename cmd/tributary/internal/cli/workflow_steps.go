package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/wire"
)

// newWorkflowStepsCommand is `tributary workflow steps`.
func newWorkflowStepsCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "steps <run-id> [flags]",
		Short:   "Show a run's step timeline: steps, sleeps, signal waits and child runs",
		Example: "tributary workflow steps 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --json",
	}, setupWorkflowSteps)
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
			return printJSON(env.Stdout, wire.NewSteps(run.Steps))
		}
		return printSteps(env.Stdout, run.Steps, time.Now())
	}
}
