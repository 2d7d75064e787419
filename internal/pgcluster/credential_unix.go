//go:build unix

package pgcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// dedicatedUser is created with useradd when the process is root and the
// system has no `nobody` user.
const dedicatedUser = "tributary-pg"

// credential is the unprivileged user the Postgres binaries run as when the
// process is root. A nil *credential means "run as ourselves".
type credential struct {
	gid uint32
	uid uint32
}

func lookupCredential() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil // nil: run as ourselves
	}

	u, err := user.Lookup("nobody")
	if err != nil {
		if u, err = user.Lookup(dedicatedUser); err != nil {
			u, err = createDedicatedUser()
			if err != nil {
				return nil, err
			}
		}
	}

	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: user %s has a non-numeric uid %q", u.Username, u.Uid)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: user %s has a non-numeric gid %q", u.Username, u.Gid)
	}
	return &credential{gid: uint32(gid), uid: uint32(uid)}, nil
}

func createDedicatedUser() (*user.User, error) {
	useradd, err := exec.LookPath("useradd")
	if err != nil {
		return nil, errors.New("pgcluster: running as root, which initdb refuses, and there is neither a `nobody` user nor useradd to create one; run as an unprivileged user or set TEST_DATABASE_URL")
	}
	if out, err := exec.Command(useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", dedicatedUser).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgcluster: useradd %s: %w: %s", dedicatedUser, err, out)
	}
	return user.Lookup(dedicatedUser)
}

// apply makes cmd run as the credential's user.
func (c *credential) apply(cmd *exec.Cmd) {
	if c == nil {
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Gid: c.gid, Uid: c.uid, NoSetGroups: true},
	}
}

// chown gives paths to the credential's user.
func (c *credential) chown(paths ...string) error {
	if c == nil {
		return nil
	}
	for _, path := range paths {
		if err := os.Chown(path, int(c.uid), int(c.gid)); err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
	}
	return nil
}

// processAlive reports whether process pid exists (ours or another
// user's) and has not exited: a killed process that nobody has reaped yet
// (a zombie, common in containers whose init does not reap) has exited.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// /proc/<pid>/stat is "pid (comm) state …"; Linux only, elsewhere the
	// process counts as alive.
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, rest, ok := strings.Cut(string(stat), ") ")
	return !ok || !strings.HasPrefix(rest, "Z")
}
