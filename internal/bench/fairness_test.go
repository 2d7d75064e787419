package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRunFairness(t *testing.T) {
	t.Parallel()

	const big, small, limit = 200, 5, 2
	admin := adminPool(t)
	var progress bytes.Buffer
	res, err := RunFairness(context.Background(), admin, &FairnessConfig{
		Big: big, Small: small, Delay: 200 * time.Millisecond, Step: 20 * time.Millisecond, Workers: testWorkers, Limit: limit, Rounds: 2,
	}, &progress)
	require.NoError(t, err, progress.String())

	require.Equal(t, big, res.Big)
	require.Equal(t, small, res.Small)
	require.Equal(t, testWorkers, res.Workers)
	require.Equal(t, limit, res.Limit)
	require.Equal(t, 2, res.Rounds)
	require.InDelta(t, 0.2, res.Delay, 1e-9)
	require.InDelta(t, 0.02, res.Step, 1e-9)
	require.NotEmpty(t, res.Server)

	keys := make([]string, len(res.Cases))
	for i, c := range res.Cases {
		keys[i] = c.Key
		require.Equal(t, big+small, c.Completed, c.Name)
		require.Positive(t, c.SmallKey.P50, c.Name)
		require.LessOrEqual(t, c.SmallKey.P50, c.SmallKey.P99, c.Name)
		require.LessOrEqual(t, c.SmallKey.P99, c.SmallKey.Max, c.Name)
		require.Positive(t, c.BigKeyMakespan, c.Name)
		require.Positive(t, c.SmallKeyStart, c.Name) // B starts after A
		require.Positive(t, c.BigKeyMaxInStep, c.Name)
		require.LessOrEqual(t, c.BigKeyMaxInStep, testWorkers, c.Name)
	}
	// Interleaved: each case once, then each again.
	require.Equal(t, []string{KeyFairnessUnkeyed, KeyFairnessKeyed, KeyFairnessLimited,
		KeyFairnessUnkeyed, KeyFairnessKeyed, KeyFairnessLimited}, keys)
	for i, c := range res.Cases {
		require.Equal(t, i/3+1, c.Round)
	}
	// The limit holds: never more than limit runs of a key in their step.
	for _, limited := range []*FairnessCase{res.Cases[2], res.Cases[5]} {
		require.LessOrEqual(t, limited.BigKeyMaxInStep, limit)
		require.Zero(t, limited.LimitViolations)
	}
	require.Zero(t, res.LimitViolations)

	// The headline figures are the worst round's.
	require.Equal(t, []float64{res.Cases[1].SmallKey.P99, res.Cases[4].SmallKey.P99}, res.SmallKeyP99s)
	require.Equal(t, max(res.Cases[1].SmallKey.P99, res.Cases[4].SmallKey.P99), res.SmallKeyP99)
	require.Equal(t, max(res.Cases[0].SmallKey.P99, res.Cases[3].SmallKey.P99), res.SmallKeyP99Unkeyed)
	slowdowns := []float64{res.Cases[1].BigKeyMakespan / res.Cases[0].BigKeyMakespan, res.Cases[4].BigKeyMakespan / res.Cases[3].BigKeyMakespan}
	require.InDeltaSlice(t, slowdowns, res.BigKeySlowdowns, 1e-9)
	require.InDelta(t, max(slowdowns[0], slowdowns[1]), res.BigKeySlowdown, 1e-9)
	require.InDelta(t, res.BigKeyMakespan/res.BigKeyMakespanUnkeyed, res.BigKeySlowdown, 1e-9, "the makespans are the worst round's")

	lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
	require.Len(t, lines, 6, progress.String())
	for i, name := range []string{`No keys \(River's order\)`, `Keys A and B \(fair turns\)`, `Keys A and B, limit 2`} {
		for round := range 2 {
			require.Regexp(t, `^`+name+`, round `+strconv.Itoa(round+1)+`: 200 runs of A, 5 of B 200ms later… B p99 [0-9.]+ s, A makespan [0-9.]+ s$`, lines[round*3+i])
		}
	}

	out, err := json.Marshal(res)
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(out, &fields))
	for _, key := range []string{"small_key_p99_s", "small_key_p99_s_unkeyed", "big_key_makespan_s", "big_key_makespan_s_unkeyed",
		"big_key_slowdown", "limit_violations", "limit", "rounds", "small_key_p99s_s", "big_key_slowdowns"} {
		require.Contains(t, fields, key)
	}
}

func TestFairnessConfigWithDefaults(t *testing.T) {
	t.Parallel()

	config, err := (*FairnessConfig)(nil).withDefaults()
	require.NoError(t, err)
	require.Equal(t, DefaultFairnessBig, config.Big)
	require.Equal(t, DefaultFairnessSmall, config.Small)
	require.Equal(t, DefaultFairnessDelay, config.Delay)
	require.Equal(t, DefaultFairnessStep, config.Step)
	require.Equal(t, DefaultWorkers, config.Workers)
	require.Zero(t, config.Limit)
	require.NotNil(t, config.Logger)

	_, err = (&FairnessConfig{Limit: -1}).withDefaults()
	require.EqualError(t, err, "bench: FairnessConfig.Limit is -1; it must be at least 1, or 0 for no limit")
	_, err = (&FairnessConfig{Step: -time.Second}).withDefaults()
	require.EqualError(t, err, "bench: FairnessConfig.Step is -1s; it must be positive, or 0 for the default 100ms")
}

func TestStepLogConcurrency(t *testing.T) {
	t.Parallel()

	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	var l stepLog
	l.add("A", at(0), at(10))
	l.add("A", at(5), at(15))
	l.add("A", at(10), at(20)) // begins as the first ends: two at once
	l.add("A", at(12), at(13)) // three at once
	l.add("B", at(0), at(100))
	most, violations := l.concurrency("A", 2)
	require.Equal(t, 3, most)
	require.Equal(t, 1, violations)
	most, violations = l.concurrency("A", 0)
	require.Equal(t, 3, most)
	require.Zero(t, violations)
	most, _ = l.concurrency("B", 1)
	require.Equal(t, 1, most)
}
