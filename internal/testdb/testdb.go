// Package testdb gives tests a Postgres schema of their own, with River's
// and Tributary's tables, on a real server.
//
//	func TestMain(m *testing.M) { testdb.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//
//		db := testdb.New(t)
//		_, err := db.Pool.Exec(ctx, "INSERT INTO workflow_runs ...")
//	}
//
// The server is found once per test process: TEST_DATABASE_URL when set;
// else a server on 127.0.0.1:5432 or the /var/run/postgresql socket, as user
// postgres; else a throw-away cluster started from the local Postgres
// binaries (internal/pgcluster), which Main stops. When there is none of
// these, tests fail with instructions to install Postgres; they never skip.
package testdb

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/jackc/pgx/v5/pgconn"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/tributary-go/tributary/internal/pgcluster"
	"github.com/tributary-go/tributary/migrations"
)

// localURLs are the servers tried, in order, when TEST_DATABASE_URL is not
// set.
var localURLs = []string{
	"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
	"postgres://postgres@/postgres?host=/var/run/postgresql&sslmode=disable",
}

const (
	// probeTimeout bounds each attempt to reach a local server.
	probeTimeout = 2 * time.Second

	// setupTimeout bounds creating, migrating and dropping a schema.
	setupTimeout = time.Minute
)

// server is the process-wide result of finding a server.
var server struct {
	cluster *pgcluster.Cluster // started by this process, or nil
	err     error
	mu      sync.Mutex
	once    sync.Once
	url     string
}

// DB is a schema of its own on the test server.
type DB struct {
	// Pool connects to the server with search_path set to Schema, so SQL can
	// name tables without a schema.
	Pool *pgxpool.Pool

	// Schema is the schema's name, unique to this DB, such as
	// test_workflow_5f0c2a91.
	Schema string

	// URL is a connection string that selects Schema through the options
	// parameter (-csearch_path=…), for a child process or another pool.
	URL string
}

// WaitForLockWait waits until a client statement whose text matches like
// (a LIKE pattern) waits for a lock, and fails t if none does within 30s.
// It sees the whole server, not only db's schema: make like specific.
func (db *DB) WaitForLockWait(t testing.TB, like string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		var waiting bool
		err := db.Pool.QueryRow(ctx, `SELECT EXISTS (
			SELECT 1 FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND backend_type = 'client backend'
				AND query LIKE $1 AND query NOT LIKE '%pg_stat_activity%')`, like).Scan(&waiting)
		if err != nil {
			t.Fatalf("testdb: look for a statement waiting for a lock: %v", err)
		}
		if waiting {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("testdb: no statement like %q came to wait for a lock within 30s", like)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// New returns a fresh schema with River's and Tributary's tables, migrated
// by migrations.Migrator.Up. The schema is dropped and the pool closed when
// the test ends.
func New(t testing.TB) *DB {
	t.Helper()

	db := NewEmpty(t)

	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()

	migrator, err := migrations.New(db.Pool, &migrations.Config{Schema: db.Schema})
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	// The migrator connects on its own, and waits for the server to have
	// room as the schema's admission does (connectWhenRoom): Up is safe to
	// run again.
	for {
		_, err := migrator.Up(ctx)
		if err == nil {
			break
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "53300" || ctx.Err() != nil {
			t.Fatalf("testdb: migrating schema %s: %v", db.Schema, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	return db
}

// NewEmpty is like New without the migrations: the schema has no tables.
func NewEmpty(t testing.TB) *DB {
	t.Helper()

	serverURL := ServerURL(t)
	schema := schemaName()

	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()

	if err := execOnce(ctx, serverURL, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("testdb: creating schema %s: %v", schema, err)
	}

	db := &DB{Schema: schema, URL: withSearchPath(serverURL, schema)}

	config, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	config.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	if db.Pool, err = pgxpool.NewWithConfig(ctx, config); err != nil {
		t.Fatalf("testdb: %v", err)
	}
	// The pool's first connection, kept idle for the migrations, waits
	// for the server to have room too (see connectWhenRoom).
	for {
		conn, err := db.Pool.Acquire(ctx)
		if err == nil {
			conn.Release()
			break
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "53300" || ctx.Err() != nil {
			t.Fatalf("testdb: connecting to schema %s: %v", schema, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}

	t.Cleanup(func() {
		db.Pool.Close()

		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		if err := execOnce(ctx, serverURL, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("testdb: dropping schema %s: %v", schema, err)
		}
	})
	return db
}

// ServerURL returns the URL of the test server, finding it on first use.
// The URL selects no particular schema. It fails the test when there is no
// server and none can be started.
func ServerURL(t testing.TB) string {
	t.Helper()

	server.once.Do(func() {
		var cluster *pgcluster.Cluster
		server.url, cluster, server.err = findServer(os.Getenv, localURLs)

		server.mu.Lock()
		server.cluster = cluster
		server.mu.Unlock()
	})
	if server.err != nil {
		t.Fatalf("testdb: %v", server.err)
	}
	return server.url
}

// Main runs a package's tests, for its TestMain. After the tests it stops
// the throw-away cluster if this process started one, and checks for
// goroutines left running (with goleak) when the tests passed. It exits the
// process with the tests' status, or 1 when goroutines leaked.
func Main(m *testing.M) {
	code := m.Run()

	if err := stopCluster(); err != nil {
		fmt.Fprintf(os.Stderr, "testdb: stopping the throw-away Postgres cluster: %v\n", err)
		code = max(code, 1)
	}

	if code == 0 {
		if err := goleak.Find(
			// A pool's health check goroutine ends shortly after Close.
			goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"),
			// A connection closed while a query was cancelled sends the
			// server a cancel request from its own goroutine, which pgx
			// bounds with a 15 s deadline; on a loaded machine it can
			// still be dialling when the tests end.
			goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgconn.(*PgConn).asyncClose.func1"),
		); err != nil {
			fmt.Fprintf(os.Stderr, "testdb: goroutines left running after the tests passed: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// MainWithout runs a package's tests, for its TestMain, as Main does,
// without the goroutine check: for tests outside this module
// (tributarytest.Main), whose goroutines are their own business.
func MainWithout(m *testing.M) {
	code := m.Run()
	if err := stopCluster(); err != nil {
		fmt.Fprintf(os.Stderr, "testdb: stopping the throw-away Postgres cluster: %v\n", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// findServer returns TEST_DATABASE_URL, or the first of localURLs that
// accepts a connection, or the URL of a throw-away cluster it starts.
func findServer(getenv func(string) string, localURLs []string) (string, *pgcluster.Cluster, error) {
	ctx := context.Background()

	if envURL := getenv("TEST_DATABASE_URL"); envURL != "" {
		probeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := execOnce(probeCtx, envURL, "SELECT 1"); err != nil {
			return "", nil, fmt.Errorf("TEST_DATABASE_URL is set but the server can't be reached: %w; start that server or fix the variable", err)
		}
		return envURL, nil, nil
	}

	var probeErrs []error
	for _, localURL := range localURLs {
		probeCtx, cancel := context.WithTimeout(ctx, probeTimeout)
		err := execOnce(probeCtx, localURL, "SELECT 1")
		cancel()
		if err == nil {
			return localURL, nil, nil
		}
		probeErrs = append(probeErrs, err)
	}

	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cluster, err := pgcluster.Start(startCtx, nil)
	if err != nil {
		return "", nil, fmt.Errorf("no Postgres server at %s (%w), and starting a throw-away cluster failed: %w",
			strings.Join(localURLs, " or "), errors.Join(probeErrs...), err)
	}
	return cluster.URL, cluster, nil
}

func stopCluster() error {
	server.mu.Lock()
	defer server.mu.Unlock()

	if server.cluster == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := server.cluster.Stop(ctx)
	server.cluster = nil
	return err
}

// execOnce runs one statement on a connection of its own.
func execOnce(ctx context.Context, connString, sql string) error {
	conn, err := connectWhenRoom(ctx, connString)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))

	_, err = conn.Exec(ctx, sql)
	return err
}

// schemaName returns a new schema name made of the test binary's package
// name and random hex: test_migrations_3f9a0c1e.
func schemaName() string {
	pkg := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe"), ".test")
	pkg = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return '_'
	}, pkg)
	if len(pkg) > 30 {
		pkg = pkg[:30]
	}

	var random [4]byte
	_, _ = rand.Read(random[:]) // never fails
	return "test_" + pkg + "_" + hex.EncodeToString(random[:])
}

// withSearchPath adds -csearch_path=<schema> to the options parameter of a
// URL or keyword/value connection string. Schema names from schemaName need
// no quoting.
func withSearchPath(connString, schema string) string {
	option := "-csearch_path=" + schema

	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		parsed, err := url.Parse(connString)
		if err == nil {
			query := parsed.Query()
			query.Set("options", strings.TrimSpace(query.Get("options")+" "+option))
			// Encode writes a space as "+", which libpq and pgx don't
			// decode; a literal "+" is already "%2B".
			parsed.RawQuery = strings.ReplaceAll(query.Encode(), "+", "%20")
			return parsed.String()
		}
	}
	return connString + " options='" + option + "'"
}

// ForExample is New for runnable examples, which have no *testing.T: it
// panics where a test would fail, and returns the function that drops the
// schema, to defer.
func ForExample() (*DB, func()) {
	tb := &exampleTB{}
	return New(tb), tb.cleanup
}

// exampleTB stands in for the testing.TB that examples don't have.
type exampleTB struct {
	testing.TB
	cleanups []func()
}

func (e *exampleTB) Cleanup(f func())                  { e.cleanups = append(e.cleanups, f) }
func (e *exampleTB) Errorf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
func (e *exampleTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (e *exampleTB) Helper()                           {}

func (e *exampleTB) cleanup() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// RunExample runs an example program's run function (see devdb.RunFunc)
// against a fresh database with a 30-second deadline, requires it to
// succeed, logs what it printed and returns it with the database.
func RunExample(t *testing.T, run func(ctx context.Context, pool *pgxpool.Pool, out io.Writer) error) (*DB, string) {
	t.Helper()
	db := New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, db.Pool, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return db, out.String()
}

// connectWhenRoom connects to connString, waiting (until ctx ends) while
// the server has no connection left (SQLSTATE 53300): `go test ./...` runs
// packages side by side, and a test that starts at the peak of another
// package's connections waits for it to pass instead of failing. It is the
// admission of a test's schema, so that the test's own clients find room
// too.
func connectWhenRoom(ctx context.Context, connString string) (*pgx.Conn, error) {
	for {
		conn, err := pgx.Connect(ctx, connString)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "53300" {
			return conn, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// UUIDv7SQL is an SQL expression of a random UUIDv7 whose time is at (an
// SQL expression of a timestamptz), as Tributary makes run ids: listings
// order runs by them and start below the present (workflow's listCeiling),
// so a test that inserts runs needs ids of the times it means. Postgres
// 18's uuidv7() takes no time, and earlier versions have none.
func UUIDv7SQL(at string) string {
	return `encode(overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send((extract(epoch FROM ` + at +
		`) * 1000)::bigint) FROM 3 FOR 6) FROM 1 FOR 6), 'hex')::uuid`
}
