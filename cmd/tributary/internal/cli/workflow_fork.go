package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/workflow"
)

// newWorkflowForkCommand is `tributary workflow fork`.
func newWorkflowForkCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "fork <run-id> --from-step <name> [flags]",
		Short: "Start a new run from a finished run's step: earlier steps are copied, that step and later ones run again",
		Long: `Fork starts a new run with the run's type and input. The steps the run completed before
--from-step are not run again: their recorded results are copied (a StepTx's database writes are
not redone). --from-step and every step after it run with the code deployed now. The new run
records where it came from; 'workflow get' shows it, and the original's forks. A run that is not
finished is refused: cancel it first.`,
		Example: "tributary workflow fork 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --from-step charge",
	}, setupWorkflowFork)
}

func setupWorkflowFork(fs *pflag.FlagSet, env *Env) Action {
	fromStep := fs.String("from-step", "", "the `name` of the step to run again, and every step after it, as 'workflow get' lists it (required)")
	parse := func(args []string) (uuid.UUID, error) {
		id, err := runIDArg("fork", args)
		if err == nil && *fromStep == "" {
			err = withHint(usageErrorf("workflow fork needs --from-step"),
				fmt.Sprintf("name the step to run again, as 'tributary workflow get %s' lists it", id))
		}
		return id, err
	}
	return dbCommand(fs, env, dbSpec{json: "print the new run as JSON (like get --json)"}, parse, func(ctx context.Context, c *commandRun, id uuid.UUID) error {

		fork, err := c.wf.Fork(ctx, id, *fromStep)
		var notRecorded *workflow.StepNotRecordedError
		switch {
		case errors.Is(err, workflow.ErrRunNotFinished):
			return withHint(fmt.Errorf("run %s is %s", id, runStatusOf(ctx, c.wf, id)),
				fmt.Sprintf("only a finished run can be forked; cancel it first with 'tributary workflow cancel %s'", id))
		case errors.As(err, &notRecorded) && len(notRecorded.Recorded) > 0:
			return withHint(usageErrorf("run %s has no step %q", id, *fromStep),
				"it recorded "+strings.Join(quoteAll(notRecorded.Recorded), ", ")+"; fork from one of them")
		case errors.As(err, &notRecorded):
			return withHint(usageErrorf("run %s has no step %q", id, *fromStep),
				"it recorded no step; start a new run with 'tributary workflow start' instead")
		case err != nil:
			return workflowError(err, id)
		}
		if c.asJSON {
			if fork, err = c.wf.GetRun(ctx, fork.ID); err != nil { // with the steps it took over
				return workflowError(err, id)
			}
			return printRunAnswer(ctx, env, c.wf, fork, nil)
		}
		_, err = fmt.Fprintf(env.Stdout, "forked run %s at step %q: new run %s (pending)\nfollow it with: tributary workflow get %s\n",
			id, *fromStep, fork.ID, fork.ID)
		return err
	})
}

// quoteAll is each of names quoted.
func quoteAll(names []string) []string {
	quoted := make([]string, len(names))
	for i, name := range names {
		quoted[i] = fmt.Sprintf("%q", name)
	}
	return quoted
}
