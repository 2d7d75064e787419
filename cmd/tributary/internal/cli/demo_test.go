package cli

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestDemo(t *testing.T) {
	t.Parallel()

	// The demo migrates the database itself, and falls back to a free port
	// when its address is taken.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	vars := dbVars(testdb.NewEmpty(t))
	vars["TRIBUTARY_ADDR"] = taken.Addr().String()

	// The demo pauses once it has printed its URLs, while the UI serves.
	demo := startCLI(t, vars, regexp.MustCompile(`Dashboard: (http://127\.0\.0\.1:\d+)/\n(?s:.*)Waiting run: (\S+/runs/(\S+))`), "demo", "--once")
	match := demo.Paused(t)
	base, waitingPage, waitingID := match[1], match[2], match[3]
	for _, url := range []string{base + "/", base + "/api/runs", base + "/api/schedules", base + "/riverui/", waitingPage} {
		status, body := httpGet(t, url, "")
		require.Equal(t, http.StatusOK, status, "%s: %s", url, body)
	}
	_, body := httpGet(t, base+"/api/runs/"+waitingID, "")
	require.Contains(t, body, `"status":"waiting"`)
	// The demo's runs show on /metrics: the onboarding runs and the fork
	// of one completed, the charge failed and failed again when the bulk
	// retry retried it, their steps ran.
	status, body := httpGet(t, base+"/metrics", "")
	require.Equal(t, http.StatusOK, status, body)
	require.Regexp(t, `(?m)^tributary_runs_finished_total\{[^}]*outcome="completed"[^}]*workflow="demo_onboard"\} 4$`, body)
	require.Regexp(t, `(?m)^tributary_runs_finished_total\{[^}]*outcome="failed"[^}]*workflow="demo_charge"\} 2$`, body)
	require.Regexp(t, `(?m)^tributary_workflow_step_executions_total\{[^}]*outcome="error"[^}]*step="charge_card"[^}]*\} 2$`, body)
	status, _ = httpGet(t, base+"/readyz", "")
	require.Equal(t, http.StatusOK, status)
	// The demo tenant's exports: one works, the others are held, on the
	// tenants page and through the command printed.
	held := regexp.MustCompile(`\nHeld runs \(tenant demo-tenant, for about 12s\): (\S+/tenants), or DATABASE_URL=(\S+) tributary tenants --schema (\S+)\n`).
		FindStringSubmatch(demo.stdout.String())
	require.NotNil(t, held, demo.stdout.String())
	status, body = httpGet(t, held[1], "")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `data-tenant="demo-tenant"`)
	// The URL and schema as a shell reads them: quoted, with no quote inside.
	res := runCLI(t, map[string]string{"DATABASE_URL": strings.Trim(held[2], "'")}, "tenants", "--schema", strings.Trim(held[3], "'"), "--tenant", "demo-tenant")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `\ndemo_tenant_export +demo-tenant +1 +0 +2 +0 +1 \(type\) +-\n$`, res.stdout)
	demo.Resume()

	require.Equal(t, ExitOK, demo.wait(t), demo.stderr.String())
	out := demo.stdout.String()
	t.Logf("demo --once:\n%s", out)
	require.Regexp(t, `(?m)^migrating: River's migrations first, then Tributary's…\napplied river 001_create_river_migration \(\d.*\)$`, out)
	require.Regexp(t, `(?m)^applied 002_schedules \(\d.*\)$`, out)
	require.Contains(t, out, "Welcome aboard, Ada")
	require.Regexp(t, `(?m)^   run \S+ failed in step charge_card: card declined for coffee machine \(90\): insufficient funds$`, out)
	require.Contains(t, out, "Metrics:   "+base+"/metrics (Prometheus); health: "+base+"/healthz, "+base+"/readyz\n")
	require.Regexp(t, `(?m)^   demo-heartbeat +\*/10 \* \* \* \* \* +UTC +next .* owner platform-team$`, out)
	require.Contains(t, out, "tributary workflow signal "+waitingID+` decision --payload '{"approved": true, "by": "you"}' --schema `+vars["TRIBUTARY_SCHEMA"]+"\n")
	require.Contains(t, out, "curl -X POST "+base+"/api/runs/"+waitingID+"/signal -d ")
	// Other schedules may fire in the same second (the Tokyo report does at
	// 00:00 UTC), so the heartbeat's lines are looked for one by one.
	require.Regexp(t, `(?m)^\d\d:\d\d:\d\d  run \S+  demo-heartbeat fired its \d\d:\d\d:\d0 slot$`, out)
	require.Regexp(t, `(?m)^\d\d:\d\d:\d\d  run \S+  demo_heartbeat completed in \d+m?s: "accounts-db healthy, 3 accounts"$`, out)
	require.True(t, strings.HasSuffix(out, "\nStopped.\n"), "the demo stops after the heartbeat: %q", out)
	require.Equal(t, "tributary: "+taken.Addr().String()+" is in use (another tributary serve or demo?); serving on "+base[len("http://"):]+" instead\n",
		demo.stderr.String())
}

func TestDemoUsage(t *testing.T) {
	t.Parallel()

	runFailureCases(t, []string{"demo"}, []failureCase{
		{
			name: "BadDatabaseURL", vars: map[string]string{"DATABASE_URL": "postgres://x:y@127.0.0.1:notaport/db"},
			args: []string{"--addr", "127.0.0.1:0"}, code: ExitError,
			stderr: `re:^tributary: invalid database URL: .*; use a URL like postgres://user:password@localhost:5432/app$`,
		},
		{
			name: "UnreachableDatabase", vars: map[string]string{"DATABASE_URL": "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=1"},
			args: []string{"--addr", "127.0.0.1:0"}, code: ExitError,
			stderr: `re:^tributary: connecting to the database: .*; check the database URL and that Postgres is running$`,
		},
		{
			name: "AddressWithoutPort", args: []string{"--addr", "127.0.0.1"}, code: ExitUsage,
			stderr: `tributary: --addr "127.0.0.1" is not a host:port address; pass an address like 127.0.0.1:8080, or :8080 for every interface`,
		},
		{
			name: "BadPort", vars: map[string]string{"TRIBUTARY_ADDR": "localhost:99999"}, code: ExitUsage,
			stderr: `tributary: --addr "localhost:99999": "99999" is not a port; pass an address like 127.0.0.1:8080, with a port from 0 (any free one) to 65535`,
		},
		{name: "UnexpectedArgument", args: []string{"now"}, code: ExitUsage, stderr: `tributary: unexpected argument "now"; see 'tributary demo --help'`},
	})
}

func TestDemoCommandsAsPrinted(t *testing.T) {
	t.Parallel()

	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash is not installed; the printed commands are run by bash: %v", err)
	}

	// startDemo runs the demo on a schema of its own, with a token, until
	// it has printed the commands that signal its waiting run: the CLI's
	// and the API's.
	startDemo := func(t *testing.T) (vars map[string]string, cliLine, curlLine string) {
		t.Helper()
		vars = dbVars(testdb.NewEmpty(t))
		vars["TRIBUTARY_ADDR"] = "127.0.0.1:0"
		vars["TRIBUTARY_TOKEN"] = "demo-token"
		demo := startCLI(t, vars, regexp.MustCompile(`(?s)Send it from another terminal:\n  ([^\n]+)\nor over the API, with TRIBUTARY_TOKEN set to the demo's token:\n  ([^\n]+)\n`), "demo")
		match := demo.Paused(t)
		demo.Resume()
		t.Cleanup(func() { require.Equal(t, ExitOK, demo.Stop(t), demo.stderr.String()) })
		return vars, match[1], match[2]
	}

	t.Run("CLI", func(t *testing.T) {
		t.Parallel()

		vars, line, _ := startDemo(t)
		// bash parses the line as a person's shell would; a function named
		// tributary hands the words and DATABASE_URL back, and they run
		// in-process. Nothing else of this process's environment is used.
		out, err := exec.CommandContext(t.Context(), "bash", "--norc", "--noprofile", "-c",
			`tributary() { printf '%s\0' "DATABASE_URL=$DATABASE_URL" "$@"; }; `+line).Output()
		require.NoError(t, err, line)
		words := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		url, ok := strings.CutPrefix(words[0], "DATABASE_URL=")
		require.True(t, ok)
		require.Equal(t, vars["DATABASE_URL"], url, "the line names the demo's database: %s", line)

		res := runCLI(t, map[string]string{"DATABASE_URL": url}, words[1:]...)
		require.Equal(t, ExitOK, res.code, "%s: %s", line, res.stderr)
		require.Regexp(t, `^sent signal "decision" to run \S+`, res.stdout)
	})

	t.Run("API", func(t *testing.T) {
		t.Parallel()

		_, _, line := startDemo(t)
		if _, err := exec.LookPath("curl"); err != nil {
			t.Fatalf("curl is not installed; the printed API call runs curl: %v", err)
		}
		cmd := exec.CommandContext(t.Context(), "bash", "--norc", "--noprofile", "-c", line+" --silent --show-error --fail-with-body")
		cmd.Env = append(os.Environ(), "TRIBUTARY_TOKEN=demo-token")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s", line, out)
		// The API answers with the signalled run.
		id := regexp.MustCompile(`/api/runs/([^/]+)/signal `).FindStringSubmatch(line)
		require.NotNil(t, id, line)
		require.Contains(t, string(out), `"id":"`+id[1]+`"`)
		require.Contains(t, string(out), `"type":"demo_approval"`)
	})
}
