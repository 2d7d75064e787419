package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/tributary-go/tributary/migrations"
)

// newMigrator returns a migrator on pool that logs to env.Logger.
func newMigrator(env *Env, pool *pgxpool.Pool, schema string) (*migrations.Migrator, error) {
	migrator, err := migrations.New(pool, &migrations.Config{Logger: env.Logger, Schema: schema})
	if err != nil {
		return nil, withHint(err, "fix --schema or TRIBUTARY_SCHEMA")
	}
	return migrator, nil
}

// migrateWithProgress runs migrate (Up or Down of a migrator built on the
// logger it is given) and prints a line on w as each migration commits:
// "applied river 004_pending_and_more (12ms)", then Tributary's
// "applied 001_workflows (8ms)".
//
// The migrator has no progress callback; it logs every migration it applies
// or rolls back at info level, River's too, which is what the lines are
// made of. Anything its Result lists that no log line announced is printed
// after it returns, so the output is complete whatever the log says.
func migrateWithProgress(env *Env, w io.Writer, pool *pgxpool.Pool, schema string, migrate func(*migrations.Migrator) (*migrations.Result, error)) (*migrations.Result, error) {
	lines := &progressLines{printed: map[migrationKey]bool{}, w: w}
	if river, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema}); err == nil {
		lines.riverNames = map[int]string{}
		for _, m := range river.AllVersions() {
			lines.riverNames[m.Version] = m.Name
		}
	}
	logger := slog.New(&migrationProgress{lines: lines, next: env.Logger.Handler()})
	migrator, err := migrations.New(pool, &migrations.Config{Logger: logger, Schema: schema})
	if err != nil {
		return nil, withHint(err, "fix --schema or TRIBUTARY_SCHEMA")
	}
	res, err := migrate(migrator)
	if res != nil {
		verb := directionVerb(res.Direction)
		for _, v := range res.River {
			lines.print(verb, true, v.Version, v.Name, v.Duration)
		}
		for _, v := range res.Versions {
			lines.print(verb, false, v.Version, v.Name, v.Duration)
		}
	}
	return res, err
}

func directionVerb(direction migrations.Direction) string {
	if direction == migrations.DirectionDown {
		return "rolled back"
	}
	return "applied"
}

// migrationKey names a migration: River's or Tributary's, and its version.
type migrationKey struct {
	river   bool
	version int
}

// migrationProgress is a slog.Handler that turns the migrator's "Applied
// migration" records into progress lines, and passes every record on to
// the command's own logger.
type migrationProgress struct {
	attrs []slog.Attr
	lines *progressLines
	next  slog.Handler
}

func (h *migrationProgress) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelInfo || h.next.Enabled(ctx, level)
}

func (h *migrationProgress) Handle(ctx context.Context, record slog.Record) error {
	if record.Level == slog.LevelInfo && strings.HasSuffix(record.Message, ": Applied migration") {
		var (
			direction string
			duration  time.Duration
			name      string
			version   int
		)
		visit := func(attr slog.Attr) bool {
			switch attr.Key {
			case "direction":
				direction = attr.Value.String()
			case "duration":
				duration = attr.Value.Duration()
			case "name":
				name = attr.Value.String()
			case "version":
				version = int(attr.Value.Int64())
			}
			return true
		}
		for _, attr := range h.attrs {
			visit(attr)
		}
		record.Attrs(visit)
		river := !strings.HasPrefix(record.Message, "tributary: ")
		if river && name == "" {
			name = h.lines.riverNames[version]
		}
		h.lines.print(directionVerb(migrations.Direction(direction)), river, version, name, duration)
	}
	if h.next.Enabled(ctx, record.Level) {
		return h.next.Handle(ctx, record)
	}
	return nil
}

func (h *migrationProgress) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &migrationProgress{attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], attrs...), lines: h.lines, next: h.next.WithAttrs(attrs)}
}

// WithGroup passes the group on; the migrator's records carry none.
func (h *migrationProgress) WithGroup(name string) slog.Handler {
	return &migrationProgress{attrs: h.attrs, lines: h.lines, next: h.next.WithGroup(name)}
}

// progressLines prints one line a migration, once each.
type progressLines struct {
	riverNames map[int]string // River's migration names by version

	mu      sync.Mutex
	printed map[migrationKey]bool
	w       io.Writer
}

func (p *progressLines) print(verb string, river bool, version int, name string, duration time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := migrationKey{river: river, version: version}
	if p.printed[key] {
		return
	}
	p.printed[key] = true
	prefix := ""
	if river {
		prefix = "river "
	}
	name = strings.ReplaceAll(name, " ", "_") // River's names have spaces
	fmt.Fprintf(p.w, "%s %s%03d_%s (%s)\n", verb, prefix, version, name, roundDuration(duration))
}
