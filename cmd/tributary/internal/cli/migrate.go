package cli

import "github.com/spf13/cobra"

// newMigrateCommand is the `tributary migrate` group, one file a command
// (migrate_down.go, migrate_status.go, migrate_up.go); migrate_progress.go
// prints the lines of up and down.
func newMigrateCommand(env *Env) *cobra.Command {
	return group(&cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade River's and Tributary's tables, roll them back, or show their state",
		Example: `tributary migrate up --database-url postgres://localhost:5432/app
			tributary migrate status --schema tributary`,
	},
		newMigrateDownCommand(env),
		newMigrateStatusCommand(env),
		newMigrateUpCommand(env),
	)
}
