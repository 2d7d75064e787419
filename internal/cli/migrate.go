package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/migrations"
)

func newMigrateCommand(env *Env) *cobra.Command {
	return group(&cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade River's and Tributary's tables, roll them back, or show their state",
		Example: `tributary migrate up --database-url postgres://localhost:5432/app
			tributary migrate status --schema tributary`,
	},
		command(env, &cobra.Command{
			Use:   "down",
			Short: "Roll back Tributary's migrations above a version (removes their tables and data)",
			Long: `Each migration is rolled back in its own transaction, newest first, with a line as it
					commits; with --include-river, River's follow once all of Tributary's are gone. Rolling back
					drops tables and their rows (schedules, runs, River's jobs): it first says what it would drop
					and how many rows they hold, and goes on only with --yes, or when you type "yes" at the prompt
					on a terminal. Nothing to roll back needs no confirmation.`,
			Example: `tributary migrate down --target 0 --yes
					tributary migrate down --include-river`,
		}, setupMigrateDown),
		command(env, &cobra.Command{
			Use:     "status",
			Short:   "Show which of Tributary's migrations the database has, and River's version",
			Example: "tributary migrate status --json",
		}, setupMigrateStatus),
		command(env, &cobra.Command{
			Use:   "up",
			Short: "Apply River's and then Tributary's migrations that the database doesn't have yet",
			Long: `Each migration is applied in its own transaction, with a line as it commits. Migrations
					applied before a failure stay applied; run the command again once the cause is fixed.
					Safe to run from several processes at once: they take turns on an advisory lock.`,
			Example: "tributary migrate up --database-url postgres://localhost:5432/app",
		}, setupMigrateUp),
	)
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

func setupMigrateStatus(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		migrator, closePool, err := dbFlags.migrator(ctx)
		if err != nil {
			return err
		}
		defer closePool()

		status, err := migrator.Status(ctx)
		if err != nil {
			return withHint(err, "check the database URL and --schema")
		}
		if *asJSON {
			return printStatusJSON(env.Stdout, status)
		}
		return printStatusTable(env.Stdout, status)
	}
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

func noArgs(args []string) error {
	if len(args) > 0 {
		return usageErrorf("unexpected argument %q", args[0])
	}
	return nil
}

func roundDuration(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// statusJSON is the shape of `migrate status --json`.
type statusJSON struct {
	Migrations []versionStatusJSON `json:"migrations"`
	River      riverStatusJSON     `json:"river"`
}

type riverStatusJSON struct {
	Latest  int `json:"latest"`
	Version int `json:"version"`
}

type versionStatusJSON struct {
	Applied   bool       `json:"applied"`
	AppliedAt *time.Time `json:"applied_at"`
	Name      string     `json:"name"`
	Version   int        `json:"version"`
}

func printStatusJSON(w io.Writer, status *migrations.Status) error {
	out := statusJSON{
		Migrations: make([]versionStatusJSON, len(status.Versions)),
		River:      riverStatusJSON{Latest: status.RiverLatest, Version: status.RiverVersion},
	}
	for i, version := range status.Versions {
		out.Migrations[i] = versionStatusJSON{Applied: version.Applied, Name: version.Name, Version: version.Version}
		if version.Applied {
			appliedAt := version.AppliedAt.UTC()
			out.Migrations[i].AppliedAt = &appliedAt
		}
	}
	encoder := json.NewEncoder(w)
	encoder.SetIndent("", "  ")
	return encoder.Encode(out)
}

func printStatusTable(w io.Writer, status *migrations.Status) error {
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "VERSION\tNAME\tSTATUS\tAPPLIED AT")
	for _, version := range status.Versions {
		state, appliedAt := "pending", "-"
		if version.Applied {
			state, appliedAt = "applied", version.AppliedAt.UTC().Format(time.DateTime+" MST")
		}
		fmt.Fprintf(table, "%03d\t%s\t%s\t%s\n", version.Version, version.Name, state, appliedAt)
	}
	if err := table.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nRiver: version %d of %d\n", status.RiverVersion, status.RiverLatest)
	return err
}
