package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestJSONFlagFromFileAndStdin: an input too big for a command line is
// read from a file (--input @path) or from standard input (--input -), and
// one that is not JSON says where it was read from.
func TestJSONFlagFromFileAndStdin(t *testing.T) {
	t.Parallel()

	_, vars := migratedDB(t)
	big, err := json.Marshal(map[string]string{"blob": strings.Repeat("x", 600_000)}) // too long for one argument of most shells
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "input.json")
	require.NoError(t, os.WriteFile(path, big, 0o600))

	fromFile := createSchedule(t, vars, "--name", "from a file", "--cron", "0 9 * * *", "--workflow", "report", "--input", "@"+path)
	require.JSONEq(t, string(big), string(getSchedule(t, vars, fromFile).Input))

	var stdout, stderr bytes.Buffer
	env := testEnv(vars, &stdout, &stderr)
	env.Stdin = bytes.NewReader(big)
	code := Main(context.Background(), []string{"schedule", "create", "--name", "from stdin", "--cron", "0 9 * * *", "--workflow", "report", "--input", "-"}, env)
	require.Equal(t, ExitOK, code, stderr.String())
	fromStdin, err := uuid.Parse(strings.TrimSpace(stdout.String()))
	require.NoError(t, err)
	require.JSONEq(t, string(big), string(getSchedule(t, vars, fromStdin).Input))

	// A missing file, and a file that is not JSON.
	res := runCLI(t, vars, "schedule", "create", "--name", "x", "--cron", "0 9 * * *", "--workflow", "report", "--input", "@"+path+".missing")
	require.Equal(t, ExitUsage, res.code)
	require.Contains(t, res.stderr, "--input @"+path+".missing: open "+path+".missing: no such file or directory; pass @ and the path of a file holding a JSON value")
	require.NoError(t, os.WriteFile(path, []byte("{to: ops}"), 0o600))
	res = runCLI(t, vars, "schedule", "create", "--name", "x", "--cron", "0 9 * * *", "--workflow", "report", "--input", "@"+path)
	require.Equal(t, ExitUsage, res.code)
	require.Contains(t, res.stderr, "--input is not valid JSON (read from "+path+"): {to: ops}")
}
