package cli

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/migrations"
)

// newMigrateUpCommand is `tributary migrate up`.
func newMigrateUpCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "up",
		Short: "Apply River's and then Tributary's migrations that the database doesn't have yet",
		Long: `Each migration is applied in its own transaction, with a line as it commits. Migrations
					applied before a failure stay applied; run the command again once the cause is fixed.
					Safe to run from several processes at once: they take turns on an advisory lock.`,
		Example: "tributary migrate up --database-url postgres://localhost:5432/app",
	}, setupMigrateUp)
}

func setupMigrateUp(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		pool, schema, err := dbFlags.pool(ctx)
		if err != nil {
			return err
		}
		defer pool.Close()
		return migrateUp(ctx, env, pool, schema)
	}
}

// migrateUp applies River's and Tributary's migrations with a line of
// progress each on env.Stdout.
func migrateUp(ctx context.Context, env *Env, pool *pgxpool.Pool, schema string) error {
	fmt.Fprintln(env.Stdout, "migrating: River's migrations first, then Tributary's…")
	res, err := migrateWithProgress(env, env.Stdout, pool, schema, func(m *migrations.Migrator) (*migrations.Result, error) {
		return m.Up(ctx)
	})
	if err != nil {
		return withHint(err, "the migrations listed above were applied and stay so; fix the cause and run the command again")
	}
	if len(res.Versions) == 0 && len(res.River) == 0 {
		fmt.Fprintln(env.Stdout, "nothing to apply; the database is up to date")
	}
	return nil
}
