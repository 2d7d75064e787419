package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRunRate(t *testing.T) {
	t.Parallel()

	const rate, clients = 20, 2
	admin := adminPool(t)
	var progress bytes.Buffer
	res, err := RunRate(context.Background(), admin, &RateConfig{
		Rate: rate, Duration: 3 * time.Second, Clients: clients, Workers: testWorkers,
	}, &progress)
	require.NoError(t, err, progress.String())

	require.Equal(t, rate, res.Rate)
	require.InDelta(t, 3.0, res.Duration, 1e-9)
	require.Equal(t, clients, res.Clients)
	require.Equal(t, testWorkers, res.Workers)
	require.Equal(t, 72, res.Backlog) // 20 x 3 x 1.2
	require.NotEmpty(t, res.Server)

	// The figures agree with one another; how close they come to the rate
	// is the bench's to say, not the test's.
	require.Positive(t, res.Starts)
	require.LessOrEqual(t, res.Starts, res.Backlog)
	require.InDelta(t, float64(res.Starts)/3, res.StartsPerSecond, 1e-9)
	require.Positive(t, res.MaxInAnySecond)
	require.LessOrEqual(t, res.MinInAnySecond, res.MaxInAnySecond)
	require.GreaterOrEqual(t, float64(res.MaxInAnySecond), res.StartsPerSecond*0.5)
	require.Len(t, res.PerSecond, 3)
	require.Len(t, res.PerClient, clients)
	sum := 0
	for _, n := range res.PerSecond {
		sum += n
	}
	require.Equal(t, res.Starts, sum)
	sum = 0
	for _, n := range res.PerClient {
		sum += n
	}
	require.Equal(t, res.Starts, sum)
	require.LessOrEqual(t, res.SecondsOverLimit, 3)
	require.Regexp(t, `^Rate 20 a second for one tenant, 2 clients of 4 workers: 72 runs… started; working 3s… [0-9]+ starts, [0-9.]+ a second, at most [0-9]+ in a second\n$`, progress.String())

	out, err := json.Marshal(res)
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(out, &fields))
	for _, key := range []string{"rate", "duration_s", "clients", "starts", "starts_per_second", "max_in_any_second",
		"min_in_any_second", "seconds_over_limit", "per_client", "server", "starts_per_second_ok", "max_ok"} {
		require.Contains(t, fields, key)
	}
}

func TestRateConfigWithDefaults(t *testing.T) {
	t.Parallel()

	config, err := (*RateConfig)(nil).withDefaults()
	require.NoError(t, err)
	require.Equal(t, DefaultRate, config.Rate)
	require.Equal(t, DefaultDuration, config.Duration)
	require.Equal(t, DefaultClients, config.Clients)
	require.Equal(t, DefaultWorkers, config.Workers)
	require.NotNil(t, config.Logger)

	_, err = (&RateConfig{Clients: -1}).withDefaults()
	require.EqualError(t, err, "bench: RateConfig.Clients is -1; it must be at least 1, or 0 for the default 3")
	_, err = (&RateConfig{Duration: 500 * time.Millisecond}).withDefaults()
	require.EqualError(t, err, "bench: RateConfig.Duration is 500ms; it must be at least 1s, or 0 for the default 30s")
}

func TestRateMeasure(t *testing.T) {
	t.Parallel()

	from := time.Unix(1000, 0)
	at := func(ms int) time.Time { return from.Add(time.Duration(ms) * time.Millisecond) }
	var starts []rateStart
	// Second 0: 4 starts; second 1: 12, 10 of them in a burst at 1.5 s;
	// second 2: 2; one start before the window, one after it.
	for _, ms := range []int{0, 100, 600, 900} {
		starts = append(starts, rateStart{at(ms), 0})
	}
	for _, ms := range []int{1000, 1200} {
		starts = append(starts, rateStart{at(ms), 1})
	}
	for i := range 10 {
		starts = append(starts, rateStart{at(1500 + i), 1})
	}
	starts = append(starts, rateStart{at(2500), 0}, rateStart{at(2999), 1}, rateStart{at(-1), 0}, rateStart{at(3000), 0})

	r := &RateResult{Rate: 10, Clients: 2}
	r.measure(starts, from, 3*time.Second)
	require.Equal(t, 18, r.Starts)
	require.InDelta(t, 6.0, r.StartsPerSecond, 1e-9)
	require.Equal(t, []int{4, 12, 2}, r.PerSecond)
	require.Equal(t, []int{5, 13}, r.PerClient)
	// [0.6 s, 1.6 s) holds 0.6, 0.9, 1.0, 1.2 and the burst: 14; the last
	// window that ends inside, [1.509 s, 2.509 s), holds 2.
	require.Equal(t, 14, r.MaxInAnySecond)
	require.Equal(t, 2, r.MinInAnySecond)
	require.Equal(t, 1, r.SecondsOverLimit) // 12 > 11
	require.False(t, r.StartsPerSecondOK)
	require.False(t, r.MaxOK)
}
