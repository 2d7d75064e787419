package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/migrations"
)

// newMigrateDownCommand is `tributary migrate down`.
func newMigrateDownCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "down",
		Short: "Roll back Tributary's migrations above a version (removes their tables and data)",
		Long: `Each migration is rolled back in its own transaction, newest first, with a line as it
					commits; with --include-river, River's follow once all of Tributary's are gone. Rolling back
					drops tables and their rows (schedules, runs, River's jobs): it first says what it would drop
					and how many rows they hold, and goes on only with --yes, or when you type "yes" at the prompt
					on a terminal. Nothing to roll back needs no confirmation.`,
		Example: `tributary migrate down --target 0 --yes
					tributary migrate down --include-river`,
	}, setupMigrateDown)
}

func setupMigrateDown(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	target := fs.Int("target", 0, "the `version` to keep; 0 removes all of Tributary's tables (required unless --include-river)")
	includeRiver := fs.Bool("include-river", false, "also remove River's tables, after all of Tributary's")
	yes := fs.Bool("yes", false, "roll back without asking: the tables named, and their rows, are dropped")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if !fs.Changed("target") && !*includeRiver {
			return withHint(usageErrorf("migrate down removes tables and their data, so it needs --target"),
				"pass --target 0 to remove all of Tributary's tables, or the version to keep (see 'tributary migrate status')")
		}

		pool, schema, err := dbFlags.pool(ctx)
		if err != nil {
			return err
		}
		defer pool.Close()

		if !*yes {
			if err := confirmDown(ctx, env, pool, schema, *target, *includeRiver); err != nil {
				return err
			}
		}

		what := fmt.Sprintf("Tributary's migrations above version %d", *target)
		if *includeRiver {
			what = "all of Tributary's migrations, then River's"
		}
		fmt.Fprintf(env.Stdout, "rolling back %s…\n", what)
		res, err := migrateWithProgress(env, env.Stdout, pool, schema, func(m *migrations.Migrator) (*migrations.Result, error) {
			return m.Down(ctx, &migrations.DownOpts{IncludeRiver: *includeRiver, TargetVersion: *target})
		})
		if err != nil {
			return withHint(err, "the migrations listed above were rolled back and stay so; fix the cause and run the command again")
		}
		if len(res.Versions) == 0 && len(res.River) == 0 {
			fmt.Fprintln(env.Stdout, "nothing to roll back")
		}
		return nil
	}
}
