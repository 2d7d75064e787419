package migrations

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// maxIdentifierLen is Postgres's limit on identifier length in bytes; longer
// names are silently truncated by the server.
const maxIdentifierLen = 63

// Config configures a Migrator. A nil *Config is the same as a zero Config.
type Config struct {
	// Logger receives a line for every migration applied or rolled back,
	// River's included, at info level.
	//
	// Defaults to a logger that discards everything.
	Logger *slog.Logger

	// Progress, when set, is called for each migration Up or Down runs,
	// River's included: with PhaseStart as it starts, and with PhaseDone,
	// which carries its Duration, once its transaction has committed. The
	// calls come in order, from the goroutine that called Up or Down, while
	// the schema's migration lock is held, so Progress should return
	// quickly. A migration that fails gets its PhaseStart and no PhaseDone,
	// and Up or Down returns its error. Every migration a Result lists had
	// its PhaseDone call, in the same order. River's migrator has no
	// callback, so River's migrations are run one at a time to report each;
	// only when the database has a River migration this build doesn't know
	// (a newer build applied it) does River run them in one call, and each
	// gets its PhaseDone call alone.
	//
	// Defaults to nil: no calls. Logger hears of every migration either way.
	Progress func(Progress)

	// Schema is the Postgres schema holding River's and Tributary's tables.
	// It must already exist; Up does not create it.
	//
	// Defaults to "", which means the first schema of each connection's
	// search_path, as with River's Config.Schema.
	Schema string
}

// Direction is the direction of a migration run.
type Direction string

const (
	// DirectionDown rolls migrations back.
	DirectionDown Direction = "down"
	// DirectionUp applies migrations.
	DirectionUp Direction = "up"
)

// DownOpts are options for Down. A nil *DownOpts is the same as a zero
// DownOpts: remove all of Tributary's tables and keep River's.
type DownOpts struct {
	// IncludeRiver also removes River's tables, all of them, once
	// Tributary's are gone. It requires TargetVersion 0.
	IncludeRiver bool

	// TargetVersion is the version to keep: migrations above it are rolled
	// back, newest first. 0 rolls back all of Tributary's migrations and
	// drops the tributary_migration table.
	TargetVersion int
}

// MigrateVersion is one migration applied or rolled back.
type MigrateVersion struct {
	// Duration is how long the migration's transaction took.
	Duration time.Duration

	// Name is the migration's name, such as "workflows".
	Name string

	// Version is the migration's number.
	Version int
}

// Phase is the point of a migration that a Progress reports.
type Phase string

const (
	// PhaseStart: the migration is about to run.
	PhaseStart Phase = "start"
	// PhaseDone: the migration's transaction has committed.
	PhaseDone Phase = "done"
)

// Progress reports one migration, River's or Tributary's, as Up or Down
// runs it. Config.Progress receives it.
type Progress struct {
	// Direction is DirectionUp for Up and DirectionDown for Down.
	Direction Direction

	// Duration is how long the migration's transaction took; 0 at
	// PhaseStart.
	Duration time.Duration

	// Name is the migration's name, such as "workflows". River's names may
	// have spaces, such as "pending and more".
	Name string

	// Phase says whether the migration is starting or has committed.
	Phase Phase

	// River is true for one of River's migrations, false for Tributary's.
	River bool

	// Version is the migration's number.
	Version int
}

// Result says what Up or Down did.
type Result struct {
	// Direction is DirectionUp for Up and DirectionDown for Down.
	Direction Direction

	// River lists River's migrations applied or rolled back, in order.
	River []MigrateVersion

	// Versions lists Tributary's migrations applied or rolled back, in
	// order. Empty when there was nothing to do.
	Versions []MigrateVersion
}

// Migrator applies and rolls back River's and Tributary's migrations on one
// schema. It is safe for concurrent use.
type Migrator struct {
	logger     *slog.Logger
	migrations []migration
	pool       *pgxpool.Pool
	prefix     string // quoted schema and a dot, or "" for the search_path
	progress   func(Progress)
	river      *rivermigrate.Migrator[pgx.Tx]
	schema     string
}

// New returns a Migrator for the database behind pool. The config may be
// nil. It returns an error when Config.Schema is not a usable schema name.
func New(pool *pgxpool.Pool, config *Config) (*Migrator, error) {
	return newMigrator(pool, config, embedded)
}

func newMigrator(pool *pgxpool.Pool, config *Config, set []migration) (*Migrator, error) {
	if pool == nil {
		return nil, errors.New("migrations: pool is nil")
	}
	if config == nil {
		config = &Config{}
	}
	if err := validateSchema(config.Schema); err != nil {
		return nil, err
	}

	logger := config.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}

	river, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{
		Logger: logger,
		Schema: config.Schema,
	})
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}

	var prefix string
	if config.Schema != "" {
		prefix = pgx.Identifier{config.Schema}.Sanitize() + "."
	}

	return &Migrator{
		logger:     logger,
		migrations: set,
		pool:       pool,
		prefix:     prefix,
		progress:   config.Progress,
		river:      river,
		schema:     config.Schema,
	}, nil
}

// Down rolls back Tributary's migrations above opts.TargetVersion, newest
// first, each in its own transaction, and then River's when
// opts.IncludeRiver is set. Like Up, it holds the schema's migration lock
// throughout. It returns an error when the database has a Tributary
// migration this build doesn't know.
func (m *Migrator) Down(ctx context.Context, opts *DownOpts) (*Result, error) {
	if opts == nil {
		opts = &DownOpts{}
	}
	if err := m.checkDownOpts(opts); err != nil {
		return nil, err
	}

	res := &Result{Direction: DirectionDown}
	err := m.withLock(ctx, func(conn *pgx.Conn, lockKey int64) error {
		rollBack, err := m.rolledBack(ctx, conn, opts)
		if err != nil {
			return err
		}
		for _, mig := range rollBack {
			duration, err := m.apply(ctx, conn, lockKey, mig, DirectionDown)
			if err != nil {
				return err
			}
			res.Versions = append(res.Versions, MigrateVersion{Duration: duration, Name: mig.Name, Version: mig.Version})
		}

		if opts.TargetVersion == 0 {
			if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+m.prefix+"tributary_migration"); err != nil {
				return fmt.Errorf("migrations: dropping tributary_migration: %w", err)
			}
		}

		if opts.IncludeRiver {
			if res.River, err = m.migrateRiver(ctx, DirectionDown); err != nil {
				return fmt.Errorf("migrations: rolling back River's migrations: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// checkDownOpts returns an error for opts that Down can't carry out.
func (m *Migrator) checkDownOpts(opts *DownOpts) error {
	latest := m.migrations[len(m.migrations)-1].Version
	if opts.TargetVersion < 0 || opts.TargetVersion > latest {
		return fmt.Errorf("migrations: target version %d does not exist; use 0 to remove all of Tributary's tables, or a version up to %d", opts.TargetVersion, latest)
	}
	if opts.IncludeRiver && opts.TargetVersion != 0 {
		return errors.New("migrations: IncludeRiver removes River's tables and needs TargetVersion 0, which removes all of Tributary's first")
	}
	return nil
}

// rolledBack returns the applied migrations that Down with opts rolls
// back, newest first, the order it rolls them back in. It returns an error
// when the database has a Tributary migration this build doesn't know.
func (m *Migrator) rolledBack(ctx context.Context, conn *pgx.Conn, opts *DownOpts) ([]migration, error) {
	applied, err := m.appliedVersions(ctx, conn)
	if err != nil {
		return nil, err
	}
	latest := m.migrations[len(m.migrations)-1].Version
	for version := range applied {
		if version > latest {
			return nil, fmt.Errorf("migrations: the database has Tributary migration %03d, which this build doesn't know; roll back with the newer build that applied it", version)
		}
	}

	var rollBack []migration
	for _, mig := range slices.Backward(m.migrations) {
		if mig.Version <= opts.TargetVersion {
			break
		}
		if _, ok := applied[mig.Version]; ok {
			rollBack = append(rollBack, mig)
		}
	}
	return rollBack, nil
}

// Up applies River's migrations and then Tributary's, each one that the
// database doesn't have yet, in its own transaction. It holds the schema's
// migration lock throughout, so concurrent callers, in this process or
// others, take turns. Calling Up on an up-to-date database does nothing.
func (m *Migrator) Up(ctx context.Context) (*Result, error) {
	res := &Result{Direction: DirectionUp}
	err := m.withLock(ctx, func(conn *pgx.Conn, lockKey int64) error {
		// River's migrator has no lock of its own: two processes migrating
		// at once would both try to create the same tables. Ours serializes
		// them.
		var err error
		if res.River, err = m.migrateRiver(ctx, DirectionUp); err != nil {
			return fmt.Errorf("migrations: applying River's migrations: %w", err)
		}

		if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+m.prefix+`tributary_migration (
			version integer PRIMARY KEY,
			name text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("migrations: creating tributary_migration: %w", err)
		}

		applied, err := m.appliedVersions(ctx, conn)
		if err != nil {
			return err
		}
		for _, mig := range m.migrations {
			if _, ok := applied[mig.Version]; ok {
				continue
			}
			duration, err := m.apply(ctx, conn, lockKey, mig, DirectionUp)
			if err != nil {
				return err
			}
			res.Versions = append(res.Versions, MigrateVersion{Duration: duration, Name: mig.Name, Version: mig.Version})
		}
		if len(res.Versions) == 0 {
			m.logger.InfoContext(ctx, "tributary: No migrations to apply")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// apply runs one migration in one transaction with its tributary_migration
// row. The transaction takes the schema's advisory lock too, so a migration
// is never applied twice even by a caller that bypassed the session lock,
// and checks the version row again under it.
func (m *Migrator) apply(ctx context.Context, conn *pgx.Conn, lockKey int64, mig migration, direction Direction) (time.Duration, error) {
	m.report(Progress{Direction: direction, Name: mig.Name, Phase: PhaseStart, Version: mig.Version})
	start := time.Now()
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey); err != nil {
			return fmt.Errorf("taking the migration lock: %w", err)
		}

		var applied bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+m.prefix+"tributary_migration WHERE version = $1)", mig.Version).Scan(&applied); err != nil {
			return fmt.Errorf("reading tributary_migration: %w", err)
		}

		switch direction {
		case DirectionUp:
			if applied {
				return nil
			}
			if _, err := tx.Exec(ctx, m.template(mig.SQLUp)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "INSERT INTO "+m.prefix+"tributary_migration (version, name) VALUES ($1, $2)", mig.Version, mig.Name); err != nil {
				return fmt.Errorf("recording the version: %w", err)
			}
		case DirectionDown:
			if !applied {
				return nil
			}
			if _, err := tx.Exec(ctx, m.template(mig.SQLDown)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "DELETE FROM "+m.prefix+"tributary_migration WHERE version = $1", mig.Version); err != nil {
				return fmt.Errorf("removing the version: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("migrations: %s %03d_%s: %w", direction, mig.Version, mig.Name, err)
	}
	duration := time.Since(start)

	m.logger.InfoContext(ctx, "tributary: Applied migration",
		slog.String("direction", string(direction)),
		slog.Duration("duration", duration),
		slog.String("name", mig.Name),
		slog.Int("version", mig.Version),
	)
	m.report(Progress{Direction: direction, Duration: duration, Name: mig.Name, Phase: PhaseDone, Version: mig.Version})
	return duration, nil
}

// migrateRiver applies River's migrations that the database doesn't have,
// oldest first, or (down) rolls back all it has, newest first. It asks
// River's migrator for one step at a time, each in River's own
// transaction as a single call would run it, so that Config.Progress hears
// of each as it starts and as it commits.
func (m *Migrator) migrateRiver(ctx context.Context, direction Direction) ([]MigrateVersion, error) {
	existing, err := m.river.ExistingVersions(ctx)
	if err != nil {
		// River refuses to list a database that has a migration this
		// build doesn't know, which its Migrate accepts: let it decide in
		// one call, and report what it did.
		opts := &rivermigrate.MigrateOpts{}
		if direction == DirectionDown {
			opts.TargetVersion = -1 // all of them
		}
		res, err := m.river.Migrate(ctx, rivermigrate.Direction(direction), opts)
		if err != nil {
			return nil, err
		}
		versions := fromRiver(res)
		for _, v := range versions {
			m.report(Progress{Direction: direction, Duration: v.Duration, Name: v.Name, Phase: PhaseDone, River: true, Version: v.Version})
		}
		return versions, nil
	}

	var todo []rivermigrate.Migration
	switch direction {
	case DirectionUp:
		for _, mig := range m.river.AllVersions() { // oldest first
			if !slices.ContainsFunc(existing, func(e rivermigrate.Migration) bool { return e.Version == mig.Version }) {
				todo = append(todo, mig)
			}
		}
	case DirectionDown:
		todo = slices.Clone(existing) // oldest first
		slices.Reverse(todo)
	}

	versions := []MigrateVersion{}
	for _, mig := range todo {
		m.report(Progress{Direction: direction, Name: mig.Name, Phase: PhaseStart, River: true, Version: mig.Version})
		res, err := m.river.Migrate(ctx, rivermigrate.Direction(direction), &rivermigrate.MigrateOpts{MaxSteps: 1})
		if err != nil {
			return nil, err
		}
		for _, v := range fromRiver(res) {
			m.report(Progress{Direction: direction, Duration: v.Duration, Name: v.Name, Phase: PhaseDone, River: true, Version: v.Version})
			versions = append(versions, v)
		}
	}
	return versions, nil
}

// report passes p to Config.Progress, if any.
func (m *Migrator) report(p Progress) {
	if m.progress != nil {
		m.progress(p)
	}
}

func (m *Migrator) appliedVersions(ctx context.Context, conn *pgx.Conn) (map[int]struct{}, error) {
	rows, err := m.appliedRows(ctx, conn)
	if err != nil {
		return nil, err
	}
	versions := make(map[int]struct{}, len(rows))
	for version := range rows {
		versions[version] = struct{}{}
	}
	return versions, nil
}

// checkedConn acquires a connection of the pool and checks the target
// schema on it (checkSchema), for the reads that take no lock (Status,
// PlanDown); the caller releases it.
func (m *Migrator) checkedConn(ctx context.Context) (*pgxpool.Conn, error) {
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrations: connecting: %w", err)
	}
	if _, err := m.checkSchema(ctx, conn.Conn()); err != nil {
		conn.Release()
		return nil, err
	}
	return conn, nil
}

// checkSchema returns the name of the target schema, resolving the
// search_path when Config.Schema is empty, and a clear error when the schema
// doesn't exist rather than letting the first CREATE TABLE fail.
func (m *Migrator) checkSchema(ctx context.Context, conn *pgx.Conn) (string, error) {
	if m.schema == "" {
		var current *string
		if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&current); err != nil {
			return "", fmt.Errorf("migrations: reading current_schema(): %w", err)
		}
		if current == nil {
			return "", errors.New("migrations: the connection's search_path names no existing schema; create one or set Config.Schema")
		}
		return *current, nil
	}

	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", m.schema).Scan(&exists); err != nil {
		return "", fmt.Errorf("migrations: looking for schema %q: %w", m.schema, err)
	}
	if !exists {
		return "", fmt.Errorf("migrations: schema %q does not exist; create it first (CREATE SCHEMA %s)", m.schema, pgx.Identifier{m.schema}.Sanitize())
	}
	return m.schema, nil
}

// connect opens a connection configured like the pool's, running the pool's
// connect hooks.
func (m *Migrator) connect(ctx context.Context) (*pgx.Conn, error) {
	config := m.pool.Config()
	if config.BeforeConnect != nil {
		if err := config.BeforeConnect(ctx, config.ConnConfig); err != nil {
			return nil, fmt.Errorf("migrations: connecting: %w", err)
		}
	}
	conn, err := pgx.ConnectConfig(ctx, config.ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("migrations: connecting: %w", err)
	}
	if config.AfterConnect != nil {
		if err := config.AfterConnect(ctx, conn); err != nil {
			conn.Close(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("migrations: connecting: %w", err)
		}
	}
	return conn, nil
}

// template puts the target schema into a migration's SQL.
func (m *Migrator) template(sql string) string {
	return strings.ReplaceAll(sql, schemaPlaceholder, m.prefix)
}

// withLock runs fn holding the schema's session-level advisory lock on a
// connection of its own, outside the pool so that a small pool can't
// deadlock waiting for it. Closing the connection releases the lock, also
// when the process dies. fn gets the connection and the lock's key.
func (m *Migrator) withLock(ctx context.Context, fn func(conn *pgx.Conn, lockKey int64) error) error {
	conn, err := m.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))

	schema, err := m.checkSchema(ctx, conn)
	if err != nil {
		return err
	}
	key := lockKey(schema)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		return fmt.Errorf("migrations: taking the migration lock: %w", err)
	}
	return fn(conn, key)
}

func fromRiver(res *rivermigrate.MigrateResult) []MigrateVersion {
	versions := make([]MigrateVersion, len(res.Versions))
	for i, version := range res.Versions {
		versions[i] = MigrateVersion{Duration: version.Duration, Name: version.Name, Version: version.Version}
	}
	return versions
}

// lockKey derives the advisory lock key for a schema (by name, the search
// path resolved), so that migrations of different schemas don't wait for
// each other.
func lockKey(schema string) int64 {
	hash := fnv.New64a()
	_, _ = hash.Write([]byte("tributary_migrate\x00" + schema))
	return int64(hash.Sum64()) // wraps; any 64 bits will do
}

func validateSchema(schema string) error {
	switch {
	case schema == "":
		return nil
	case strings.TrimSpace(schema) == "":
		return fmt.Errorf("migrations: schema %q is blank; leave it empty to use the search_path", schema)
	case strings.TrimSpace(schema) != schema:
		return fmt.Errorf("migrations: schema %q has leading or trailing spaces", schema)
	case len(schema) > maxIdentifierLen:
		return fmt.Errorf("migrations: schema %q is longer than Postgres's %d-byte limit", schema, maxIdentifierLen)
	case strings.ContainsRune(schema, 0), !utf8.ValidString(schema):
		return fmt.Errorf("migrations: schema %q contains a NUL byte or invalid UTF-8", schema)
	}
	return nil
}
