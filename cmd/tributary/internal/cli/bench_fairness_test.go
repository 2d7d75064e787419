package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestBenchFairness(t *testing.T) {
	t.Parallel()
	// Its two cases run at once, each with clients and pools of their own:
	// one at a time with the other tests that hold many connections of the
	// shared test server (max_connections 100 in CI).
	testdb.ManyConnections(t)

	// The bench makes schemas of its own: it needs only the server. Four
	// workers keep its connections few on a shared test server.
	vars := map[string]string{"DATABASE_URL": testdb.ServerURL(t)}
	small := []string{"bench", "fairness", "--big", "200", "--small", "5", "--delay", "200ms", "--step", "20ms", "--workers", "4"}

	t.Run("Table", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, vars, small...)
		require.Equal(t, ExitOK, res.code, res.stderr)

		const s = `[0-9]+\.[0-9]{2} s`
		require.Regexp(t, `\A`+
			`No keys \(River's order\): 200 runs of A, 5 of B 200ms later… B p99 `+s+`, A makespan [0-9.]+ s\n`+
			`Keys A and B \(fair turns\): 200 runs of A, 5 of B 200ms later… B p99 `+s+`, A makespan [0-9.]+ s\n\z`, res.stderr)
		require.Regexp(t, `\A`+
			`PostgreSQL \S.*, 200 runs of key A, 5 of key B 200ms later, 20ms steps, 4 workers, 1 round\n\n`+
			`CASE +A BEFORE B +B P50 +B P99 +B MAX +A MAKESPAN +A IN STEP \(MAX\) +LIMIT VIOLATIONS\n`+
			`No keys \(River's order\) +[0-9]+ +`+s+` +`+s+` +`+s+` +[0-9.]+ s +[1-4] +-\n`+
			`Keys A and B \(fair turns\) +[0-9]+ +`+s+` +`+s+` +`+s+` +[0-9.]+ s +[1-4] +-\n\n`+
			`B p99 with keys: +`+s+` +\(`+s+` without; target ≤ 2s\) +(ok|MISSED)\n`+
			`A makespan with keys / without: +[0-9]+\.[0-9]{2} +\(target ≤ 1\.10\) +(ok|MISSED)\n\z`, res.stdout)
	})

	t.Run("JSONLimit", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, vars, append(small, "--limit", "2", "--json")...)
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, 3, strings.Count(res.stderr, "\n"), res.stderr)
		require.Contains(t, res.stderr, "Keys A and B, limit 2: 200 runs of A, 5 of B 200ms later… ")

		// The documented shape of bench fairness --json, field for field.
		var out struct {
			SmallKeyP99           float64   `json:"small_key_p99_s"`
			SmallKeyP99Unkeyed    float64   `json:"small_key_p99_s_unkeyed"`
			BigKeyMakespan        float64   `json:"big_key_makespan_s"`
			BigKeyMakespanUnkeyed float64   `json:"big_key_makespan_s_unkeyed"`
			BigKeySlowdown        float64   `json:"big_key_slowdown"`
			LimitViolations       int       `json:"limit_violations"`
			Limit                 int       `json:"limit"`
			SmallKeyOK            bool      `json:"small_key_ok"`
			BigKeyOK              bool      `json:"big_key_ok"`
			Big                   int       `json:"big"`
			Small                 int       `json:"small"`
			Delay                 float64   `json:"delay_s"`
			Step                  float64   `json:"step_s"`
			Workers               int       `json:"workers"`
			Rounds                int       `json:"rounds"`
			SmallKeyP99s          []float64 `json:"small_key_p99s_s"`
			BigKeySlowdowns       []float64 `json:"big_key_slowdowns"`
			Cases                 []struct {
				Case      string `json:"case"`
				Name      string `json:"name"`
				Round     int    `json:"round"`
				Completed int    `json:"completed"`
				SmallKey  struct {
					P50 float64 `json:"p50_s"`
					P99 float64 `json:"p99_s"`
					Max float64 `json:"max_s"`
				} `json:"small_key"`
				BigKeyMakespan  float64 `json:"big_key_makespan_s"`
				SmallKeyStart   float64 `json:"small_key_start_s"`
				BigKeyBefore    int     `json:"big_key_started_before_small"`
				BigKeyMaxInStep int     `json:"big_key_max_in_step"`
				LimitViolations int     `json:"limit_violations"`
			} `json:"cases"`
			Server string `json:"server"`
		}
		dec := json.NewDecoder(strings.NewReader(res.stdout))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&out), res.stdout)
		require.Equal(t, 200, out.Big)
		require.Equal(t, 5, out.Small)
		require.Equal(t, 4, out.Workers)
		require.Equal(t, 2, out.Limit)
		require.Equal(t, 1, out.Rounds)
		require.Equal(t, []float64{out.SmallKeyP99}, out.SmallKeyP99s)
		require.Equal(t, []float64{out.BigKeySlowdown}, out.BigKeySlowdowns)
		require.InDelta(t, 0.2, out.Delay, 1e-9)
		require.InDelta(t, 0.02, out.Step, 1e-9)
		require.NotEmpty(t, out.Server)
		require.Zero(t, out.LimitViolations)
		require.Positive(t, out.SmallKeyP99)
		require.Positive(t, out.SmallKeyP99Unkeyed)
		require.Positive(t, out.BigKeySlowdown)
		require.Len(t, out.Cases, 3)
		for i, key := range []string{"unkeyed", "keyed", "keyed_limited"} {
			c := out.Cases[i]
			require.Equal(t, key, c.Case)
			require.Equal(t, 1, c.Round)
			require.Equal(t, 205, c.Completed, key)
			require.Positive(t, c.BigKeyMakespan, key)
			require.LessOrEqual(t, c.SmallKey.P50, c.SmallKey.Max, key)
		}
		require.LessOrEqual(t, out.Cases[2].BigKeyMaxInStep, 2)
	})
}

func TestBenchFairnessFailures(t *testing.T) {
	t.Parallel()

	runFailureCases(t, []string{"bench", "fairness"}, []failureCase{
		{name: "NoBig", args: []string{"--big", "0"}, code: ExitUsage,
			stderr: "tributary: --big must be at least 1, not 0; leave it out for 5000"},
		{name: "NoSmall", args: []string{"--small", "0"}, code: ExitUsage,
			stderr: "tributary: --small must be at least 1, not 0; leave it out for 10"},
		{name: "NoWorkers", args: []string{"--workers", "0"}, code: ExitUsage,
			stderr: "tributary: --workers must be at least 1, not 0; leave it out for 20"},
		{name: "NoRounds", args: []string{"--rounds", "0"}, code: ExitUsage,
			stderr: "tributary: --rounds must be at least 1, not 0; leave it out for 1"},
		{name: "NegativeLimit", args: []string{"--limit", "-1"}, code: ExitUsage,
			stderr: "tributary: --limit must be at least 0, not -1; leave it out for no limit"},
		{name: "NoStep", args: []string{"--step", "0s"}, code: ExitUsage,
			stderr: "tributary: --step is 0s; give a positive duration such as 100ms; see 'tributary bench fairness --help'"},
		{name: "UnexpectedArgument", args: []string{"now"}, code: ExitUsage,
			stderr: "tributary: unexpected argument \"now\"; see 'tributary bench fairness --help'"},
	})
}
