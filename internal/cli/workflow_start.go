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

// newWorkflowStartCommand is `tributary workflow start`.
func newWorkflowStartCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "start <type> [--input <json>] [flags]",
		Short: "Start a run of a workflow type, for the service that registers it to work",
		Long: `Inserts the run and its River job in one transaction and prints the run's id. This process has
					no workflow code: the run waits until a working client that registers the type fetches it.
					With --idempotency-key, starting the same type with the same key again prints the first
					run instead of starting another. --tenant names the tenant (customer, partner) the run
					works for: 'workflow list --tenant' finds its runs.`,
		Example: `tributary workflow start send_report --input '{"to": "ops"}'
					tributary workflow start import_users --input @users.json --idempotency-key import-2026-11-25
					tributary workflow start send_report --input '{"to": "ops"}' --tenant acme`,
	}, setupWorkflowStart)
}

func setupWorkflowStart(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	input := fs.String("input", "null", "the run's input, a `JSON` value such as '{\"to\": \"ops\"}', @file.json or - for standard input (default null)")
	key := fs.String("idempotency-key", "", "start at most one run of the type with this `key`; again, it prints the first run")
	queue := fs.String("queue", "", "the River `queue` of the run's jobs (default the type's, else default)")
	priority := fs.Int("priority", 0, "the River priority of the run's jobs, `n` from 1 (highest) to 4 (default the type's, else 1)")
	tenant := fs.String("tenant", "", "the `tenant` (customer, partner) the run works for, 1 to 100 printable characters; its child runs carry it too (default none)")
	requireWorker := fs.Bool("require-worker", false, "refuse to start the run when no live worker serves the type (without it: start it and warn)")
	asJSON := fs.Bool("json", false, "print the run as JSON (like get --json) instead of its id")

	return func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			return withHint(usageErrorf("workflow start needs one workflow type, not %d arguments", len(args)),
				`e.g. tributary workflow start send_report --input '{"to": "ops"}'`)
		}
		typ := args[0]
		inputJSON, err := jsonFlag(env, "input", *input, `{"to": "ops"}`)
		if err != nil {
			return err
		}
		if err := checkTenantFlag(*tenant); err != nil {
			return err
		}
		client, closePool, err := dbFlags.workflowClient(ctx)
		if err != nil {
			return err
		}
		defer closePool()

		run, err := client.StartByName(ctx, typ, inputJSON, &workflow.StartOpts{
			IdempotencyKey: *key, Queue: *queue, Priority: *priority, RequireWorker: *requireWorker, Tenant: *tenant,
		})
		var noWorker *workflow.NoWorkerError
		if errors.As(err, &noWorker) {
			return withHint(err, "start the service that works it first, or leave --require-worker out to start the run anyway")
		}
		if err != nil {
			return workflowError(err, uuid.Nil)
		}
		if !*requireWorker { // else the start checked it
			warnNoWorker(ctx, env, client, typ)
		}
		if *asJSON {
			return printJSON(env.Stdout, run)
		}
		_, err = fmt.Fprintln(env.Stdout, run.ID)
		return err
	}
}
