package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestBench(t *testing.T) {
	t.Parallel()

	// The bench makes schemas of its own: it needs only the server. Four
	// workers keep its connections few on a shared test server.
	vars := map[string]string{"DATABASE_URL": testdb.ServerURL(t)}

	t.Run("Table", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, vars, "bench", "--items", "100", "--workers", "4")
		require.Equal(t, ExitOK, res.code, res.stderr)

		require.Regexp(t, `\A`+
			`River jobs, 0 steps: 100 items… [0-9,]+/s\n`+
			`Workflow runs, 0 steps: 100 items… [0-9,]+/s\n`+
			`River jobs, 3 checkpoints: 100 items… [0-9,]+/s\n`+
			`Workflow runs, 3 steps: 100 items… [0-9,]+/s\n\z`, res.stderr)
		require.Regexp(t, `\A`+
			`PostgreSQL \S.*, 100 items a case, 4 workers, 1 round\n\n`+
			`CASE +ITEMS/S\n`+
			`River jobs, 0 steps +[1-9][0-9,]*\n`+
			`Workflow runs, 0 steps +[1-9][0-9,]*\n`+
			`River jobs, 3 checkpoints +[1-9][0-9,]*\n`+
			`Workflow runs, 3 steps +[1-9][0-9,]*\n\n`+
			`workflow 0 steps / River: +[0-9]+\.[0-9]{2}\n`+
			`workflow 3 steps / River with 3 checkpoints: +[0-9]+\.[0-9]{2}\n\z`, res.stdout)
	})

	t.Run("Starts", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, vars, "bench", "starts", "--items", "50", "--callers", "4")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `\A`+
			`PostgreSQL \S.*, 50 items a case, 4 callers, 1 round\n\n`+
			`CASE +ITEMS/S\n`+
			`River Insert, one job a call +[1-9][0-9,]*\n`+
			`Workflow Start, one run a call +[1-9][0-9,]*\n`+
			`River InsertMany, 100 jobs a call +[1-9][0-9,]*\n`+
			`Workflow StartMany, 100 runs a call +[1-9][0-9,]*\n\n`+
			`workflow Start / River Insert: +[0-9]+\.[0-9]{2}\n`+
			`workflow StartMany / River InsertMany: +[0-9]+\.[0-9]{2}\n\z`, res.stdout)
	})

	t.Run("Otel", func(t *testing.T) {
		t.Parallel()

		// The workflow cases run with the OpenTelemetry middleware, on the
		// global (no-op) providers: every run completes, as without.
		res := runCLI(t, vars, "bench", "--items", "50", "--workers", "4", "--otel", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Contains(t, res.stdout, `"case": "workflow_3_steps"`)
	})

	t.Run("JSONWithRounds", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, vars, "bench", "--items", "50", "--rounds", "2", "--workers", "4", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, 8, strings.Count(res.stderr, "\n"), res.stderr)
		require.Contains(t, res.stderr, "round 2/2, Workflow runs, 3 steps: 50 items… ")

		// The documented shape of bench --json, field for field.
		var out struct {
			Cases []struct {
				Case   string  `json:"case"`
				Max    float64 `json:"max"`
				Mean   float64 `json:"mean"`
				Min    float64 `json:"min"`
				Name   string  `json:"name"`
				Rounds []struct {
					Completed      int     `json:"completed"`
					ElapsedSeconds float64 `json:"elapsed_seconds"`
					Rate           float64 `json:"rate"`
				} `json:"rounds"`
				Steps int `json:"steps"`
			} `json:"cases"`
			Items  int `json:"items"`
			Ratios []struct {
				Max   float64 `json:"max"`
				Min   float64 `json:"min"`
				Name  string  `json:"name"`
				Of    string  `json:"of"`
				To    string  `json:"to"`
				Value float64 `json:"value"`
			} `json:"ratios"`
			Rounds  int    `json:"rounds"`
			Server  string `json:"server"`
			Workers int    `json:"workers"`
		}
		dec := json.NewDecoder(strings.NewReader(res.stdout))
		dec.DisallowUnknownFields() // no field beyond the documented ones (a round's schema is not one)
		require.NoError(t, dec.Decode(&out), res.stdout)
		require.Equal(t, 50, out.Items)
		require.Equal(t, 2, out.Rounds)
		require.Equal(t, 4, out.Workers)
		require.NotEmpty(t, out.Server)
		require.Len(t, out.Cases, 4)
		for i, key := range []string{"river_0_steps", "workflow_0_steps", "river_3_checkpoints", "workflow_3_steps"} {
			c := out.Cases[i]
			require.Equal(t, key, c.Case)
			require.Len(t, c.Rounds, 2, key)
			for _, r := range c.Rounds {
				require.Equal(t, 50, r.Completed, key)
				require.Positive(t, r.ElapsedSeconds, key)
				require.Positive(t, r.Rate, key)
			}
			require.Positive(t, c.Min, key)
			require.LessOrEqual(t, c.Min, c.Mean, key)
			require.LessOrEqual(t, c.Mean, c.Max, key)
		}
		require.Len(t, out.Ratios, 2)
		require.Equal(t, "workflow 0 steps / River", out.Ratios[0].Name)
		require.Equal(t, "workflow 3 steps / River with 3 checkpoints", out.Ratios[1].Name)
		for _, r := range out.Ratios {
			require.Positive(t, r.Value, r.Name)
			require.LessOrEqual(t, r.Min, r.Max, r.Name)
		}
	})
}

func TestBenchFailures(t *testing.T) {
	t.Parallel()

	runFailureCases(t, []string{"bench"}, []failureCase{
		{name: "NoItems", args: []string{"--items", "0"}, code: ExitUsage,
			stderr: "tributary: --items must be at least 1, not 0; leave it out for 5000"},
		{name: "NegativeRounds", args: []string{"--rounds", "-1"}, code: ExitUsage,
			stderr: "tributary: --rounds must be at least 1, not -1; leave it out for 1"},
		{name: "NoWorkers", args: []string{"--workers", "0"}, code: ExitUsage,
			stderr: "tributary: --workers must be at least 1, not 0; leave it out for 20"},
		{name: "UnexpectedArgument", args: []string{"now"}, code: ExitUsage,
			stderr: "tributary: unexpected argument \"now\"; see 'tributary bench --help'"},
		{name: "Unreachable", args: []string{"--database-url", "postgres://postgres@127.0.0.1:1/none?connect_timeout=5", "--items", "1"}, code: ExitError,
			stderr: "re:^tributary: connecting to the database: .*; check the database URL and that Postgres is running$"},
	})
}
