package cli

import (
	"context"
	"time"

	"github.com/google/uuid"
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
	return runCommand(fs, env, "steps", "print a JSON array of the run's steps instead of a table", func(ctx context.Context, c *commandRun, id uuid.UUID) error {
		// GetRun, not Steps: Steps can't tell an unknown run from one that
		// has no steps yet.
		run, err := c.wf.GetRun(ctx, id)
		if err != nil {
			return workflowError(err, id)
		}
		if c.asJSON {
			return printJSON(env.Stdout, wire.NewSteps(run.Steps))
		}
		return printSteps(env.Stdout, run.Steps, time.Now())
	})
}
