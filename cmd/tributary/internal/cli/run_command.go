package cli

import (
	"context"

	"github.com/google/uuid"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// The skeleton the commands that talk to the database share, written once
// as River's CLI writes its RunCommand: the --database-url, --schema and
// --json flags; the positional arguments, read before anything connects;
// the clients, opened for the command and closed after it. A command file
// keeps only what is its own: its other flags, how it reads its arguments
// and what it does with them. The commands that need the pool itself
// connect on their own: migrate (before the tables exist), serve (a client
// that works jobs, once the schema is checked) and demo (a throw-away
// Postgres, which it migrates).

// commandRun is what a command's run is given.
type commandRun struct {
	env    *Env
	wf     *workflow.Client
	sc     *schedule.Client // nil unless the command asked for schedules
	asJSON bool             // --json was given
}

// dbSpec says what a command's skeleton holds besides the database flags.
type dbSpec struct {
	// json is the usage of the command's --json; "" for none.
	json string
	// schedules opens a schedule client too, bound to the workflow client
	// (scheduleClients).
	schedules bool
}

// dbCommand is the Action of a command with spec's flags on fs: it reads
// the arguments with parse, opens the clients, runs run with them and
// what parse read, and closes the clients.
func dbCommand[A any](fs *pflag.FlagSet, env *Env, spec dbSpec, parse func(args []string) (A, error),
	run func(ctx context.Context, c *commandRun, arg A) error,
) Action {
	dbFlags := addDatabaseFlags(fs, env)
	asJSON := new(bool)
	if spec.json != "" {
		asJSON = fs.Bool("json", false, spec.json)
	}
	return func(ctx context.Context, args []string) error {
		arg, err := parse(args)
		if err != nil {
			return err
		}
		c := &commandRun{env: env, asJSON: *asJSON}
		var closeClients func()
		if spec.schedules {
			c.sc, c.wf, closeClients, err = dbFlags.scheduleClients(ctx)
		} else {
			c.wf, closeClients, err = dbFlags.workflowClient(ctx)
		}
		if err != nil {
			return err
		}
		defer closeClients()
		return run(ctx, c, arg)
	}
}

// runCommand is dbCommand for a command on one run, `<cmd> <run-id>`.
func runCommand(fs *pflag.FlagSet, env *Env, cmd, jsonUsage string, run func(ctx context.Context, c *commandRun, id uuid.UUID) error) Action {
	return dbCommand(fs, env, dbSpec{json: jsonUsage}, func(args []string) (uuid.UUID, error) { return runIDArg(cmd, args) }, run)
}

// scheduleCommand is dbCommand for a command on one schedule, `<cmd>
// <id-or-key> [--owner <owner>]`, with a schedule client.
func scheduleCommand(fs *pflag.FlagSet, env *Env, cmd, jsonUsage string, run func(ctx context.Context, c *commandRun, ref schedule.Ref) error) Action {
	refFlags := addRefFlags(fs)
	return dbCommand(fs, env, dbSpec{json: jsonUsage, schedules: true}, func(args []string) (schedule.Ref, error) { return refFlags.ref(cmd, args) }, run)
}
