package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRunSchedules(t *testing.T) {
	t.Parallel()

	const due = 50
	admin := adminPool(t)
	var progress bytes.Buffer
	res, err := RunSchedules(context.Background(), admin, &SchedulesConfig{Cold: true, Due: due, Workers: testWorkers}, &progress)
	require.NoError(t, err, progress.String())

	require.Equal(t, due, res.Due)
	require.Equal(t, 1, res.Rounds)
	require.Equal(t, testWorkers, res.Workers)
	require.NotEmpty(t, res.Server)

	keys := make([]string, len(res.Cases))
	for i, c := range res.Cases {
		keys[i] = c.Key
		require.Len(t, c.Rounds, 1, c.Name)
		r := c.Rounds[0]
		require.Equal(t, due, r.Slots, c.Name)
		require.Len(t, r.lags, due, c.Name)
		requireLag(t, r.Lag, c.Name)
		require.Equal(t, r.Lag, c.Lag, c.Name) // one round: the pooled lags are its own
		require.Positive(t, r.Rate, c.Name)
		require.Equal(t, r.Rate, c.Rate, c.Name)
		require.True(t, strings.HasPrefix(r.Schema, SchemaPrefix), r.Schema)
		requireSchemaGone(t, admin, r.Schema)
	}
	require.Equal(t, []string{KeyTributaryWarm, KeyTributaryCold, KeyRiverPeriodic}, keys)
	require.Positive(t, res.Cases[0].Rounds[0].Lead, "the warm client starts before the slot")
	require.Negative(t, res.Cases[1].Rounds[0].Lead, "the cold client starts after the slot")
	require.Positive(t, res.Cases[2].Rounds[0].Lead, "River's client starts before the slot")

	require.Len(t, res.Ratios, 2)
	for i, want := range []struct{ name, of string }{
		{"Tributary warm p99 / River p99", KeyTributaryWarm},
		{"Tributary cold p99 / River p99", KeyTributaryCold},
	} {
		r := res.Ratios[i]
		require.Equal(t, want.name, r.Name)
		require.Equal(t, want.of, r.Of)
		require.Equal(t, KeyRiverPeriodic, r.To)
		require.Positive(t, r.Value)
		require.Equal(t, r.Value, r.Min) // one round
		require.Equal(t, r.Value, r.Max)
	}
	require.InDelta(t, res.Cases[0].Lag.P99/res.Cases[2].Lag.P99, res.Ratios[0].Value, 1e-9)

	// A progress line per case, in order.
	lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
	require.Len(t, lines, 3, progress.String())
	for i, name := range []string{"Tributary schedules, warm", "Tributary schedules, cold", "River periodic jobs"} {
		require.Regexp(t, `^`+name+`: 50 slots… p50 [0-9.,]+ ms, p99 [0-9.,]+ ms$`, lines[i])
	}

	// Durations are in milliseconds in JSON; the schema and the lags are
	// left out.
	out, err := json.Marshal(res.Cases[0].Rounds[0])
	require.NoError(t, err)
	var round map[string]any
	require.NoError(t, json.Unmarshal(out, &round))
	require.ElementsMatch(t, []string{"slots", "lag", "slots_per_second", "last_insert_ms", "lead_ms"}, mapKeys(round))
	require.InDelta(t, millis(res.Cases[0].Rounds[0].Lead), round["lead_ms"], 1e-9)
}

// TestRunSchedulesRanBefore: with RanBefore, the schedules carry the status
// of a run that completed before, the result says so, and every slot still
// starts its run.
func TestRunSchedulesRanBefore(t *testing.T) {
	t.Parallel()

	const due = 20
	admin := adminPool(t)
	res, err := RunSchedules(context.Background(), admin, &SchedulesConfig{Due: due, RanBefore: true, Workers: testWorkers}, nil)
	require.NoError(t, err)
	require.True(t, res.RanBefore)
	require.Len(t, res.Cases, 2)
	for _, c := range res.Cases {
		require.Equal(t, due, c.Rounds[0].Slots, c.Name)
	}
	out, err := json.Marshal(res)
	require.NoError(t, err)
	require.Contains(t, string(out), `"ran_before":true`)
}

// requireLag checks that a lag summary is ordered and not negative: no run
// started before its slot.
func requireLag(t *testing.T, lag *Lag, name string) {
	t.Helper()

	require.GreaterOrEqual(t, lag.P50, 0.0, name)
	require.LessOrEqual(t, lag.P50, lag.P95, name)
	require.LessOrEqual(t, lag.P95, lag.P99, name)
	require.LessOrEqual(t, lag.P99, lag.Max, name)
}

func mapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

func TestSchedulesConfigWithDefaults(t *testing.T) {
	t.Parallel()

	config, err := (*SchedulesConfig)(nil).withDefaults()
	require.NoError(t, err)
	require.Equal(t, DefaultDue, config.Due)
	require.Equal(t, DefaultRounds, config.Rounds)
	require.Equal(t, DefaultWorkers, config.Workers)
	require.False(t, config.Cold)
	require.NotNil(t, config.Logger)

	_, err = (&SchedulesConfig{Due: -1}).withDefaults()
	require.EqualError(t, err, "bench: SchedulesConfig.Due is -1; it must be at least 1, or 0 for the default 10000")
}

func TestLagSummary(t *testing.T) {
	t.Parallel()

	// Nearest rank: p50 of 1..100 is 50, p95 95, p99 99.
	sorted := make([]float64, 100)
	for i := range sorted {
		sorted[i] = float64(i + 1)
	}
	require.Equal(t, &Lag{P50: 50, P95: 95, P99: 99, Max: 100}, newLag(sorted))
	require.Equal(t, &Lag{P50: 7, P95: 7, P99: 7, Max: 7}, newLag([]float64{7}))

	c := &SlotCase{Rounds: []*SlotRound{
		{Rate: 100, lags: []float64{1, 3}},
		{Rate: 300, lags: []float64{2, 4}},
	}}
	c.summarize()
	require.Equal(t, &Lag{P50: 2, P95: 4, P99: 4, Max: 4}, c.Lag)
	require.InDelta(t, 200.0, c.Rate, 1e-9)
}

func TestFormatMillis(t *testing.T) {
	t.Parallel()

	for ms, want := range map[float64]string{
		0: "0.0 ms", 0.84: "0.8 ms", 12.34: "12.3 ms", 99.94: "99.9 ms", 245.4: "245 ms", 12034.4: "12,034 ms",
	} {
		require.Equal(t, want, FormatMillis(ms), "%v", ms)
	}
}
