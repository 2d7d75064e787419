package pgcluster

import (
	"cmp"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ErrNoPostgres is matched (with errors.Is) by the *NoPostgresError that
// Start and FindBinDir return when no Postgres binaries are installed.
var ErrNoPostgres = errors.New("pgcluster: no Postgres binaries found")

// NoPostgresError says that no Postgres server binaries were found, where
// they were looked for, and how to install them.
type NoPostgresError struct {
	// Searched lists the places looked in.
	Searched []string
}

func (e *NoPostgresError) Error() string {
	return "no Postgres server binaries (initdb, pg_ctl) found in " + strings.Join(e.Searched, ", ") +
		"; install Postgres (Debian/Ubuntu: apt-get install -y postgresql; macOS: brew install postgresql)" +
		" or set DATABASE_URL / TEST_DATABASE_URL to a running server"
}

// Is reports whether target is ErrNoPostgres.
func (e *NoPostgresError) Is(target error) bool { return target == ErrNoPostgres }

// installGlobs are the usual places packages put the server binaries, which
// are often not on PATH (Debian and Ubuntu keep them per major version).
var installGlobs = []string{
	"/usr/lib/postgresql/*/bin",
	"/usr/pgsql-*/bin",
	"/opt/homebrew/opt/postgresql@*/bin",
	"/usr/local/opt/postgresql@*/bin",
	"/Applications/Postgres.app/Contents/Versions/*/bin",
}

// FindBinDir returns the directory holding initdb and pg_ctl: the one of
// initdb on PATH (symlinks resolved), else the newest version under the
// usual install locations such as /usr/lib/postgresql/*/bin. It returns a
// *NoPostgresError when there is none.
func FindBinDir() (string, error) {
	return findBinDir(exec.LookPath, installGlobs)
}

func findBinDir(lookPath func(string) (string, error), globs []string) (string, error) {
	if path, err := lookPath("initdb"); err == nil {
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			path = resolved
		}
		if dir := filepath.Dir(path); checkBinDir(dir) == nil {
			return dir, nil
		}
	}

	type candidate struct {
		dir     string
		version []int
	}
	var candidates []candidate
	for _, pattern := range globs {
		matches, _ := filepath.Glob(pattern)
		for _, dir := range matches {
			if checkBinDir(dir) == nil {
				candidates = append(candidates, candidate{dir: dir, version: versionOf(pattern, dir)})
			}
		}
	}
	if len(candidates) == 0 {
		return "", &NoPostgresError{Searched: append([]string{"PATH"}, globs...)}
	}

	newest := slices.MaxFunc(candidates, func(a, b candidate) int {
		return cmp.Or(slices.Compare(a.version, b.version), strings.Compare(a.dir, b.dir))
	})
	return newest.dir, nil
}

func checkBinDir(dir string) error {
	for _, name := range []string{"initdb", "pg_ctl"} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if info.IsDir() || info.Mode()&0o111 == 0 {
			return errors.New(name + " is not executable")
		}
	}
	return nil
}

var versionRE = regexp.MustCompile(`\d+(?:\.\d+)*`)

// versionOf extracts the version numbers from the part of dir that matched
// the wildcard of pattern: 15 from /usr/lib/postgresql/15/bin, 16 from
// /opt/homebrew/opt/postgresql@16/bin.
func versionOf(pattern, dir string) []int {
	patternParts := strings.Split(filepath.ToSlash(pattern), "/")
	dirParts := strings.Split(filepath.ToSlash(dir), "/")
	index := slices.IndexFunc(patternParts, func(part string) bool { return strings.Contains(part, "*") })
	if index < 0 || index >= len(dirParts) {
		return nil
	}

	var version []int
	for _, part := range strings.Split(versionRE.FindString(dirParts[index]), ".") {
		if n, err := strconv.Atoi(part); err == nil {
			version = append(version, n)
		}
	}
	return version
}
