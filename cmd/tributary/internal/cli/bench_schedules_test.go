package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestBenchSchedules(t *testing.T) {
	t.Parallel()

	// The bench makes schemas of its own: it needs only the server. Four
	// workers keep its connections few on a shared test server.
	vars := map[string]string{"DATABASE_URL": testdb.ServerURL(t)}

	t.Run("Table", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, vars, "bench", "schedules", "--due", "30", "--workers", "4")
		require.Equal(t, ExitOK, res.code, res.stderr)

		const lag = `[0-9][0-9.,]* ms`
		require.Regexp(t, `\A`+
			`Tributary schedules, warm: 30 slots… p50 `+lag+`, p99 `+lag+`\n`+
			`River periodic jobs: 30 slots… p50 `+lag+`, p99 `+lag+`\n\z`, res.stderr)
		require.Regexp(t, `\A`+
			`PostgreSQL \S.*, 30 slots due in the same second, 4 workers, 1 round\n\n`+
			`CASE +N +P50 +P95 +P99 +MAX +SLOTS/S\n`+
			`Tributary schedules, warm +30 +`+lag+` +`+lag+` +`+lag+` +`+lag+` +[1-9][0-9,]*\n`+
			`River periodic jobs +30 +`+lag+` +`+lag+` +`+lag+` +`+lag+` +[1-9][0-9,]*\n\n`+
			`Tributary warm p99 / River p99: +[0-9]+\.[0-9]{2}\n\z`, res.stdout)
	})

	t.Run("JSONCold", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, vars, "bench", "schedules", "--due", "20", "--workers", "4", "--cold", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, 3, strings.Count(res.stderr, "\n"), res.stderr)
		require.Contains(t, res.stderr, "Tributary schedules, cold: 20 slots… ")

		// The documented shape of bench schedules --json, field for field.
		type lag struct {
			Max float64 `json:"max_ms"`
			P50 float64 `json:"p50_ms"`
			P95 float64 `json:"p95_ms"`
			P99 float64 `json:"p99_ms"`
		}
		var out struct {
			Cases []struct {
				Case   string  `json:"case"`
				Lag    lag     `json:"lag"`
				Name   string  `json:"name"`
				Rate   float64 `json:"slots_per_second"`
				Rounds []struct {
					Lag          lag     `json:"lag"`
					LastInsertMs float64 `json:"last_insert_ms"`
					LeadMs       float64 `json:"lead_ms"`
					Rate         float64 `json:"slots_per_second"`
					Slots        int     `json:"slots"`
				} `json:"rounds"`
			} `json:"cases"`
			Due       int  `json:"due"`
			Owners    int  `json:"owners"`
			RanBefore bool `json:"ran_before"` // left out unless --ran-before
			Ratios    []struct {
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
		require.Equal(t, 20, out.Due)
		require.Equal(t, 1, out.Owners, "one owner unless --owners says more")
		require.False(t, out.RanBefore)
		require.Equal(t, 1, out.Rounds)
		require.Equal(t, 4, out.Workers)
		require.NotEmpty(t, out.Server)
		require.Len(t, out.Cases, 3)
		for i, key := range []string{"tributary_warm", "tributary_cold", "river_periodic"} {
			c := out.Cases[i]
			require.Equal(t, key, c.Case)
			require.Len(t, c.Rounds, 1, key)
			require.Equal(t, 20, c.Rounds[0].Slots, key)
			require.Equal(t, c.Lag, c.Rounds[0].Lag, key)
			require.GreaterOrEqual(t, c.Lag.P50, 0.0, key)
			require.LessOrEqual(t, c.Lag.P50, c.Lag.Max, key)
			require.Positive(t, c.Rate, key)
		}
		require.Negative(t, out.Cases[1].Rounds[0].LeadMs, "the cold client starts after the slot")
		require.Len(t, out.Ratios, 2)
		require.Equal(t, "Tributary warm p99 / River p99", out.Ratios[0].Name)
		require.Equal(t, "Tributary cold p99 / River p99", out.Ratios[1].Name)
		for _, r := range out.Ratios {
			require.Positive(t, r.Value, r.Name)
			require.Equal(t, "river_periodic", r.To)
		}
	})
}

func TestBenchSchedulesFailures(t *testing.T) {
	t.Parallel()

	runFailureCases(t, []string{"bench", "schedules"}, []failureCase{
		{name: "NoDue", args: []string{"--due", "0"}, code: ExitUsage,
			stderr: "tributary: --due must be at least 1, not 0; leave it out for 10000"},
		{name: "NegativeRounds", args: []string{"--rounds", "-1"}, code: ExitUsage,
			stderr: "tributary: --rounds must be at least 1, not -1; leave it out for 1"},
		{name: "NoWorkers", args: []string{"--workers", "0"}, code: ExitUsage,
			stderr: "tributary: --workers must be at least 1, not 0; leave it out for 20"},
		{name: "UnknownFlag", args: []string{"--items", "5"}, code: ExitUsage,
			stderr: "tributary: flag provided but not defined: -items; see 'tributary bench schedules --help'"},
		{name: "UnexpectedArgument", args: []string{"now"}, code: ExitUsage,
			stderr: "tributary: unexpected argument \"now\"; see 'tributary bench schedules --help'"},
		{name: "Unreachable", args: []string{"--database-url", "postgres://postgres@127.0.0.1:1/none?connect_timeout=5", "--due", "1"}, code: ExitError,
			stderr: "re:^tributary: connecting to the database: .*; check the database URL and that Postgres is running$"},
	})

	// `bench` itself still runs its own cases: a subcommand's name is
	// taken only as the first argument.
	runFailureCases(t, []string{"bench"}, []failureCase{
		{name: "BenchFlagsBeforeSubcommand", args: []string{"--items", "5", "schedules"}, code: ExitUsage,
			stderr: "tributary: unexpected argument \"schedules\"; see 'tributary bench --help'"},
	})
}

func TestBenchHelpListsSchedules(t *testing.T) {
	t.Parallel()

	res := runCLI(t, nil, "bench", "--help")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, "\nUsage:\n  tributary bench [flags]\n")
	require.Regexp(t, `\nCommands:\n  fairness   Measure how long a small tenant's runs wait[^\n]*\n  rate       Measure how closely one tenant's starts keep[^\n]*\n  retention  Measure what deleting old runs costs[^\n]*\n  schedules  Measure how late runs start`, res.stdout)
	require.Contains(t, res.stdout, "\n  --items number\n") // bench's own flags
	require.Contains(t, res.stdout, "\nRun 'tributary bench <command> --help' for a command's flags.\n")

	sub := runCLI(t, nil, "help", "bench", "schedules")
	require.Equal(t, ExitOK, sub.code, sub.stderr)
	require.Contains(t, sub.stdout, "\nUsage:\n  tributary bench schedules [flags]\n")
	require.Contains(t, sub.stdout, "\n  --due number\n")
}
