package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runResult is the outcome of running a command line in-process.
type runResult struct {
	code   int
	stderr string
	stdout string
}

// runCLI runs args against the registered commands, with environment
// variables from vars only.
func runCLI(t *testing.T, vars map[string]string, args ...string) runResult {
	t.Helper()

	var stdout, stderr bytes.Buffer
	env := &Env{
		Getenv: func(key string) string { return vars[key] },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Stderr: &stderr,
		Stdout: &stdout,
	}
	code := Main(context.Background(), args, env)
	return runResult{code: code, stderr: stderr.String(), stdout: stdout.String()}
}

func TestMainFramework(t *testing.T) {
	t.Parallel()

	t.Run("EveryCommandHasHelp", func(t *testing.T) {
		t.Parallel()

		var walk func(cmd *Command, path []string)
		walk = func(cmd *Command, path []string) {
			res := runCLI(t, nil, append(path[1:], "--help")...)
			require.Equal(t, ExitOK, res.code, "%v", path)
			require.Empty(t, res.stderr)
			require.True(t, strings.HasPrefix(res.stdout, cmd.Summary+"\n"), "%v: %s", path, res.stdout)
			require.Contains(t, res.stdout, "\nExample:\n  tributary ", "%v", path)

			for _, sub := range cmd.Subcommands {
				walk(sub, append(path, sub.Name))
			}
		}
		walk(root, []string{"tributary"})
	})

	t.Run("FlagError", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "migrate", "up", "--no-such-flag")
		require.Equal(t, ExitUsage, res.code)
		require.Equal(t, "tributary: flag provided but not defined: -no-such-flag; see 'tributary migrate up --help'\n", res.stderr)
	})

	t.Run("HelpCommand", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "help", "migrate", "status")
		require.Equal(t, ExitOK, res.code)
		require.Contains(t, res.stdout, "Usage:\n  tributary migrate status [flags]\n")
		require.Contains(t, res.stdout, "  --json\n")
	})

	t.Run("NoCommand", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil)
		require.Equal(t, ExitUsage, res.code)
		require.Empty(t, res.stdout)
		require.Contains(t, res.stderr, "Usage:\n  tributary <command>\n")
		require.Contains(t, res.stderr, "  migrate  ")
	})

	t.Run("UnexpectedArgument", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "migrate", "status", "extra")
		require.Equal(t, ExitUsage, res.code)
		require.Equal(t, "tributary: unexpected argument \"extra\"; see 'tributary migrate status --help'\n", res.stderr)
	})

	t.Run("UnknownCommand", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "frobnicate")
		require.Equal(t, ExitUsage, res.code)
		require.True(t, strings.HasPrefix(res.stderr, "tributary: unknown command \"frobnicate\" for \"tributary\""), res.stderr)
		require.Contains(t, res.stderr, "Commands:\n")

		res = runCLI(t, nil, "migrate", "sideways")
		require.Equal(t, ExitUsage, res.code)
		require.Contains(t, res.stderr, "unknown command \"sideways\" for \"tributary migrate\"")
	})
}

func TestFail(t *testing.T) {
	t.Parallel()

	t.Run("AddsHelpHintAndKeepsOneLine", func(t *testing.T) {
		t.Parallel()

		var stderr bytes.Buffer
		code := fail(&Env{Stderr: &stderr}, errors.New("something\nbroke"), []string{"tributary", "x"})
		require.Equal(t, ExitError, code)
		require.Equal(t, "tributary: something broke; see 'tributary x --help'\n", stderr.String())
	})

	t.Run("KeepsHint", func(t *testing.T) {
		t.Parallel()

		var stderr bytes.Buffer
		code := fail(&Env{Stderr: &stderr}, withHint(errors.New("it broke"), "do this"), []string{"tributary"})
		require.Equal(t, ExitError, code)
		require.Equal(t, "tributary: it broke; do this\n", stderr.String())
	})
}

func TestRegister(t *testing.T) {
	t.Parallel()

	noop := func(*flag.FlagSet, *Env) Action { return func(context.Context, []string) error { return nil } }

	require.PanicsWithValue(t, "cli: command x needs an Example", func() {
		validate(&Command{Name: "x", Summary: "does x", Setup: noop})
	})
	require.PanicsWithValue(t, "cli: command x needs either Setup or Subcommands", func() {
		validate(&Command{Name: "x", Summary: "does x", Example: "tributary x"})
	})
	require.PanicsWithValue(t, "cli: command registered twice: migrate", func() {
		Register(&Command{Name: "migrate", Summary: "again", Example: "tributary migrate", Setup: noop})
	})
}
