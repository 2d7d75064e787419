package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCompletion(t *testing.T) {
	t.Parallel()

	for shell, marker := range map[string]string{"bash": "__start_tributary", "zsh": "#compdef tributary", "fish": "complete -c tributary"} {
		res := runCLI(t, nil, "completion", shell)
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Contains(t, res.stdout, marker, shell)
	}

	// The hidden __complete command, which the scripts call, completes
	// subcommands, flags and flag values.
	res := runCLI(t, nil, "__complete", "sch")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, "schedule\tWork with cron schedules\n")
	res = runCLI(t, nil, "__complete", "serve", "--log-l")
	require.Contains(t, res.stdout, "--log-level\t")
	res = runCLI(t, nil, "__complete", "serve", "--log-level", "")
	require.Equal(t, "debug\ninfo\nwarn\nerror\n:4\n", res.stdout)
	res = runCLI(t, nil, "__complete", "completion", "")
	require.Equal(t, "bash\nzsh\nfish\n:4\n", res.stdout)

	runFailureCases(t, []string{"completion"}, []failureCase{
		{name: "NoShell", code: ExitUsage,
			stderr: "tributary: completion needs a shell; run 'tributary completion bash', 'tributary completion zsh' or 'tributary completion fish'"},
		{name: "UnknownShell", args: []string{"tcsh"}, code: ExitUsage,
			stderr: `tributary: completion: "tcsh" is not a shell tributary completes; run 'tributary completion bash', 'tributary completion zsh' or 'tributary completion fish'`},
	})
}
