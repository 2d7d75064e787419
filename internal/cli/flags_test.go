package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
			// -h and - (standard input) stay.
			{[]string{"workflow", "signal", "id", "s", "-payload", "-", "-h"}, []string{"workflow", "signal", "id", "s", "--payload", "-", "-h"}},
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
