package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// listRuns runs `workflow list --json` with args.
func listRuns(t *testing.T, vars map[string]string, args ...string) []*wire.Run {
	t.Helper()

	res := runCLI(t, vars, append([]string{"workflow", "list", "--json"}, args...)...)
	require.Equal(t, ExitOK, res.code, res.stderr)
	var page wire.RunList
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &page))
	return page.Runs
}

// TestRunTenantCommands: workflow start --tenant gives a run its tenant,
// which get prints and list shows and filters on; a bad --tenant is
// refused in the flag's words before anything is written.
func TestRunTenantCommands(t *testing.T) {
	t.Parallel()

	_, vars := migratedDB(t)

	res := runCLI(t, vars, "workflow", "start", "send_report", "--tenant", "acme", "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var acme wire.Run
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &acme))
	require.Equal(t, "acme", acme.Tenant)
	require.Contains(t, res.stdout, `"tenant": "acme"`)
	res = runCLI(t, vars, "workflow", "start", "send_report")
	require.Equal(t, ExitOK, res.code, res.stderr)
	none := uuid.MustParse(strings.TrimSpace(res.stdout))

	res = runCLI(t, vars, "workflow", "get", acme.ID.String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `\nType: +send_report\nTenant: +acme\nStatus: +pending\n`, res.stdout)
	res = runCLI(t, vars, "workflow", "get", none.String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.NotContains(t, res.stdout, "Tenant:")

	res = runCLI(t, vars, "workflow", "list")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `^ID +TYPE +TENANT +STATUS +ATTEMPT +CREATED +FINISHED +ERROR\n`+
		none.String()+` +send_report +- +pending +0/10 +[^\n]+\n`+
		acme.ID.String()+` +send_report +acme +pending +0/10 +[^\n]+\n$`, res.stdout)

	runs := listRuns(t, vars, "--tenant", "acme")
	require.Len(t, runs, 1)
	require.Equal(t, acme.ID, runs[0].ID)
	require.Empty(t, listRuns(t, vars, "--tenant", "globex"))

	for _, args := range [][]string{
		{"workflow", "start", "send_report", "--tenant", " acme"},
		{"workflow", "list", "--tenant", " acme"},
	} {
		res = runCLI(t, vars, args...)
		requireFailed(t, res, ExitUsage, `tributary: --tenant " acme" has a space at an end; trim it`)
	}
	res = runCLI(t, vars, "workflow", "start", "send_report", "--tenant", strings.Repeat("t", 101))
	requireFailed(t, res, ExitUsage, "tributary: --tenant is 101 bytes, the limit is 100; use a shorter name, such as an id")
	res = runCLI(t, vars, "workflow", "start", "send_report", "--tenant", "tab\there")
	requireFailed(t, res, ExitUsage, `tributary: --tenant "tab\there" holds U+0009, which cannot be shown; use printable characters`)
	require.Len(t, listRuns(t, vars), 2, "nothing was started")
}

// TestScheduleTenantCommands: schedule create and update --tenant set the
// tenant of a schedule's runs; get and list show the one that applies
// (the owner's when none is set); a trigger's run carries it.
func TestScheduleTenantCommands(t *testing.T) {
	t.Parallel()

	_, vars := migratedDB(t)
	base := []string{"--cron", "0 8 * * *", "--workflow", "digest"}

	owners := createSchedule(t, vars, append([]string{"--name", "owner's", "--owner", "user-42"}, base...)...)
	set := createSchedule(t, vars, append([]string{"--name", "set", "--owner", "user-42", "--tenant", "acme-eu"}, base...)...)
	noOwner := createSchedule(t, vars, append([]string{"--name", "no owner"}, base...)...)

	for _, tc := range []struct {
		id                      uuid.UUID
		tenant, runTenant, text string
	}{
		{owners, "", "user-42", "user-42 (the owner)"},
		{set, "acme-eu", "acme-eu", "acme-eu"},
		{noOwner, "", "", "none (the schedule has neither an owner nor a tenant)"},
	} {
		s := getSchedule(t, vars, tc.id)
		require.Equal(t, tc.tenant, s.Tenant)
		require.Equal(t, tc.runTenant, s.RunTenant)
		res := runCLI(t, vars, "schedule", "get", tc.id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Contains(t, res.stdout, "\nRun tenant:       "+tc.text+"\n")
	}
	res := runCLI(t, vars, "schedule", "get", "--json", set.String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, `"tenant": "acme-eu"`)
	require.Contains(t, res.stdout, `"run_tenant": "acme-eu"`)

	res = runCLI(t, vars, "schedule", "list", "--owner", "user-42")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `^ID +NAME +OWNER +KEY +TENANT +WORKFLOW +CRON +ZONE +NEXT +RUNS +FAILURES +PAUSED\n`+
		set.String()+` +set +user-42 +- +acme-eu +digest +[^\n]+\n`+
		owners.String()+` +owner's +user-42 +- +user-42 \(the owner\) +digest +[^\n]+\n$`, res.stdout)
	res = runCLI(t, vars, "schedule", "list", "--owner", "user-42", "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var listed wire.ScheduleList
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &listed))
	require.Equal(t, "acme-eu", listed.Schedules[0].Tenant)
	require.Empty(t, listed.Schedules[1].Tenant)
	require.Equal(t, "user-42", listed.Schedules[1].RunTenant, "the owner's")

	// Update: a tenant, then the owner's again; a trigger's run carries
	// the one that applies.
	trigger := func(id uuid.UUID) uuid.UUID {
		t.Helper()
		res := runCLI(t, vars, "schedule", "trigger", id.String(), "--overlap", "allow")
		require.Equal(t, ExitOK, res.code, res.stderr)
		return uuid.MustParse(strings.TrimSpace(res.stdout))
	}
	res = runCLI(t, vars, "schedule", "update", owners.String(), "--tenant", "team-7", "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, `"tenant": "team-7"`)
	require.Equal(t, "team-7", getSchedule(t, vars, owners).RunTenant)
	team7 := trigger(owners)
	res = runCLI(t, vars, "schedule", "update", owners.String(), "--tenant", "")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "user-42", getSchedule(t, vars, owners).RunTenant)
	user42 := trigger(owners)
	require.Equal(t, []uuid.UUID{team7}, runIDs(listRuns(t, vars, "--tenant", "team-7")))
	require.Equal(t, []uuid.UUID{user42}, runIDs(listRuns(t, vars, "--tenant", "user-42")))

	// A bad --tenant: refused before anything is written.
	res = runCLI(t, vars, append([]string{"schedule", "create", "--name", "bad", "--owner", "bad-tenant", "--tenant", "a\x00b"}, base...)...)
	requireFailed(t, res, ExitUsage, `tributary: --tenant "a\x00b" holds U+0000, which cannot be shown; use printable characters`)
	require.Empty(t, listScheduleIDs(t, vars, "--owner", "bad-tenant"))
	res = runCLI(t, vars, "schedule", "update", set.String(), "--tenant", "acme ")
	requireFailed(t, res, ExitUsage, `tributary: --tenant "acme " has a space at an end; trim it`)
	require.Equal(t, "acme-eu", getSchedule(t, vars, set).Tenant)

	// A key's spec includes its tenant: the conflict names --tenant and
	// the update that gives the stored schedule this one.
	keyArgs := append([]string{"--key", "digest", "--owner", "user-7", "--name", "digest"}, base...)
	id := createSchedule(t, vars, keyArgs...)
	res = runCLI(t, vars, append([]string{"schedule", "create", "--tenant", "acme"}, keyArgs...)...)
	requireFailed(t, res, ExitError, `tributary: key "digest" of owner "user-7" is schedule `+id.String()+
		` already, whose spec differs (stored → given): --tenant "" → "acme"; pass another --key for a new schedule, `+
		`or give that one this spec with: tributary schedule update digest --owner user-7 --tenant acme`)
}

func runIDs(runs []*wire.Run) []uuid.UUID {
	out := []uuid.UUID{}
	for _, run := range runs {
		out = append(out, run.ID)
	}
	return out
}

// TestRunTenantText: what get and list say of a schedule's run tenant.
func TestRunTenantText(t *testing.T) {
	t.Parallel()

	id := uuid.MustParse("01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e")
	long := strings.Repeat("o", workflow.MaxTenantBytes+1)
	for _, tc := range []struct {
		s            *schedule.Schedule
		text, detail string
	}{
		{&schedule.Schedule{ID: id, Owner: "acme"}, "acme (the owner)", "acme (the owner)"},
		{&schedule.Schedule{ID: id, Owner: "acme", Tenant: "globex"}, "globex", "globex"},
		{&schedule.Schedule{ID: id, Tenant: "globex"}, "globex", "globex"},
		{&schedule.Schedule{ID: id}, "-", "none (the schedule has neither an owner nor a tenant)"},
		{&schedule.Schedule{ID: id, Owner: long, Key: "digest"}, "-",
			"none (the owner is not a valid tenant name, which is 1 to 100 bytes of printable characters with no space at either end; " +
				"give its runs one with 'tributary schedule update digest --owner " + long + " --tenant <tenant>')"},
	} {
		require.Equal(t, tc.text, runTenantText(tc.s))
		require.Equal(t, tc.detail, runTenantDetail(tc.s))
	}
}
