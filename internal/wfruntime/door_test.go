package wfruntime

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoInitHooks keeps the module's packages free of init functions: a
// package reaches another through a typed door it can follow (Of, for the
// workflow client's runtime), not through a variable that an init() of
// the other package sets. Tests may have them.
func TestNoInitHooks(t *testing.T) {
	t.Parallel()

	root, err := filepath.Abs("../..")
	require.NoError(t, err)
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
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		checked++
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range file.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: func init(); give the package a door its callers can follow (see package wfruntime) instead",
					rel, fset.Position(fn.Pos()).Line)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 100, "the walk found the module's files")
}
