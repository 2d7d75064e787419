package riverui_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// envConstructors are the helpers that open a client of their own (about
// nine connections each).
var envConstructors = map[string]bool{
	"newDash":         true,
	"newFixture":      true,
	"newHeldFixture":  true,
	"newRatedFixture": true,
}

// TestSharedEnvSubtestsNotParallel holds the rule in newDash's doc: a test
// that opens a client and shares it with subtests runs them one after
// another. With parallel subtests, the waiting parent gives its parallel
// slot away while keeping its client's connections open, and enough such
// parents exhaust the server's connections.
func TestSharedEnvSubtestsNotParallel(t *testing.T) {
	t.Parallel()

	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var broken []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			opensEnv := false
			for _, stmt := range fn.Body.List {
				ast.Inspect(stmt, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					if id, ok := call.Fun.(*ast.Ident); ok && envConstructors[id.Name] {
						opensEnv = true
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Run" && len(call.Args) == 2 {
						if lit, ok := call.Args[1].(*ast.FuncLit); ok && opensEnv && callsParallel(lit.Body) {
							broken = append(broken, fset.Position(call.Pos()).String()+" ("+fn.Name.Name+")")
						}
						return false // a subtest's own clients are its own
					}
					return true
				})
			}
		}
	}
	require.Empty(t, broken, "these subtests share their parent's client and call t.Parallel; run them one after another (see newDash)")
}

// callsParallel reports whether body calls t.Parallel directly (not in a
// nested subtest).
func callsParallel(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
			switch sel.Sel.Name {
			case "Parallel":
				found = true
			case "Run":
				return false
			}
		}
		return !found
	})
	return found
}
