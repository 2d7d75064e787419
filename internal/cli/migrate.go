package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/migrations"
)

func init() {
	Register(&Command{
		Name:    "migrate",
		Summary: "Create or upgrade River's and Tributary's tables, roll them back, or show their state",
		Example: `tributary migrate up --database-url postgres://localhost:5432/app
			tributary migrate status --schema tributary`,
		Subcommands: []*Command{
			{
				Name:    "down",
				Summary: "Roll back Tributary's migrations above a version (removes their tables and data)",
				Example: `tributary migrate down --target 0
					tributary migrate down --include-river`,
				Setup: setupMigrateDown,
			},
			{
				Name:    "status",
				Summary: "Show which of Tributary's migrations the database has, and River's version",
				Example: "tributary migrate status --json",
				Setup:   setupMigrateStatus,
			},
			{
				Name:    "up",
				Summary: "Apply River's and then Tributary's migrations that the database doesn't have yet",
				Example: "tributary migrate up --database-url postgres://localhost:5432/app",
				Setup:   setupMigrateUp,
			},
		},
	})
}

// databaseFlags are the flags every command that talks to the database
// takes.
type databaseFlags struct {
	env    *Env
	schema string
	url    string
}

func addDatabaseFlags(fs *flag.FlagSet, env *Env) *databaseFlags {
	flags := &databaseFlags{env: env}
	// The defaults are read after parsing, so that --help doesn't print a
	// password from DATABASE_URL.
	fs.StringVar(&flags.url, "database-url", "", "Postgres connection `URL` (default $DATABASE_URL)")
	fs.StringVar(&flags.schema, "schema", "", "Postgres `schema` of River's and Tributary's tables (default $TRIBUTARY_SCHEMA, else the search_path)")
	return flags
}

// pool connects to the database the flags (or DATABASE_URL) name and
// returns the pool with the schema (--schema, else TRIBUTARY_SCHEMA).
func (f *databaseFlags) pool(ctx context.Context) (*pgxpool.Pool, string, error) {
	url := f.url
	if url == "" {
		url = f.env.Getenv("DATABASE_URL")
	}
	if url == "" {
		return nil, "", withHint(errors.New("no database URL given"),
			"pass --database-url or set DATABASE_URL, e.g. DATABASE_URL=postgres://user:password@localhost:5432/app")
	}
	schema := f.schema
	if schema == "" {
		schema = f.env.Getenv("TRIBUTARY_SCHEMA")
	}

	config, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, "", withHint(fmt.Errorf("invalid database URL: %w", err),
			"use a URL like postgres://user:password@localhost:5432/app")
	}
	pool, err := pgxpool.NewWithConfig(ctx, config)
	if err != nil {
		return nil, "", withHint(fmt.Errorf("connecting to the database: %w", err),
			"check the database URL and that Postgres is running")
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, "", withHint(fmt.Errorf("connecting to the database: %w", err),
			"check the database URL and that Postgres is running")
	}
	return pool, schema, nil
}

// migrator connects to the database and returns a migrator and the
// function that closes its pool.
func (f *databaseFlags) migrator(ctx context.Context) (*migrations.Migrator, func(), error) {
	pool, schema, err := f.pool(ctx)
	if err != nil {
		return nil, nil, err
	}
	migrator, err := migrations.New(pool, &migrations.Config{Logger: f.env.Logger, Schema: schema})
	if err != nil {
		pool.Close()
		return nil, nil, withHint(err, "fix --schema or TRIBUTARY_SCHEMA")
	}
	return migrator, pool.Close, nil
}

func setupMigrateDown(fs *flag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	target := fs.Int("target", 0, "the `version` to keep; 0 removes all of Tributary's tables (required unless --include-river)")
	includeRiver := fs.Bool("include-river", false, "also remove River's tables, after all of Tributary's")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		targetSet := false
		fs.Visit(func(f *flag.Flag) { targetSet = targetSet || f.Name == "target" })
		if !targetSet && !*includeRiver {
			return withHint(usageErrorf("migrate down removes tables and their data, so it needs --target"),
				"pass --target 0 to remove all of Tributary's tables, or the version to keep (see 'tributary migrate status')")
		}

		migrator, closePool, err := dbFlags.migrator(ctx)
		if err != nil {
			return err
		}
		defer closePool()

		res, err := migrator.Down(ctx, &migrations.DownOpts{IncludeRiver: *includeRiver, TargetVersion: *target})
		if err != nil {
			return withHint(err, "migrations rolled back before the failure stay rolled back; fix the cause and run the command again")
		}
		printVersions(env.Stdout, "rolled back", "", res.Versions)
		printVersions(env.Stdout, "rolled back", "river ", res.River)
		if len(res.Versions) == 0 && len(res.River) == 0 {
			fmt.Fprintln(env.Stdout, "nothing to roll back")
		}
		return nil
	}
}

func setupMigrateStatus(fs *flag.FlagSet, env *Env) Action {
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

func setupMigrateUp(fs *flag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		migrator, closePool, err := dbFlags.migrator(ctx)
		if err != nil {
			return err
		}
		defer closePool()

		res, err := migrator.Up(ctx)
		if err != nil {
			return withHint(err, "migrations applied before the failure stay applied; fix the cause and run the command again")
		}
		printVersions(env.Stdout, "applied", "river ", res.River)
		printVersions(env.Stdout, "applied", "", res.Versions)
		if len(res.Versions) == 0 && len(res.River) == 0 {
			fmt.Fprintln(env.Stdout, "nothing to apply; the database is up to date")
		}
		return nil
	}
}

func noArgs(args []string) error {
	if len(args) > 0 {
		return usageErrorf("unexpected argument %q", args[0])
	}
	return nil
}

// printVersions prints one progress line per migration:
// "applied 001_workflows (12ms)".
func printVersions(w io.Writer, verb, prefix string, versions []migrations.MigrateVersion) {
	for _, version := range versions {
		name := strings.ReplaceAll(version.Name, " ", "_") // River's names have spaces
		fmt.Fprintf(w, "%s %s%03d_%s (%s)\n", verb, prefix, version.Version, name, roundDuration(version.Duration))
	}
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
