//go:build unix

package testdb

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// ManyConnections makes a test that holds many of the server's connections
// (several worker processes, or many clients) wait for any other such test
// of the same machine, in any package, and holds them off until it ends.
//
// `go test ./...` runs packages side by side, and each package's parallel
// tests side by side; two of these tests together came within a few
// connections of a default server's max_connections (100), and past it on
// a loaded machine, where a client then fails with SQLSTATE 53300. One at a
// time, they stay well under it. The lock is a file lock in the system's
// temporary directory, so it spans the test binaries of one run and is
// dropped by the kernel if a test binary dies.
//
// Call it in the test that holds the connections, never in the parent of
// parallel subtests: the lock is released when the test ends, after its
// subtests, which would wait for the parallel slots of tests waiting for
// the lock.
func ManyConnections(t testing.TB) {
	t.Helper()

	path := filepath.Join(os.TempDir(), "tributary-tests-many-connections.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("testdb: opening %s: %v", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		t.Fatalf("testdb: locking %s: %v", path, err)
	}
	t.Cleanup(func() { f.Close() }) // closing the file drops the lock
}
