package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

// TestGrantCommands: a grant created, listed, inspected with the
// schedule under it (warned when it expires before the schedule's next
// slot), revoked; and the errors.
func TestGrantCommands(t *testing.T) {
	t.Parallel()

	_, vars := migratedDB(t)

	res := runCLI(t, vars, "grant", "create", "--subject", "user-42", "--scope", "workflow:execute:send_report", "--expires-in", "1h")
	require.Equal(t, ExitOK, res.code, res.stderr)
	id := uuid.MustParse(strings.TrimSpace(res.stdout))

	res = runCLI(t, vars, "grant", "list", "--subject", "user-42")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `^ID +SUBJECT +SCOPES +STATE +EXPIRES +CREATED\n`+id.String()+` +user-42 +workflow:execute:send_report +active +\S+Z +\S+Z\n$`, res.stdout)

	// A daily schedule under it: its next slot may come after the grant
	// expires (in an hour), and get says so.
	sid := createSchedule(t, vars, "--name", "report", "--cron", "0 0 1 1 *", "--workflow", "send_report", "--owner", "grants", "--grant", id.String())
	res = runCLI(t, vars, "grant", "get", id.String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, "Subject:    user-42\nScopes:     workflow:execute:send_report\nState:      active\n")
	require.Regexp(t, sid.String()+` +report +send_report +\S+Z +warning: the grant expires before this slot, which will be skipped\n`, res.stdout)
	res = runCLI(t, vars, "grant", "get", id.String(), "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var got struct {
		schedule.Grant
		Schedules []uuid.UUID `json:"schedules"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &got))
	require.Equal(t, []uuid.UUID{sid}, got.Schedules)
	require.Equal(t, "user-42", got.Subject)

	res = runCLI(t, vars, "grant", "revoke", id.String(), "--reason", "user left", "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var revoked schedule.Grant
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &revoked))
	require.NotNil(t, revoked.RevokedAt)
	require.Equal(t, "user left", revoked.RevokeReason)
	res = runCLI(t, vars, "grant", "list", "--subject", "user-42")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "no grants\n", res.stdout, "revoked grants are left out by default")
	res = runCLI(t, vars, "grant", "list", "--subject", "user-42", "--revoked")
	require.Contains(t, res.stdout, " revoked ")
	res = runCLI(t, vars, "grant", "get", id.String())
	require.Contains(t, res.stdout, "State:      revoked\n")
	require.Contains(t, res.stdout, "grant revoked")

	// Errors.
	res = runCLI(t, vars, "grant", "create", "--scope", "*")
	require.Equal(t, ExitUsage, res.code)
	require.Equal(t, "tributary: grant create needs --subject; name who the runs act for, e.g. --subject user-42\n", res.stderr)
	res = runCLI(t, vars, "grant", "create", "--subject", "x")
	require.Equal(t, ExitUsage, res.code)
	require.Contains(t, res.stderr, "grant create needs --scope")
	res = runCLI(t, vars, "grant", "get", "nope")
	require.Equal(t, ExitUsage, res.code)
	require.Contains(t, res.stderr, `<id> "nope" is not a grant id`)
	missing := uuid.Must(uuid.NewV7())
	res = runCLI(t, vars, "grant", "revoke", missing.String())
	require.Equal(t, ExitError, res.code)
	require.Equal(t, "tributary: no grant "+missing.String()+"; see 'tributary grant list'\n", res.stderr)
}
