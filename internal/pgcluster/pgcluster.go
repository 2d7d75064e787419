// Package pgcluster starts a throw-away Postgres cluster from the Postgres
// binaries installed on this machine. It backs `tributary demo` and the test
// harness when no running server is available.
//
//	cluster, err := pgcluster.Start(ctx, nil)
//	if err != nil {
//		// errors.Is(err, pgcluster.ErrNoPostgres) when Postgres isn't installed
//	}
//	defer cluster.Stop(context.WithoutCancel(ctx))
//	pool, err := pgxpool.New(ctx, cluster.URL)
//
// The cluster trusts every local connection and lives in a temporary
// directory that Stop removes: it is for tests and demos, never for data
// that must survive.
package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Config configures Start. A nil *Config is the same as a zero Config.
type Config struct {
	// BinDir is the directory holding initdb, pg_ctl and postgres.
	//
	// Defaults to the directory of initdb on PATH, else the newest version
	// found under /usr/lib/postgresql/*/bin (and the other usual install
	// locations).
	BinDir string

	// ExtraArgs are extra command-line arguments for the postgres server,
	// such as []string{"-c", "fsync=off"}.
	//
	// Defaults to none: the server runs with initdb's defaults, listening
	// only on 127.0.0.1.
	ExtraArgs []string

	// StartTimeout bounds how long Start waits for the server to accept
	// connections.
	//
	// Defaults to 60 seconds.
	StartTimeout time.Duration
}

// Cluster is a running throw-away Postgres cluster. Stop it with Stop.
type Cluster struct {
	// URL is a connection string for the cluster's `postgres` database as
	// the superuser `postgres`, over TCP on 127.0.0.1.
	URL string

	// Removed lists the stale clusters Start stopped and removed before
	// starting this one: left behind by processes that were killed (see
	// Start).
	Removed []string
	// RemoveError says which stale clusters Start could not remove, nil
	// when it removed them all; they are tried again at the next start.
	RemoveError error

	binDir     string
	cred       *credential
	dataDir    string
	rootDir    string
	serverArgs []string // the postgres arguments it started with: port, sockets, ExtraArgs
	stopErr    error
	stopOnce   sync.Once
}

// Start initializes a new cluster in a temporary directory, starts it on a
// free port of 127.0.0.1 and waits until it accepts connections. When no
// Postgres binaries are found, the error is a *NoPostgresError (matching
// ErrNoPostgres with errors.Is) whose message says how to install Postgres.
//
// When the process runs as root, which initdb refuses, the cluster runs as
// the unprivileged user `nobody` (or a dedicated user created with useradd
// when `nobody` doesn't exist).
//
// Each cluster's directory records the process that started it. Start
// first stops and removes the clusters whose process is gone (killed before
// it could Stop them), and only those: Cluster.Removed lists them. One it
// cannot remove does not keep the new cluster from starting.
func Start(ctx context.Context, config *Config) (*Cluster, error) {
	if config == nil {
		config = &Config{}
	}

	binDir := config.BinDir
	if binDir == "" {
		var err error
		if binDir, err = FindBinDir(); err != nil {
			return nil, err
		}
	} else if err := checkBinDir(binDir); err != nil {
		return nil, &NoPostgresError{Searched: []string{binDir}}
	}

	timeout := config.StartTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cred, err := lookupCredential()
	if err != nil {
		return nil, err
	}

	// A process killed before it could Stop its cluster (SIGKILL) left
	// the server running and its directory behind: the next start cleans
	// up after it.
	removed, staleErr := removeStale(ctx, binDir, cred, os.TempDir())

	rootDir, err := os.MkdirTemp("", dirPattern)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: creating temporary directory: %w", err)
	}
	cluster := &Cluster{
		Removed:     removed,
		RemoveError: staleErr,
		binDir:      binDir,
		cred:        cred,
		dataDir:     filepath.Join(rootDir, "data"),
		rootDir:     rootDir,
	}
	if err := writeOwner(rootDir); err != nil {
		_ = os.RemoveAll(rootDir)
		return nil, errors.Join(err, staleErr)
	}

	if err := cluster.start(ctx, config.ExtraArgs); err != nil {
		_ = cluster.Stop(context.WithoutCancel(ctx))
		return nil, errors.Join(err, staleErr)
	}
	return cluster, nil
}

// Stop stops the server (pg_ctl stop -m fast) and removes its directory. It
// is safe to call more than once; later calls return the first call's
// result.
func (c *Cluster) Stop(ctx context.Context) error {
	c.stopOnce.Do(func() {
		var errs []error
		if _, err := os.Stat(filepath.Join(c.dataDir, "postmaster.pid")); err == nil {
			if _, err := c.run(ctx, "pg_ctl", "stop", "-D", c.dataDir, "-m", "fast", "-w", "-t", "60"); err != nil {
				errs = append(errs, err)
			}
		}
		if err := os.RemoveAll(c.rootDir); err != nil {
			errs = append(errs, fmt.Errorf("pgcluster: removing %s: %w", c.rootDir, err))
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

func (c *Cluster) start(ctx context.Context, extraArgs []string) error {
	socketDir := filepath.Join(c.rootDir, "socket")
	if err := os.Mkdir(socketDir, 0o700); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if err := c.cred.chown(c.rootDir, socketDir); err != nil {
		return err
	}

	if _, err := c.run(ctx, "initdb",
		"--pgdata", c.dataDir,
		"--username", "postgres",
		"--auth", "trust",
		"--encoding", "UTF8",
		"--locale", "C",
		"--no-sync",
	); err != nil {
		return err
	}

	// A free port can be taken by someone else between our probe and the
	// server's bind; try a few ports before giving up.
	const attempts = 3
	var lastErr error
	for range attempts {
		port, err := freePort()
		if err != nil {
			return err
		}
		serverArgs := append([]string{
			"-p", strconv.Itoa(port),
			"-c", "listen_addresses=127.0.0.1",
			"-c", "unix_socket_directories=" + socketDir,
		}, extraArgs...)

		lastErr = c.startServer(ctx, serverArgs)
		if lastErr != nil {
			if ctx.Err() != nil {
				break
			}
			continue
		}

		c.serverArgs = serverArgs
		c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
		return waitReady(ctx, c.URL)
	}
	return fmt.Errorf("%w\n%s", lastErr, c.logTail())
}

// startServer starts the server with args and waits until it accepts
// connections on its socket (pg_ctl start -w).
func (c *Cluster) startServer(ctx context.Context, args []string) error {
	_, err := c.run(ctx, "pg_ctl", "start",
		"-D", c.dataDir,
		"-l", filepath.Join(c.rootDir, "server.log"),
		"-o", shellJoin(args),
		"-w", "-t", "60",
	)
	return err
}

// Crash stops the server the way a crash of Postgres does (pg_ctl stop -m
// immediate): every server process quits at once, with no shutdown
// checkpoint and without writing out its WAL buffers. What the server had
// not yet written of its WAL is lost, as in a crash of Postgres: the
// transactions committed with synchronous_commit off since the WAL writer's
// last round (wal_writer_delay, 200 ms by default). What it had written
// survives in the operating system's cache (a power loss would lose that
// too). Restart starts the server again, which recovers from its WAL. It is
// for tests of what survives a crash; Stop still stops and removes the
// cluster.
func (c *Cluster) Crash(ctx context.Context) error {
	_, err := c.run(ctx, "pg_ctl", "stop", "-D", c.dataDir, "-m", "immediate", "-w", "-t", "60")
	return err
}

// Restart starts the server of a cluster that Crash stopped, on the same
// port with the same arguments, so that URL and the pools built on it work
// again once they reconnect. It waits until the server has recovered and
// accepts connections.
func (c *Cluster) Restart(ctx context.Context) error {
	if len(c.serverArgs) == 0 {
		return errors.New("pgcluster: Restart of a cluster that never started")
	}
	if err := c.startServer(ctx, c.serverArgs); err != nil {
		return fmt.Errorf("%w\n%s", err, c.logTail())
	}
	return waitReady(ctx, c.URL)
}

// logTail returns the end of the server log, to explain a failed start.
func (c *Cluster) logTail() string {
	data, err := os.ReadFile(filepath.Join(c.rootDir, "server.log"))
	if err != nil {
		return ""
	}
	const maxLen = 2000
	if len(data) > maxLen {
		data = data[len(data)-maxLen:]
	}
	return "server log:\n" + string(data)
}

// run runs one of the Postgres binaries, as the unprivileged user when the
// process is root, and returns its combined output.
func (c *Cluster) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, name), args...)
	cmd.Dir = c.rootDir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	c.cred.apply(cmd)
	// pg_ctl start leaves the server running with our pipes inherited;
	// don't wait for them to close.
	cmd.WaitDelay = time.Second

	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("pgcluster: %s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgcluster: finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// shellJoin quotes args for the POSIX shell through which pg_ctl starts the
// server.
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, arg := range args {
		quoted[i] = "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

// waitReady connects in a loop until the server accepts a connection or ctx
// ends. pg_ctl -w has already waited for start-up; this confirms the TCP
// listener from our side.
func waitReady(ctx context.Context, url string) error {
	backoff := 10 * time.Millisecond
	for {
		attemptCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(attemptCtx, url)
		cancel()
		if err == nil {
			return conn.Close(ctx)
		}

		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("pgcluster: server did not accept connections: %w (last error: %w)", ctx.Err(), err)
		case <-timer.C:
		}
		backoff = min(2*backoff, 250*time.Millisecond)
	}
}

// StartStandby starts a streaming standby of c, the primary: a base backup
// of c (pg_basebackup, streaming its WAL, with the standby's recovery
// settings written) in a directory of its own, started on a free port of
// 127.0.0.1, where it replays c's WAL as c writes it. It connects to c as
// application_name name, the name c's synchronous_standby_names can give to
// make its commits wait for the standby. Promote makes it a primary; Stop
// stops it and removes its directory.
func (c *Cluster) StartStandby(ctx context.Context, name string) (*Cluster, error) {
	rootDir, err := os.MkdirTemp("", dirPattern)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: creating temporary directory: %w", err)
	}
	standby := &Cluster{binDir: c.binDir, cred: c.cred, dataDir: filepath.Join(rootDir, "data"), rootDir: rootDir}
	if err := writeOwner(rootDir); err != nil {
		_ = os.RemoveAll(rootDir)
		return nil, err
	}
	socketDir := filepath.Join(rootDir, "socket")
	if err := os.Mkdir(socketDir, 0o700); err != nil {
		_ = os.RemoveAll(rootDir)
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if err := c.cred.chown(rootDir, socketDir); err != nil {
		_ = os.RemoveAll(rootDir)
		return nil, err
	}
	source := strings.Replace(c.URL, "?", "?application_name="+name+"&", 1)
	if _, err := standby.run(ctx, "pg_basebackup", "--pgdata", standby.dataDir, "--dbname", source,
		"--wal-method=stream", "--write-recovery-conf", "--checkpoint=fast", "--no-sync"); err != nil {
		_ = standby.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		_ = standby.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	args := []string{"-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + socketDir}
	if err := standby.startServer(ctx, args); err != nil {
		err = fmt.Errorf("%w\n%s", err, standby.logTail())
		_ = standby.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	standby.serverArgs = args
	standby.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	if err := waitReady(ctx, standby.URL); err != nil {
		_ = standby.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	return standby, nil
}

// Port is the TCP port the cluster listens on, for a connection string
// that names several hosts.
func (c *Cluster) Port() string {
	for i, arg := range c.serverArgs {
		if arg == "-p" && i+1 < len(c.serverArgs) {
			return c.serverArgs[i+1]
		}
	}
	return ""
}

// Promote makes a standby (StartStandby) a primary that accepts writes
// (pg_ctl promote), and waits until it does.
func (c *Cluster) Promote(ctx context.Context) error {
	_, err := c.run(ctx, "pg_ctl", "promote", "-D", c.dataDir, "-w", "-t", "60")
	return err
}
