package pgcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestFindBinDir(t *testing.T) {
	t.Parallel()

	// makeBinDir creates dir with executable initdb and pg_ctl stubs.
	makeBinDir := func(t *testing.T, dir string) string {
		t.Helper()

		require.NoError(t, os.MkdirAll(dir, 0o755))
		for _, name := range []string{"initdb", "pg_ctl"} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755))
		}
		return dir
	}
	notOnPath := func(string) (string, error) { return "", exec.ErrNotFound }

	t.Run("NewestVersionWins", func(t *testing.T) {
		t.Parallel()

		root := t.TempDir()
		makeBinDir(t, filepath.Join(root, "9.6", "bin"))
		want := makeBinDir(t, filepath.Join(root, "15", "bin"))
		makeBinDir(t, filepath.Join(root, "14", "bin"))

		dir, err := findBinDir(notOnPath, []string{filepath.Join(root, "*", "bin")})
		require.NoError(t, err)
		require.Equal(t, want, dir)
	})

	t.Run("NoneFound", func(t *testing.T) {
		t.Parallel()

		root := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(root, "15", "bin"), 0o755)) // no binaries inside

		_, err := findBinDir(notOnPath, []string{filepath.Join(root, "*", "bin")})
		require.ErrorIs(t, err, ErrNoPostgres)
		var noPostgres *NoPostgresError
		require.ErrorAs(t, err, &noPostgres)
		require.Contains(t, err.Error(), "apt-get install -y postgresql")
		require.Contains(t, err.Error(), "brew install postgresql")
		require.Contains(t, err.Error(), "TEST_DATABASE_URL")
	})

	t.Run("PathWins", func(t *testing.T) {
		t.Parallel()

		root := t.TempDir()
		onPath := makeBinDir(t, filepath.Join(root, "path"))
		makeBinDir(t, filepath.Join(root, "17", "bin"))
		lookPath := func(name string) (string, error) { return filepath.Join(onPath, name), nil }

		dir, err := findBinDir(lookPath, []string{filepath.Join(root, "*", "bin")})
		require.NoError(t, err)
		require.Equal(t, onPath, dir)
	})
}

func TestShellJoin(t *testing.T) {
	t.Parallel()

	require.Equal(t, `'-c' 'unix_socket_directories=/tmp/a b' 'it'\''s'`,
		shellJoin([]string{"-c", "unix_socket_directories=/tmp/a b", "it's"}))
}

func TestStart(t *testing.T) {
	t.Parallel()

	ctx := context.Background()

	if _, err := FindBinDir(); errors.Is(err, ErrNoPostgres) {
		t.Skip(err.Error())
	}

	cluster, err := Start(ctx, &Config{ExtraArgs: []string{"-c", "fsync=off"}})
	require.NoError(t, err)

	conn, err := pgx.Connect(ctx, cluster.URL)
	require.NoError(t, err)
	var fsync string
	require.NoError(t, conn.QueryRow(ctx, "SHOW fsync").Scan(&fsync))
	require.Equal(t, "off", fsync)
	require.NoError(t, conn.Close(ctx))

	require.NoError(t, cluster.Stop(ctx))
	require.NoError(t, cluster.Stop(ctx)) // a second Stop is a no-op
	require.NoDirExists(t, cluster.rootDir)

	_, err = pgx.Connect(ctx, cluster.URL)
	require.Error(t, err)
}

func TestStartNoPostgres(t *testing.T) {
	t.Parallel()

	_, err := Start(context.Background(), &Config{BinDir: t.TempDir()})
	require.ErrorIs(t, err, ErrNoPostgres)
}

// TestStaleClusterHelper is the process TestStartRemovesStaleClusters
// SIGKILLs: the test binary re-executed, holding a cluster it never stops.
// Run any other way, it returns at once.
func TestStaleClusterHelper(t *testing.T) {
	if os.Getenv("TRIBUTARY_PGCLUSTER_HELPER") != "1" {
		return
	}
	cluster, err := Start(context.Background(), nil)
	require.NoError(t, err)
	fmt.Printf("cluster %s %s\n", cluster.rootDir, cluster.URL)
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed, or the parent goes
	require.NoError(t, cluster.Stop(context.Background()))
}

// TestStartRemovesStaleClusters kills (SIGKILL) a process that holds a
// cluster, as `tributary demo` killed with kill -9: its server runs on and
// its directory stays. The next Start stops and removes that cluster, and
// leaves alone a cluster whose process runs and a directory that is not a
// cluster's.
func TestStartRemovesStaleClusters(t *testing.T) {
	t.Parallel()

	if _, err := FindBinDir(); errors.Is(err, ErrNoPostgres) {
		t.Skip(err.Error())
	}
	ctx := context.Background()

	cmd := exec.Command(os.Args[0], "-test.run=^TestStaleClusterHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TRIBUTARY_PGCLUSTER_HELPER=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	t.Cleanup(func() { _ = stdin.Close() })
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the helper did not start its cluster")
	fields := strings.Fields(line)
	require.Len(t, fields, 3, line)
	staleDir, staleURL := fields[1], fields[2]
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	conn, err := pgx.Connect(ctx, staleURL)
	require.NoError(t, err, "the killed process's server runs on")
	require.NoError(t, conn.Close(ctx))
	require.DirExists(t, staleDir)

	// Not ours: no owner file. Ours, alive: this process.
	foreign, err := os.MkdirTemp("", dirPattern)
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(foreign) })
	alive, err := os.MkdirTemp("", dirPattern)
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(alive) })
	require.NoError(t, writeOwner(alive))

	cluster, err := Start(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cluster.Stop(context.Background()) })
	require.NoError(t, cluster.RemoveError)
	require.Contains(t, cluster.Removed, staleDir)
	require.NoDirExists(t, staleDir)
	_, err = pgx.Connect(ctx, staleURL)
	require.Error(t, err, "the stale server is stopped")
	require.DirExists(t, foreign)
	require.DirExists(t, alive)
}

// TestCrashRestart crashes a cluster and starts it again: the server runs
// crash recovery, what was committed synchronously survives, and the same
// URL connects again.
func TestCrashRestart(t *testing.T) {
	t.Parallel()

	if _, err := FindBinDir(); errors.Is(err, ErrNoPostgres) {
		t.Skip(err.Error())
	}
	ctx := context.Background()

	cluster, err := Start(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cluster.Stop(context.Background()) })

	conn, err := pgx.Connect(ctx, cluster.URL)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "CREATE TABLE kept (id int); INSERT INTO kept VALUES (1)")
	require.NoError(t, err)

	require.NoError(t, cluster.Crash(ctx))
	require.Error(t, conn.Ping(ctx), "the server is down")
	_ = conn.Close(ctx)
	require.NoError(t, cluster.Restart(ctx))

	conn, err = pgx.Connect(ctx, cluster.URL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	var n int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM kept").Scan(&n))
	require.Equal(t, 1, n, "a synchronous commit survives the crash")
	require.Contains(t, cluster.logTail(), "automatic recovery in progress", "the restart recovered from a crash, not from a clean shutdown")

	require.NoError(t, cluster.Stop(ctx))
	require.NoDirExists(t, cluster.rootDir)
}
