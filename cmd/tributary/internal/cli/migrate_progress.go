package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/migrations"
)

// newMigrator returns a migrator on pool that logs to env.Logger.
func newMigrator(env *Env, pool *pgxpool.Pool, schema string) (*migrations.Migrator, error) {
	return newMigratorWithProgress(env, pool, schema, nil)
}

// newMigratorWithProgress is newMigrator with a progress callback
// (migrations.Config.Progress).
func newMigratorWithProgress(env *Env, pool *pgxpool.Pool, schema string, progress func(migrations.Progress)) (*migrations.Migrator, error) {
	migrator, err := migrations.New(pool, &migrations.Config{Logger: env.Logger, Progress: progress, Schema: schema})
	if err != nil {
		return nil, withHint(err, "fix --schema or TRIBUTARY_SCHEMA")
	}
	return migrator, nil
}

// migrateWithProgress runs migrate (Up or Down of the migrator it is given)
// and prints a line on w as each migration commits, which the migrator
// reports through migrations.Config.Progress: "applied river
// 004_pending_and_more (12ms)", then Tributary's "applied 001_workflows
// (8ms)".
func migrateWithProgress(env *Env, w io.Writer, pool *pgxpool.Pool, schema string, migrate func(*migrations.Migrator) (*migrations.Result, error)) (*migrations.Result, error) {
	migrator, err := newMigratorWithProgress(env, pool, schema, func(p migrations.Progress) {
		if p.Phase == migrations.PhaseDone {
			printProgress(w, p)
		}
	})
	if err != nil {
		return nil, err
	}
	return migrate(migrator)
}

// printProgress prints the line of a migration that has committed:
// "applied river 004_pending_and_more (12ms)", "rolled back 001_workflows
// (8ms)".
func printProgress(w io.Writer, p migrations.Progress) {
	verb := "applied"
	if p.Direction == migrations.DirectionDown {
		verb = "rolled back"
	}
	prefix := ""
	if p.River {
		prefix = "river "
	}
	name := strings.ReplaceAll(p.Name, " ", "_") // River's names have spaces
	fmt.Fprintf(w, "%s %s%03d_%s (%s)\n", verb, prefix, p.Version, name, roundDuration(p.Duration))
}

// roundDuration rounds a migration's duration for its line: to the
// microsecond below a millisecond, else to the millisecond.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
