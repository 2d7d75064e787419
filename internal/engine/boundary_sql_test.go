package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sqlStatement matches a string that is (the start of) a SQL statement,
// names a Tributary table the way statements do ({s}), or is a fragment of
// one (a parameter compared or cast, a row lock). Keywords are matched in
// upper case, as Tributary's SQL writes them, so that prose does not match.
var sqlStatement = regexp.MustCompile(`(?s)^\s*(SELECT\s|INSERT\s+INTO\s|UPDATE\s+\S+\s+(\w+\s+)?SET\s|DELETE\s+FROM\s|WITH\s+(RECURSIVE\s+)?\w+(\([^)]*\))?\s+AS\s|LISTEN\s|UNLISTEN\s|NOTIFY\s|CREATE\s|ALTER\s|DROP\s|LOCK\s+TABLE\s)|\{s\}|\$\d+::|[=<>] \$\d+|ANY\(\$\d+|\bFOR (NO KEY )?UPDATE\b|\bSKIP LOCKED\b`)

// sqlOwners are the directories, relative to the module root, whose
// non-test code may hold SQL: the engine, the migrations, and the code
// that is not Tributary's own product (benchmarks with their River
// baselines, the demo's and examples' own tables, test databases).
var sqlOwners = []string{
	"internal/engine",
	"migrations",
	"internal/bench",
	"cmd/tributary/internal/demo",
	"internal/testdb",
	"examples",
	"scripts",
}

// TestOnlyTheEngineHasSQL enforces that package engine alone owns
// Tributary's SQL: no string literal of any other package's non-test code
// (workflow, schedule, jobs, riverui, tributaryotel, the CLI, …) is a SQL
// statement. The façades call the engine's typed methods instead.
func TestOnlyTheEngineHasSQL(t *testing.T) {
	t.Parallel()

	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	var checked int
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			for _, owner := range sqlOwners {
				if filepath.ToSlash(rel) == owner {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if m := sqlStatement.FindString(s); m != "" {
				t.Errorf("%s: SQL outside internal/engine (%q…): add a method to engine.Queries and call it", fset.Position(lit.Pos()), strings.TrimSpace(firstLine(s)))
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 50, "the walk found too few Go files; is the module root %s?", root)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}
