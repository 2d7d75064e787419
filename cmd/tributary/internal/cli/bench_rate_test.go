package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestBenchRate(t *testing.T) {
	t.Parallel()
	// Its two cases run at once, each with clients and pools of their own:
	// one at a time with the other tests that hold many connections of the
	// shared test server (max_connections 100 in CI).
	testdb.ManyConnections(t)

	// The bench makes a schema of its own: it needs only the server. Four
	// workers keep its connections few on a shared test server.
	vars := map[string]string{"DATABASE_URL": testdb.ServerURL(t)}
	small := []string{"bench", "rate", "--rate", "20", "--duration", "3s", "--clients", "2", "--workers", "4"}
	const progress = `\ARate 20 a second for one tenant, 2 clients of 4 workers: 72 runs… started; working 3s… [0-9]+ starts, [0-9.]+ a second, at most [0-9]+ in a second\n\z`

	t.Run("Table", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, vars, small...)
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, progress, res.stderr)
		require.Regexp(t, `\A`+
			`PostgreSQL \S.*, a rate of 20 a second for one tenant over 3s, 2 clients of 4 workers, 72 runs started up front\n\n`+
			`Starts: +[0-9]+\n`+
			`Starts per second: +[0-9]+\.[0-9] +\(target 20 ± 10 %\) +(ok|MISSED)\n`+
			`Most in any second: +[0-9]+ +\(target ≤ 22\) +(ok|MISSED)\n`+
			`Fewest in any second: +[0-9]+\n`+
			`Whole seconds over 22: +[0-3] +\(of 3\)\n`+
			`Starts of each second: +[0-9]+ [0-9]+ [0-9]+\n`+
			`Starts of each client: +[0-9]+ [0-9]+\n\z`, res.stdout)
	})

	t.Run("JSON", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, vars, append(small, "--json")...)
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, progress, res.stderr)

		// The documented shape of bench rate --json, field for field.
		var out struct {
			Rate              int     `json:"rate"`
			Duration          float64 `json:"duration_s"`
			Clients           int     `json:"clients"`
			Workers           int     `json:"workers"`
			Backlog           int     `json:"backlog"`
			Starts            int     `json:"starts"`
			StartsPerSecond   float64 `json:"starts_per_second"`
			MaxInAnySecond    int     `json:"max_in_any_second"`
			MinInAnySecond    int     `json:"min_in_any_second"`
			PerSecond         []int   `json:"per_second"`
			SecondsOverLimit  int     `json:"seconds_over_limit"`
			PerClient         []int   `json:"per_client"`
			StartsPerSecondOK bool    `json:"starts_per_second_ok"`
			MaxOK             bool    `json:"max_ok"`
			Server            string  `json:"server"`
		}
		dec := json.NewDecoder(strings.NewReader(res.stdout))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&out), res.stdout)
		require.Equal(t, 20, out.Rate)
		require.InDelta(t, 3.0, out.Duration, 1e-9)
		require.Equal(t, 2, out.Clients)
		require.Equal(t, 4, out.Workers)
		require.Equal(t, 72, out.Backlog)
		require.NotEmpty(t, out.Server)
		require.Positive(t, out.Starts)
		require.InDelta(t, float64(out.Starts)/3, out.StartsPerSecond, 1e-9)
		require.LessOrEqual(t, out.MinInAnySecond, out.MaxInAnySecond)
		require.GreaterOrEqual(t, float64(out.MaxInAnySecond), out.StartsPerSecond*0.5)
		require.Len(t, out.PerSecond, 3)
		require.Len(t, out.PerClient, 2)
		require.Equal(t, out.Starts, out.PerClient[0]+out.PerClient[1])
	})
}

func TestBenchRateFailures(t *testing.T) {
	t.Parallel()

	runFailureCases(t, []string{"bench", "rate"}, []failureCase{
		{name: "NoRate", args: []string{"--rate", "0"}, code: ExitUsage,
			stderr: "tributary: --rate must be at least 1, not 0; leave it out for 50"},
		{name: "NoClients", args: []string{"--clients", "0"}, code: ExitUsage,
			stderr: "tributary: --clients must be at least 1, not 0; leave it out for 3"},
		{name: "NoWorkers", args: []string{"--workers", "0"}, code: ExitUsage,
			stderr: "tributary: --workers must be at least 1, not 0; leave it out for 20"},
		{name: "ShortDuration", args: []string{"--duration", "500ms"}, code: ExitUsage,
			stderr: "tributary: --duration is 500ms; give a duration of at least 1s, such as 30s; see 'tributary bench rate --help'"},
		{name: "UnexpectedArgument", args: []string{"now"}, code: ExitUsage,
			stderr: "tributary: unexpected argument \"now\"; see 'tributary bench rate --help'"},
	})
}
