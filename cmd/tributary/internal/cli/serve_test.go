package cli

import (
	"encoding/json"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestServe(t *testing.T) {
	t.Parallel()

	_, vars := migratedDB(t)
	vars["TRIBUTARY_TOKEN"] = "s3cret"
	createSchedule(t, vars, "--name", "nightly", "--cron", "0 2 * * *", "--workflow", "report")

	serve := startCLI(t, vars, regexp.MustCompile(`Dashboard: (http://127\.0\.0\.1:\d+)/\n`), "serve", "--addr", "127.0.0.1:0", "--queues", "default=2")
	base := serve.Paused(t)[1]
	serve.Resume()
	require.Contains(t, serve.stdout.String(), "River UI:  "+base+"/riverui/\n")

	status, _ := httpGet(t, base+"/api/schedules", "")
	require.Equal(t, http.StatusUnauthorized, status)
	status, body := httpGet(t, base+"/api/schedules", "Bearer s3cret")
	require.Equal(t, http.StatusOK, status, body)
	var list struct {
		Schedules []struct {
			Name string `json:"name"`
		} `json:"schedules"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &list))
	require.Len(t, list.Schedules, 1)
	require.Equal(t, "nightly", list.Schedules[0].Name)

	require.Equal(t, ExitOK, serve.Stop(t), serve.stderr.String())
	require.True(t, strings.HasSuffix(serve.stdout.String(), "Stopped.\n"), serve.stdout.String())
	require.Empty(t, serve.stderr.String())
}

func TestServeAddressInUse(t *testing.T) {
	t.Parallel()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()

	_, vars := migratedDB(t)
	vars["TRIBUTARY_ADDR"] = ln.Addr().String()
	requireFailed(t, runCLI(t, vars, "serve"), ExitError, "tributary: listening on "+ln.Addr().String()+
		": the address is in use; stop what listens there, or pick a free address with --addr or TRIBUTARY_ADDR")
}

func TestServeNotMigrated(t *testing.T) {
	t.Parallel()

	res := runCLI(t, dbVars(testdb.NewEmpty(t)), "serve", "--addr", "127.0.0.1:0")
	requireFailed(t, res, ExitError, "re:^tributary: the database is not migrated: River is at version 0 of \\d+, 001_workflows is not applied, .*; run 'tributary migrate up' first$")
}

func TestParseQueues(t *testing.T) {
	t.Parallel()

	queues, err := parseQueues("default=20, reports=5")
	require.NoError(t, err)
	require.Equal(t, 20, queues["default"].MaxWorkers)
	require.Equal(t, 5, queues["reports"].MaxWorkers)

	for _, bad := range []string{"", "default", "default=0", "=3", "default=x", "a=1,a=2"} {
		_, err := parseQueues(bad)
		require.Error(t, err, bad)
	}

	res := runCLI(t, nil, "serve", "--queues", "default=none")
	requireFailed(t, res, ExitUsage, `tributary: --queues: "default=none" is not name=workers with 1 to 10000 workers; pass --queues like default=20 or default=20,reports=5`)
}
