package readme

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// snippetImports are the packages README.md's snippets name, by the name
// they use.
var snippetImports = map[string]string{
	"context":       "context",
	"fmt":           "fmt",
	"log":           "log",
	"os":            "os",
	"testing":       "testing",
	"time":          "time",
	"pgx":           "github.com/jackc/pgx/v5",
	"river":         "github.com/riverqueue/river",
	"rivertype":     "github.com/riverqueue/river/rivertype",
	"require":       "github.com/stretchr/testify/require",
	"migrations":    "github.com/tributary-go/tributary/migrations",
	"riverui":       "github.com/tributary-go/tributary/riverui",
	"schedule":      "github.com/tributary-go/tributary/schedule",
	"tributaryotel": "github.com/tributary-go/tributary/tributaryotel",
	"tributarytest": "github.com/tributary-go/tributary/tributarytest",
	"workflow":      "github.com/tributary-go/tributary/workflow",
}

func TestREADMESnippetsCompile(t *testing.T) {
	t.Parallel()

	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	snippets := goBlocks(readme)
	require.NotEmpty(t, snippets, "README.md has no ```go block")

	// Inside the module, so that its go.mod and go.sum apply; a name
	// starting with "_" keeps it out of ./... while it exists.
	dir, err := os.MkdirTemp(".", "_snippets")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })

	prelude, err := os.ReadFile("testdata/prelude.go")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prelude.go"), prelude, 0o644))
	for _, s := range snippets {
		src, err := s.source()
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("readme_%d.go", s.line)), src, 0o644))
	}

	cmd := exec.Command("go", "vet", "./"+filepath.Base(dir))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "README.md's Go snippets do not compile (see examples/readme/doc.go for how they are wrapped):\n%s", out)
}

// snippet is a ```go block of README.md; line is the README's line of its
// first line of code.
type snippet struct {
	line int
	code string
}

// goBlocks are the ```go blocks of a Markdown document.
func goBlocks(doc []byte) []snippet {
	var (
		out []snippet
		cur *snippet
	)
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &snippet{line: n + 1}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.code += line + "\n"
		}
	}
	return out
}

// source is s as a Go file of package snippets (see doc.go): its
// declarations as they are, or its statements as a function's body, with
// the imports of the packages it names and //line comments that point
// the compiler's errors at the README.
func (s snippet) source() ([]byte, error) {
	at := fmt.Sprintf("//line README.md:%d\n", s.line)
	body := at + s.code
	if _, err := parser.ParseFile(token.NewFileSet(), "", "package snippets\n"+body, 0); err != nil {
		fn := fmt.Sprintf("func readme%d() error {\n%s", s.line, body)
		f, err := parse(fn + "}\n")
		if err != nil {
			return nil, err
		}
		// Mark each variable the snippet declares as used.
		var used []string
		for _, stmt := range f.Decls[0].(*ast.FuncDecl).Body.List {
			var names []*ast.Ident
			switch stmt := stmt.(type) {
			case *ast.AssignStmt:
				if stmt.Tok == token.DEFINE {
					for _, e := range stmt.Lhs {
						names = append(names, e.(*ast.Ident))
					}
				}
			case *ast.DeclStmt:
				if d, ok := stmt.Decl.(*ast.GenDecl); ok && d.Tok == token.VAR {
					for _, spec := range d.Specs {
						names = append(names, spec.(*ast.ValueSpec).Names...)
					}
				}
			}
			for _, n := range names {
				if n.Name != "_" && !slices.Contains(used, n.Name) {
					used = append(used, n.Name)
				}
			}
		}
		for _, name := range used {
			fn += "_ = " + name + "\n"
		}
		body = fn + "return nil\n}\n"
	}

	f, err := parse(body)
	if err != nil {
		return nil, err
	}
	var imports []string
	for _, id := range f.Unresolved {
		if path, ok := snippetImports[id.Name]; ok && !slices.Contains(imports, path) {
			imports = append(imports, path)
		}
	}
	slices.Sort(imports)
	var b strings.Builder
	b.WriteString("package snippets\n\n")
	for _, path := range imports {
		fmt.Fprintf(&b, "import %q\n", path)
	}
	b.WriteString("\n" + body)
	return []byte(b.String()), nil
}

// parse parses body (a Go file's declarations) as a file of package
// snippets.
func parse(body string) (*ast.File, error) {
	return parser.ParseFile(token.NewFileSet(), "", "package snippets\n"+body, 0)
}
