// Package devdb gives the examples and `tributary demo` a database: the one
// DATABASE_URL names, or else a throw-away Postgres cluster started from the
// local binaries and removed when the program ends.
package devdb

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/internal/pgcluster"
	"github.com/tributary-go/tributary/migrations"
)

// DB is an open, migrated database.
type DB struct {
	// Pool is connected to the database.
	Pool *pgxpool.Pool
	// URL is its connection string.
	URL string
	// Throwaway is true when the database is a throw-away cluster.
	Throwaway bool

	cluster *pgcluster.Cluster
}

// Open connects to DATABASE_URL, or starts a throw-away cluster when it is
// unset, and migrates River's and Tributary's tables. It says what it does on
// w. Close the DB when done: a throw-away cluster is stopped and deleted.
func Open(ctx context.Context, w io.Writer) (*DB, error) {
	db := &DB{URL: os.Getenv("DATABASE_URL")}
	if db.URL == "" {
		fmt.Fprintln(w, "DATABASE_URL is not set: starting a throw-away Postgres cluster from the local binaries…")
		cluster, err := pgcluster.Start(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("start a throw-away Postgres: %w", err)
		}
		db.cluster, db.URL, db.Throwaway = cluster, cluster.URL, true
		fmt.Fprintf(w, "Postgres is up at %s (deleted on exit)\n", cluster.URL)
	}
	pool, err := pgxpool.New(ctx, db.URL)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s: %w", db.URL, err)
	}
	db.Pool = pool
	migrator, err := migrations.New(pool, nil)
	if err != nil {
		db.Close()
		return nil, err
	}
	res, err := migrator.Up(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if n := len(res.River) + len(res.Versions); n > 0 {
		fmt.Fprintf(w, "Migrated: %d River and %d Tributary migrations applied\n", len(res.River), len(res.Versions))
	}
	return db, nil
}

// Close closes the pool and removes a throw-away cluster.
func (db *DB) Close() {
	if db.Pool != nil {
		db.Pool.Close()
	}
	if db.cluster != nil {
		_ = db.cluster.Stop(context.Background())
	}
}

// RunFunc is an example program's body: it works on pool and prints what
// happens on out. Tests call it against a test database.
type RunFunc func(ctx context.Context, pool *pgxpool.Pool, out io.Writer) error

// Main is an example program's main: it opens the database (see Open),
// calls run until it returns or Ctrl-C, closes the database, and exits
// with the error, prefixed with name, when there is one.
func Main(name string, run RunFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	db, err := Open(ctx, os.Stderr)
	if err == nil {
		err = run(ctx, db.Pool, os.Stdout)
		db.Close()
	}
	stop()
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
}
