package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/pgcluster"
	"github.com/tributary-go/tributary/migrations"
)

// databaseFlags are the flags every command that talks to the database
// takes: --database-url and --schema, defaulting to DATABASE_URL and
// TRIBUTARY_SCHEMA.
type databaseFlags struct {
	env    *Env
	schema *envFlag
	url    *envFlag
}

func addDatabaseFlags(fs *pflag.FlagSet, env *Env) *databaseFlags {
	return &databaseFlags{
		env:    env,
		schema: envString(fs, env, "schema", "TRIBUTARY_SCHEMA", "", "Postgres `schema` of River's and Tributary's tables, and the connections' search_path", "the search_path"),
		url:    envString(fs, env, "database-url", "DATABASE_URL", "", "Postgres connection `URL`", ""),
	}
}

// errNoDatabaseURL is the error of a command run without a database URL.
var errNoDatabaseURL = withHint(errors.New("no database URL given"),
	"pass --database-url or set DATABASE_URL, e.g. DATABASE_URL=postgres://user:password@localhost:5432/app")

// pool connects to the database the flags (or DATABASE_URL) name and
// returns the pool with the schema (--schema, else TRIBUTARY_SCHEMA).
func (f *databaseFlags) pool(ctx context.Context) (*pgxpool.Pool, string, error) {
	url := f.url.Get()
	if url == "" {
		return nil, "", errNoDatabaseURL
	}
	schema := f.schema.Get()
	pool, err := connect(ctx, url, schema)
	return pool, schema, err
}

// connect opens a pool on url and checks that the database answers. A
// schema goes first on the connections' search_path, so that tables named
// without a schema (the demo's own) land beside Tributary's.
func connect(ctx context.Context, url, schema string) (*pgxpool.Pool, error) {
	config, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, withHint(fmt.Errorf("invalid database URL: %w", err),
			"use a URL like postgres://user:password@localhost:5432/app")
	}
	if schema != "" {
		config.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	}
	pool, err := pgxpool.NewWithConfig(ctx, config)
	if err == nil {
		if err = pool.Ping(ctx); err != nil {
			pool.Close()
		}
	}
	if err != nil {
		return nil, withHint(fmt.Errorf("connecting to the database: %w", err),
			"check the database URL and that Postgres is running")
	}
	return pool, nil
}

// migrator connects to the database and returns a migrator and the
// function that closes its pool.
func (f *databaseFlags) migrator(ctx context.Context) (*migrations.Migrator, func(), error) {
	pool, schema, err := f.pool(ctx)
	if err != nil {
		return nil, nil, err
	}
	migrator, err := newMigrator(f.env, pool, schema)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return migrator, pool.Close, nil
}

// startThrowawayPostgres starts a throw-away cluster as `tributary demo`
// does, saying so on w.
func startThrowawayPostgres(ctx context.Context, w io.Writer) (*pgcluster.Cluster, error) {
	fmt.Fprintln(w, "DATABASE_URL is not set: starting a throw-away Postgres cluster from the local binaries…")
	cluster, err := pgcluster.Start(ctx, nil)
	if err != nil {
		if errors.Is(err, pgcluster.ErrNoPostgres) {
			return nil, withHint(err, "or set DATABASE_URL to a Postgres you can write to")
		}
		return nil, withHint(fmt.Errorf("starting a throw-away Postgres: %w", err), "set DATABASE_URL to a Postgres you can write to")
	}
	for _, dir := range cluster.Removed {
		fmt.Fprintf(w, "Removed a stale throw-away cluster, left running by a process that was killed: %s\n", dir)
	}
	if cluster.RemoveError != nil {
		fmt.Fprintf(w, "warning: %v\n", cluster.RemoveError)
	}
	fmt.Fprintf(w, "Postgres is up at %s (removed on exit)\n", cluster.URL)
	return cluster, nil
}

// removeThrowawayPostgres stops and deletes a cluster started by
// startThrowawayPostgres, saying so on w.
func removeThrowawayPostgres(ctx context.Context, cluster *pgcluster.Cluster, w io.Writer) error {
	if err := cluster.Stop(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("removing the throw-away Postgres: %w", err)
	}
	fmt.Fprintln(w, "Removed the throw-away Postgres cluster.")
	return nil
}
