package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

func TestMainFramework(t *testing.T) {
	t.Parallel()

	t.Run("EveryCommandHasHelp", func(t *testing.T) {
		t.Parallel()

		var walk func(cmd *cobra.Command, path []string)
		walk = func(cmd *cobra.Command, path []string) {
			res := runCLI(t, nil, append(path[1:], "--help")...)
			require.Equal(t, ExitOK, res.code, "%v", path)
			require.Empty(t, res.stderr)
			require.True(t, strings.HasPrefix(res.stdout, cmd.Short+"\n"), "%v: %s", path, res.stdout)
			require.Contains(t, res.stdout, "\nExample:\n  tributary ", "%v", path)
			if !isGroup(cmd) {
				// The environment variables of its flags are listed.
				fs := cmd.Flags()
				for flagName, key := range map[string]string{"database-url": "DATABASE_URL", "schema": "TRIBUTARY_SCHEMA", "addr": "TRIBUTARY_ADDR", "token": "TRIBUTARY_TOKEN"} {
					if fs.Lookup(flagName) != nil {
						require.Contains(t, res.stdout, "\nEnvironment (a flag given on the command line wins over its variable):\n", "%v", path)
						require.Regexp(t, `(?m)^  `+key+` +default of --`+flagName+`$`, res.stdout, "%v", path)
					}
				}
			}

			for _, sub := range visibleCommands(cmd) {
				walk(sub, append(path, sub.Name()))
			}
		}
		walk(newRootCommand(testEnv(nil, nil, nil)), []string{"tributary"})
	})

	t.Run("FlagError", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "migrate", "up", "--no-such-flag")
		requireFailed(t, res, ExitUsage, "tributary: flag provided but not defined: -no-such-flag; see 'tributary migrate up --help'")
	})

	t.Run("HelpHidesEnvironment", func(t *testing.T) {
		t.Parallel()

		// --help names the variables, never their values.
		res := runCLI(t, map[string]string{"DATABASE_URL": "postgres://app:pw-from-env@db:5432/app", "TRIBUTARY_TOKEN": "token-from-env"}, "serve", "--help")
		require.Equal(t, ExitOK, res.code)
		require.NotContains(t, res.stdout, "pw-from-env")
		require.NotContains(t, res.stdout, "token-from-env")
	})

	t.Run("RootHelpListsEnvironment", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "--help")
		require.Equal(t, ExitOK, res.code)
		require.Contains(t, res.stdout, "\nEnvironment (a flag given on the command line wins over its variable):\n"+
			"  DATABASE_URL      default of --database-url\n"+
			"  TRIBUTARY_ADDR    default of --addr\n"+
			"  TRIBUTARY_SCHEMA  default of --schema\n"+
			"  TRIBUTARY_TOKEN   default of --token\n")
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
		require.True(t, strings.HasPrefix(res.stderr, "tributary: missing command for \"tributary\"; see the commands below\n\n"), res.stderr)
		require.Contains(t, res.stderr, "Usage:\n  tributary <command>\n")
		require.Contains(t, res.stderr, "  migrate  ")

		res = runCLI(t, nil, "schedule")
		require.Equal(t, ExitUsage, res.code)
		require.True(t, strings.HasPrefix(res.stderr, "tributary: missing command for \"tributary schedule\"; see the commands below\n\n"), res.stderr)
	})

	t.Run("UnexpectedArgument", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "migrate", "status", "extra")
		requireFailed(t, res, ExitUsage, "tributary: unexpected argument \"extra\"; see 'tributary migrate status --help'")
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

func TestEnvFlag(t *testing.T) {
	t.Parallel()

	parse := func(vars map[string]string, args ...string) string {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		f := envString(fs, &Env{Getenv: func(key string) string { return vars[key] }}, "addr", "TRIBUTARY_ADDR", "127.0.0.1:8080", "`address`", "127.0.0.1:8080")
		require.NoError(t, fs.Parse(args))
		return f.Get()
	}
	env := map[string]string{"TRIBUTARY_ADDR": "127.0.0.1:9000"}
	require.Equal(t, "127.0.0.1:8080", parse(nil))                                                                 // the fallback
	require.Equal(t, "127.0.0.1:9000", parse(env))                                                                 // the environment
	require.Equal(t, "127.0.0.1:9999", parse(env, "--addr", "127.0.0.1:9999"))                                     // the flag wins
	require.Empty(t, parse(env, "--addr", ""))                                                                     // even an empty one
	require.Equal(t, "127.0.0.1:9000", parse(map[string]string{"TRIBUTARY_ADDR": "127.0.0.1:9000", "OTHER": "x"})) // only its own variable
}

func TestRegister(t *testing.T) {
	t.Parallel()

	noop := func(*pflag.FlagSet, *Env) Action { return func(context.Context, []string) error { return nil } }
	env := testEnv(nil, nil, nil)

	require.PanicsWithValue(t, "cli: command x needs an Example", func() {
		validate(command(env, &cobra.Command{Use: "x", Short: "does x"}, noop), nil)
	})
	require.PanicsWithValue(t, "cli: command x needs either RunE or subcommands", func() {
		validate(&cobra.Command{Use: "x", Short: "does x", Example: "tributary x"}, nil)
	})
	require.PanicsWithValue(t, "cli: command registered twice: migrate", func() {
		root := newRootCommand(env)
		root.AddCommand(command(env, &cobra.Command{Use: "migrate", Short: "again", Example: "tributary migrate"}, noop))
		validate(root, nil)
	})
}
