package pgcluster

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
