package tributarytest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFromAnotherModule builds a module of its own that depends on this
// one (a replace to this checkout), as a user's repository would, and runs
// its tests with the kit: a workflow that sleeps a month, tested in
// virtual time.
func TestFromAnotherModule(t *testing.T) {
	t.Parallel()

	if testing.Short() {
		t.Skip("builds a module of its own and all its dependencies; run without -short")
	}
	_, here, _, _ := runtime.Caller(0)
	checkout := filepath.Dir(filepath.Dir(here))
	dir := t.TempDir()
	goMod, err := os.ReadFile(filepath.Join(checkout, "go.mod"))
	require.NoError(t, err)
	goVersion := "1.26"
	for line := range strings.Lines(string(goMod)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			goVersion = v
		}
	}
	sum, err := os.ReadFile(filepath.Join(checkout, "go.sum"))
	require.NoError(t, err)
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("go.mod", "module example.com/onboarding\n\ngo "+goVersion+"\n\n"+
		"require github.com/tributary-go/tributary v0.0.0\n\n"+
		"replace github.com/tributary-go/tributary => "+checkout+"\n")
	write("go.sum", string(sum))
	readme, err := os.ReadFile(filepath.Join(checkout, "README.md"))
	require.NoError(t, err)
	write("onboarding.go", outsideWorkflow)
	write("onboarding_test.go", outsideTestHeader+readmeTestExample(t, string(readme)))

	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := tidy.CombinedOutput()
	require.NoError(t, err, "go mod tidy in the user's module:\n%s", out)

	test := exec.Command("go", "test", "-count=1", "-v", "./...")
	test.Dir = dir
	out, err = test.CombinedOutput()
	require.NoError(t, err, "go test in the user's module:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestReminder")
	t.Logf("the user's module:\n%s", out)
}

const outsideWorkflow = `package onboarding

import (
	"context"
	"time"

	"github.com/tributary-go/tributary/workflow"
)

// Reminder waits a month after signup, then reminds the user.
var Reminder = workflow.Define("reminder", func(ctx workflow.Context, email string) (string, error) {
	if err := workflow.Sleep(ctx, "a month", 30*24*time.Hour); err != nil {
		return "", err
	}
	return workflow.Step(ctx, "remind", func(context.Context) (string, error) { return "reminded " + email, nil })
}, nil)
`

// outsideTestHeader goes before the README's test example, which has no
// package clause or imports.
const outsideTestHeader = `package onboarding

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/tributarytest"
	"github.com/tributary-go/tributary/workflow"
)

`

// readmeTestExample is the Go block of the README's section on testing, so
// that the example a reader copies is the one this test runs.
func readmeTestExample(t *testing.T, readme string) string {
	t.Helper()
	_, section, ok := strings.Cut(readme, "## Testing your workflows in virtual time")
	require.True(t, ok, "the README has no section on testing in virtual time")
	_, block, ok := strings.Cut(section, "```go\n")
	require.True(t, ok, "the README's section on testing has no Go example")
	code, _, ok := strings.Cut(block, "```")
	require.True(t, ok)
	return code
}
