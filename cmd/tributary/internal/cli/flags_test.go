package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestGoStyleFlags(t *testing.T) {
	t.Parallel()

	t.Run("Rewrite", func(t *testing.T) {
		t.Parallel()

		root := newRootCommand(testEnv(nil, nil, nil))
		for _, tc := range []struct{ args, want []string }{
			// A single dash before a long flag of the command, with or without =.
			{[]string{"schedule", "next", "-cron", "@daily", "-count=2", "-json"}, []string{"schedule", "next", "--cron", "@daily", "--count=2", "--json"}},
			// A flag's value is never rewritten, even one that looks like a flag.
			{[]string{"schedule", "pause", "id", "-note", "-json", "-json"}, []string{"schedule", "pause", "id", "--note", "-json", "--json"}},
			// Global flags too; -h and - (standard input) stay.
			{[]string{"-log-level", "debug", "workflow", "signal", "id", "s", "-payload", "-", "-h"}, []string{"--log-level", "debug", "workflow", "signal", "id", "s", "--payload", "-", "-h"}},
			// Nothing after --; no word that names no flag.
			{[]string{"workflow", "start", "t", "-zone", "--", "-input"}, []string{"workflow", "start", "t", "-zone", "--", "-input"}},
		} {
			require.Equal(t, tc.want, goStyleFlags(root, tc.args), "%q", tc.args)
		}
	})

	t.Run("SameAsDoubleDash", func(t *testing.T) {
		t.Parallel()

		want := runCLI(t, nil, "schedule", "next", "--cron", "@daily", "--from", "2026-03-06T12:00:00Z", "--count", "2", "--json")
		require.Equal(t, ExitOK, want.code, want.stderr)
		got := runCLI(t, nil, "schedule", "next", "-cron", "@daily", "-from=2026-03-06T12:00:00Z", "-count", "2", "-json")
		require.Equal(t, want, got)

		help := runCLI(t, nil, "schedule", "next", "--help")
		require.Equal(t, help, runCLI(t, nil, "schedule", "next", "-help"))
		require.Equal(t, help, runCLI(t, nil, "schedule", "next", "-h"))
	})

	t.Run("UnknownIsRefused", func(t *testing.T) {
		t.Parallel()

		runFailureCases(t, []string{"schedule", "next"}, []failureCase{
			{name: "SingleDash", args: []string{"-cron", "@daily", "-zone", "UTC"}, code: ExitUsage,
				stderr: `tributary: flag provided but not defined: -zone; see 'tributary schedule next --help'`},
			{name: "NeedsValue", args: []string{"--cron"}, code: ExitUsage,
				stderr: `tributary: flag needs an argument: -cron; see 'tributary schedule next --help'`},
			{name: "BadBool", args: []string{"--cron", "@daily", "--json=maybe"}, code: ExitUsage,
				stderr: `tributary: invalid boolean value "maybe" for -json: parse error; see 'tributary schedule next --help'`},
			{name: "OutOfRange", args: []string{"--cron", "@daily", "--count", "99999999999999999999"}, code: ExitUsage,
				stderr: `tributary: invalid value "99999999999999999999" for flag -count: value out of range; see 'tributary schedule next --help'`},
		})
	})

	t.Run("GroupTakesCommandFirst", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "schedule", "--json", "list")
		require.Equal(t, ExitUsage, res.code)
		require.True(t, strings.HasPrefix(res.stderr, "tributary: tributary schedule takes a command before any flag; see the commands below\n\nWork with cron schedules\n"), res.stderr)
	})

	t.Run("Suggestion", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "shedule", "list")
		require.Equal(t, ExitUsage, res.code)
		require.True(t, strings.HasPrefix(res.stderr, `tributary: unknown command "shedule" for "tributary" (did you mean "schedule"?); see the commands below`), res.stderr)
	})

	t.Run("HelpInGroup", func(t *testing.T) {
		t.Parallel()

		want := runCLI(t, nil, "schedule", "next", "--help")
		got := runCLI(t, nil, "schedule", "help", "next")
		require.Equal(t, want, got)

		res := runCLI(t, nil, "help", "nothing")
		require.Equal(t, ExitUsage, res.code)
		require.True(t, strings.HasPrefix(res.stderr, `tributary: unknown command "nothing" for "tributary"; see the commands below`), res.stderr)
	})
}

func TestLogFlags(t *testing.T) {
	t.Parallel()

	t.Run("JSONAtInfo", func(t *testing.T) {
		t.Parallel()

		// The migrator logs each migration at info: the default level (warn)
		// hides it, --log-level info shows it, as JSON with --log-format json.
		vars := dbVars(testdb.NewEmpty(t))
		res := runCLI(t, vars, "migrate", "up", "--log-level", "info", "--log-format", "json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
		require.NotEmpty(t, lines)
		var entry struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &entry), res.stderr)
		require.Equal(t, "INFO", entry.Level)
		require.Equal(t, "tributary: Applied migration", entry.Msg)

		// Before the command, as a global flag, in text; the migrations are
		// applied now, so the migrator says there are none.
		res = runCLI(t, vars, "--log-level=info", "migrate", "up")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Contains(t, res.stderr, `level=INFO msg="tributary: No migrations to apply"`)

		// Without the flags, the injected logger (a discarding one) stays.
		res = runCLI(t, vars, "migrate", "up")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
	})

	t.Run("BadValues", func(t *testing.T) {
		t.Parallel()

		runFailureCases(t, []string{"schedule", "next", "--cron", "@daily"}, []failureCase{
			{name: "Level", args: []string{"--log-level", "verbose"}, code: ExitUsage,
				stderr: `tributary: --log-level "verbose" is not a log level; pass --log-level debug, info, warn or error`},
			{name: "Format", args: []string{"--log-format", "xml"}, code: ExitUsage,
				stderr: `tributary: --log-format "xml" is not a log format; pass --log-format text or --log-format json`},
		})
	})

	t.Run("Help", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "serve", "--help")
		require.Contains(t, res.stdout, "\nGlobal flags:\n  --log-format text|json\n")
		require.Contains(t, res.stdout, "\n  --log-level debug|info|warn|error\n")
		res = runCLI(t, nil, "--help")
		require.Contains(t, res.stdout, "\nFlags:\n  --log-format text|json\n")
		require.Contains(t, res.stdout, "\n  --version\n")
	})
}
