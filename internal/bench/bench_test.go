package bench

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// testWorkers keeps the cases' pools small on a shared test server.
const testWorkers = 4

// adminPool connects to the test server, selecting no schema.
func adminPool(t testing.TB) *pgxpool.Pool {
	t.Helper()

	pool, err := pgxpool.New(context.Background(), testdb.ServerURL(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// requireSchemaGone checks that schema does not exist.
func requireSchemaGone(t *testing.T, pool *pgxpool.Pool, schema string) {
	t.Helper()

	var exists bool
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists))
	require.False(t, exists, "schema %s left behind", schema)
}

func TestRun(t *testing.T) {
	t.Parallel()

	const items, rounds = 200, 2
	admin := adminPool(t)
	var progress bytes.Buffer
	res, err := Run(context.Background(), admin, &Config{Items: items, Rounds: rounds, Workers: testWorkers}, &progress)
	require.NoError(t, err, progress.String())

	require.Equal(t, items, res.Items)
	require.Equal(t, rounds, res.Rounds)
	require.Equal(t, testWorkers, res.Workers)
	require.NotEmpty(t, res.Server)

	keys := make([]string, len(res.Cases))
	for i, c := range res.Cases {
		keys[i] = c.Key
		require.Len(t, c.Rounds, rounds, c.Name)
		for _, r := range c.Rounds {
			require.Equal(t, items, r.Completed, c.Name)
			require.Positive(t, r.Elapsed, c.Name)
			require.Positive(t, r.Rate, c.Name)
			require.True(t, strings.HasPrefix(r.Schema, SchemaPrefix), r.Schema)
			requireSchemaGone(t, admin, r.Schema)
		}
		require.Positive(t, c.Min, c.Name)
		require.LessOrEqual(t, c.Min, c.Mean, c.Name)
		require.LessOrEqual(t, c.Mean, c.Max, c.Name)
	}
	require.Equal(t, []string{"river_0_steps", "workflow_0_steps", "river_3_checkpoints", "workflow_3_steps"}, keys)
	require.Equal(t, []int{0, 0, 3, 3}, []int{res.Cases[0].Steps, res.Cases[1].Steps, res.Cases[2].Steps, res.Cases[3].Steps})

	require.Len(t, res.Ratios, 2)
	for i, want := range []struct{ name, of, to string }{
		{"workflow 0 steps / River", "workflow_0_steps", "river_0_steps"},
		{"workflow 3 steps / River with 3 checkpoints", "workflow_3_steps", "river_3_checkpoints"},
	} {
		r := res.Ratios[i]
		require.Equal(t, want.name, r.Name)
		require.Equal(t, want.of, r.Of)
		require.Equal(t, want.to, r.To)
		require.Positive(t, r.Value)
		require.Positive(t, r.Min)
		require.LessOrEqual(t, r.Min, r.Max)
	}
	require.InDelta(t, res.Cases[1].Mean/res.Cases[0].Mean, res.Ratios[0].Value, 1e-9)

	// A progress line per case and round, in order, the second round in
	// reverse.
	lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
	require.Len(t, lines, 4*rounds, progress.String())
	require.Regexp(t, `^round 1/2, River jobs, 0 steps: 200 items… [0-9,]+/s$`, lines[0])
	require.Regexp(t, `^round 1/2, Workflow runs, 3 steps: 200 items… [0-9,]+/s$`, lines[3])
	require.Regexp(t, `^round 2/2, Workflow runs, 3 steps: 200 items… [0-9,]+/s$`, lines[4])
	require.Regexp(t, `^round 2/2, River jobs, 0 steps: 200 items… [0-9,]+/s$`, lines[7])
}

// TestRunKeyed: Keyed adds the four keyed cases after the four, every run
// of them completed, and their ratios to the cases without a tenant.
func TestRunKeyed(t *testing.T) {
	t.Parallel()

	admin := adminPool(t)
	var progress bytes.Buffer
	res, err := Run(context.Background(), admin, &Config{Items: 100, Workers: testWorkers, Keyed: true}, &progress)
	require.NoError(t, err, progress.String())

	keys := make([]string, len(res.Cases))
	for i, c := range res.Cases {
		keys[i] = c.Key
		require.Equal(t, 100, c.Rounds[0].Completed, c.Name)
	}
	require.Equal(t, []string{"river_0_steps", "workflow_0_steps", "river_3_checkpoints", "workflow_3_steps",
		"workflow_0_steps_keyed", "workflow_0_steps_limited", "workflow_3_steps_keyed", "workflow_3_steps_limited"}, keys)
	require.Len(t, res.Ratios, 6)
	for i, want := range [][2]string{
		{"workflow_0_steps_keyed", "workflow_0_steps"},
		{"workflow_0_steps_limited", "workflow_0_steps"},
		{"workflow_3_steps_keyed", "workflow_3_steps"},
		{"workflow_3_steps_limited", "workflow_3_steps"},
	} {
		r := res.Ratios[2+i]
		require.Equal(t, want[0], r.Of, r.Name)
		require.Equal(t, want[1], r.To, r.Name)
		require.Positive(t, r.Value, r.Name)
	}
}

// TestRunStarts: Starts adds the four cases with their items started by
// callers while the clock runs, every item of them completed, and the
// ratios of the workflow cases to the River cases among them.
func TestRunStarts(t *testing.T) {
	t.Parallel()

	admin := adminPool(t)
	var progress bytes.Buffer
	res, err := Run(context.Background(), admin, &Config{Items: 100, Workers: testWorkers, Starts: true, Callers: 4}, &progress)
	require.NoError(t, err, progress.String())

	keys := make([]string, len(res.Cases))
	for i, c := range res.Cases {
		keys[i] = c.Key
		require.Equal(t, 100, c.Rounds[0].Completed, c.Name)
	}
	require.Equal(t, []string{"river_0_steps", "workflow_0_steps", "river_3_checkpoints", "workflow_3_steps",
		"river_0_steps_inserted", "workflow_0_steps_started", "river_3_checkpoints_inserted", "workflow_3_steps_started"}, keys)
	require.Len(t, res.Ratios, 4)
	for i, want := range [][2]string{
		{"workflow_0_steps_started", "river_0_steps_inserted"},
		{"workflow_3_steps_started", "river_3_checkpoints_inserted"},
	} {
		r := res.Ratios[2+i]
		require.Equal(t, want[0], r.Of, r.Name)
		require.Equal(t, want[1], r.To, r.Name)
		require.Positive(t, r.Value, r.Name)
	}
}

func TestRunCase(t *testing.T) {
	t.Parallel()

	config, err := (&Config{Items: 20, Workers: testWorkers}).withDefaults()
	require.NoError(t, err)

	t.Run("DropsSchemaWhenPrepareFails", func(t *testing.T) {
		t.Parallel()

		admin := adminPool(t)
		failing := benchCase{key: "failing", name: "Failing", prepare: func(context.Context, *scratch, *Config) (*runner, error) {
			return nil, errors.New("prepare broke")
		}}
		round, err := runCase(context.Background(), admin, failing, config)
		require.EqualError(t, err, "prepare broke")
		require.True(t, strings.HasPrefix(round.Schema, SchemaPrefix), round.Schema)
		requireSchemaGone(t, admin, round.Schema)
	})

	t.Run("FailsAndDropsSchemaWhenAJobFails", func(t *testing.T) {
		t.Parallel()

		admin := adminPool(t)
		failing := benchCase{key: "failing", name: "Failing", prepare: func(ctx context.Context, s *scratch, config *Config) (*runner, error) {
			workers := river.NewWorkers()
			river.AddWorker(workers, river.WorkFunc(func(context.Context, *river.Job[failingArgs]) error {
				return errors.New("work broke")
			}))
			return prepareRiver(ctx, s, config, workers, func(int) river.JobArgs { return failingArgs{} },
				func(context.Context) (int, error) { return 0, nil }, false)
		}}
		round, err := runCase(context.Background(), admin, failing, config)
		require.Error(t, err)
		require.Regexp(t, `^job \d+ \(bench_failing\) ended job_failed: work broke$`, err.Error())
		requireSchemaGone(t, admin, round.Schema)
	})

	t.Run("FailsWhenAFeedFails", func(t *testing.T) {
		t.Parallel()

		admin := adminPool(t)
		feeding := benchCase{key: "feeding", name: "Feeding", prepare: func(ctx context.Context, s *scratch, config *Config) (*runner, error) {
			r, err := riverNoop(true)(ctx, s, config)
			if err != nil {
				return nil, err
			}
			r.feed = func(context.Context) error { return errors.New("insert broke") }
			return r, nil
		}}
		round, err := runCase(context.Background(), admin, feeding, config)
		require.EqualError(t, err, "inserting the items: insert broke")
		requireSchemaGone(t, admin, round.Schema)
	})

	t.Run("DropsSchemaWhenCancelled", func(t *testing.T) {
		t.Parallel()

		admin := adminPool(t)
		ctx, cancel := context.WithCancel(context.Background())
		// Interrupted with every item inserted, as the clock starts.
		interrupted := benchCase{key: "interrupted", name: "Interrupted", prepare: func(ctx context.Context, s *scratch, config *Config) (*runner, error) {
			r, err := prepareRiverNoop(ctx, s, config)
			cancel()
			return r, err
		}}
		round, err := runCase(ctx, admin, interrupted, config)
		require.ErrorIs(t, err, context.Canceled)
		requireSchemaGone(t, admin, round.Schema)
	})
}

type failingArgs struct{}

func (failingArgs) Kind() string { return "bench_failing" }

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()

	config, err := (*Config)(nil).withDefaults()
	require.NoError(t, err)
	require.Equal(t, DefaultItems, config.Items)
	require.Equal(t, DefaultRounds, config.Rounds)
	require.Equal(t, DefaultWorkers, config.Workers)
	require.NotNil(t, config.Logger)

	_, err = (&Config{Workers: -1}).withDefaults()
	require.EqualError(t, err, "bench: Config.Workers is -1; it must be at least 1, or 0 for the default 20")
}

func TestFormatCount(t *testing.T) {
	t.Parallel()

	for n, want := range map[float64]string{
		0: "0", 7.4: "7", 999.5: "1,000", 6512.4: "6,512", 123456.7: "123,457", 1234567: "1,234,567", -4321: "-4,321",
	} {
		require.Equal(t, want, FormatCount(n), "%v", n)
	}
}

// TestRunStartsBench: RunStarts inserts every item of both cases and
// reports Start's rate over Insert's.
func TestRunStartsBench(t *testing.T) {
	t.Parallel()

	admin := adminPool(t)
	var progress bytes.Buffer
	res, err := RunStarts(context.Background(), admin, &Config{Items: 250, Callers: 4, Rounds: 2}, &progress)
	require.NoError(t, err, progress.String())
	require.Len(t, res.Cases, 4)
	for _, c := range res.Cases {
		require.Len(t, c.Rounds, 2, c.Name)
		require.Equal(t, 250, c.Rounds[0].Completed, c.Name)
	}
	require.Len(t, res.Ratios, 2)
	for i, want := range [][2]string{{"workflow_start", "river_insert"}, {"workflow_start_many", "river_insert_many"}} {
		require.Equal(t, want[0], res.Ratios[i].Of)
		require.Equal(t, want[1], res.Ratios[i].To)
		require.Positive(t, res.Ratios[i].Value)
	}
}
