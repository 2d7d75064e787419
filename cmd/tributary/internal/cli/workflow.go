package cli

import "github.com/spf13/cobra"

// newWorkflowCommand is the `tributary workflow` group, one file a command
// (workflow_cancel.go, workflow_get.go, …), with what several of them share
// in workflow_shared.go. It reads and controls runs through an insert-only
// workflow.Client, which needs no workflow types registered, so it works on
// the runs of any service sharing the database.
func newWorkflowCommand(env *Env) *cobra.Command {
	return group(&cobra.Command{
		Use:   "workflow",
		Short: "Start, list, inspect, signal, cancel, retry and fork workflow runs",
		Example: `tributary workflow list --status failed
			tributary workflow get 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e
			tributary workflow signal 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e approved --payload '{"by": "ops"}'`,
	},
		newWorkflowBulkCommand(env),
		newWorkflowCancelCommand(env),
		newWorkflowForkCommand(env),
		newWorkflowGetCommand(env),
		newWorkflowListCommand(env),
		newWorkflowRetryCommand(env),
		newWorkflowSignalCommand(env),
		newWorkflowStartCommand(env),
		newWorkflowStepsCommand(env),
	)
}
