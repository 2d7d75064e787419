package cli

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVersion(t *testing.T) {
	t.Parallel()

	t.Run("FromBuildInfo", func(t *testing.T) {
		t.Parallel()

		info := &debug.BuildInfo{
			GoVersion: "go1.26.8",
			Main:      debug.Module{Path: "github.com/tributary-go/tributary", Version: "v0.2.0"},
			Deps:      []*debug.Module{{Path: "github.com/riverqueue/river", Version: "v0.51.1"}, {Path: "github.com/riverqueue/river/rivertype", Version: "v0.51.1"}},
			Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "28a97d7d1e0f7a2c8f0b1d5e6a7c8b9d0e1f2a3b"},
				{Key: "vcs.time", Value: "2026-11-25T10:00:00Z"},
				{Key: "vcs.modified", Value: "true"},
			},
		}
		v := versionFrom(info, "", "")
		require.Equal(t, "v0.2.0", v.Version)
		require.Equal(t, "v0.51.1", v.River)
		require.Equal(t, "go1.26.8", v.Go)

		var out strings.Builder
		require.NoError(t, printVersion(&out, v, false))
		require.Regexp(t, `^tributary v0.2.0
  commit: 28a97d7d1e0f7a2c8f0b1d5e6a7c8b9d0e1f2a3b \(2026-11-25T10:00:00Z\), with uncommitted changes
  river:  v0.51.1
  go:     go1.26.8 \w+/\w+
$`, out.String())

		// The linker's values win: a container build has no .git to stamp from.
		v = versionFrom(info, "v0.3.0", "0123456789abcdef")
		require.Equal(t, "v0.3.0", v.Version)
		require.Equal(t, "0123456789abcdef", v.Commit)
		require.Nil(t, v.CommitTime)
		require.False(t, v.Modified)

		// A module download records no commit; the output says so.
		v = versionFrom(&debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, "", "")
		out.Reset()
		require.NoError(t, printVersion(&out, v, false))
		require.Contains(t, out.String(), "  commit: (not recorded: built from a module download or without VCS information)\n")
		require.Contains(t, out.String(), "  river:  (unknown)\n")
	})

	t.Run("Command", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "version")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		// A test binary's build info lists no dependencies, so River's
		// version is looked for in a built binary, by cmd/tributary's tests.
		require.Regexp(t, `^tributary \S+\n  commit: .*\n  river:  .+\n  go:     go1\.\d+`, res.stdout)
		require.Equal(t, res, runCLI(t, nil, "--version"))
		require.Equal(t, res, runCLI(t, nil, "-version"))

		res = runCLI(t, nil, "version", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &v))
		require.Contains(t, v, "version")
		require.Contains(t, v, "river")

		requireFailed(t, runCLI(t, nil, "version", "now"), ExitUsage, `tributary: unexpected argument "now"; see 'tributary version --help'`)
	})
}
