package engine_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/workflow"
)

// comparedLiterals matches SQL that compares a run's or step's status, or
// a River job's state, with literals: status = 'x', j.state IN ('x', 'y').
var comparedLiterals = regexp.MustCompile(`(?i)\b(status|state)(?:::text)?\s*(?:=|<>|!=|NOT IN|IN)\s*\(?\s*((?:'[a-z_]+'\s*,?\s*)+)`)

// TestStatusLiterals keeps the status and state literals in Tributary's SQL
// honest. The SQL spells them, as River's own SQL does, rather than
// concatenating Go constants into every statement (which would make the
// statements hard to read and review); instead this test reads every SQL
// string and file of the module and fails on a literal that is not a run
// status (workflow.Status, the same set as the tributary_run_status domain
// of migration 003) or, for state, a River job state.
func TestStatusLiterals(t *testing.T) {
	t.Parallel()

	statuses := []string{}
	for _, s := range []workflow.Status{
		workflow.StatusPending, workflow.StatusRunning, workflow.StatusSleeping, workflow.StatusWaiting,
		workflow.StatusCompleted, workflow.StatusFailed, workflow.StatusCancelled, workflow.StatusSkipped,
	} {
		statuses = append(statuses, string(s))
	}
	riverStates := []string{"available", "cancelled", "completed", "discarded", "pending", "retryable", "running", "scheduled"}

	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	domain, err := os.ReadFile(filepath.Join(root, "migrations", "sql", "003_lighter_writes.up.sql"))
	require.NoError(t, err)
	m := regexp.MustCompile(`tributary_run_status AS text\s+CHECK \(VALUE IN \(([^)]*)\)\)`).FindSubmatch(domain)
	require.NotNil(t, m, "migration 003 defines the tributary_run_status domain")
	require.ElementsMatch(t, statuses, quoted(string(m[1])), "workflow.Status and the tributary_run_status domain")

	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, "_test.go") || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".sql")) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, m := range comparedLiterals.FindAllStringSubmatch(string(src), -1) {
			allowed := statuses
			if strings.EqualFold(m[1], "state") {
				allowed = riverStates
			}
			for _, lit := range quoted(m[2]) {
				seen[lit] = true
				if !slices.Contains(allowed, lit) {
					t.Errorf("%s compares %s with %q, which is not one of %v: %q", rel, strings.ToLower(m[1]), lit, allowed, strings.TrimSpace(m[0]))
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.True(t, seen["completed"] && seen["pending"] && seen["running"], "the walk found the SQL it checks")
}

// quoted returns the single-quoted words of list.
func quoted(list string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`'([a-z_]+)'`).FindAllStringSubmatch(list, -1) {
		out = append(out, m[1])
	}
	return out
}
