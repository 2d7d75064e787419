package engine_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// riverInternals are River's packages marked internal ("API is not stable.
// DO NOT USE."), which only package engine may import.
var riverInternals = []string{
	"github.com/riverqueue/river/riverdriver",
	"github.com/riverqueue/river/rivershared/",
}

// riverJobWrite matches SQL that writes River's job table.
var riverJobWrite = regexp.MustCompile(`(?i)\b(update|insert\s+into|delete\s+from)\s+(\{s\}|"?\w+"?\.)?"?river_job"?\b`)

// TestOnlyTheEngineTouchesRiverInternals enforces package engine's
// boundary: no other package of the module imports River's internal
// packages (the public driver, riverpgxv5, excepted) or has SQL that
// writes river_job. Tests may: they set up and inspect River's state.
func TestOnlyTheEngineTouchesRiverInternals(t *testing.T) {
	t.Parallel()

	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	engineDir := filepath.Join(root, "internal", "engine")
	var checked int
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
		inEngine := filepath.Dir(path) == engineDir
		rel, _ := filepath.Rel(root, path)
		switch {
		case strings.HasSuffix(path, "_test.go"):
			return nil
		case strings.HasSuffix(path, ".go"):
			checked++
			file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range file.Imports {
				pkg, _ := strconv.Unquote(imp.Path.Value)
				for _, internal := range riverInternals {
					if !inEngine && strings.HasPrefix(pkg, internal) && !strings.HasPrefix(pkg, "github.com/riverqueue/river/riverdriver/riverpgxv5") {
						t.Errorf("%s imports %s, which River marks internal: only internal/engine may (add what you need to package engine, with a conformance test)", rel, pkg)
					}
				}
			}
			fallthrough
		case strings.HasSuffix(path, ".sql"):
			if inEngine {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if m := riverJobWrite.Find(src); m != nil {
				t.Errorf("%s writes River's job table (%q): only internal/engine may (through River's driver where it can, with a conformance test)", rel, m)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 100, "the walk found too few Go files; is the module root %s?", root)
}
