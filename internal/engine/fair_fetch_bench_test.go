package engine_test

import (
	"context"
	"testing"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/testdb"
)

// BenchmarkFetch measures what a fetch costs a job, b.N jobs ready over
// 1,000 tenants (the keyed cases of `tributary bench`), fetched 13 at a
// time by one producer: River's own fetch, the fair fetch, and the fair
// fetch under a tenant limit none reaches.
func BenchmarkFetch(b *testing.B) {
	for _, c := range []struct {
		name    string
		fetcher func(d *engine.Driver) riverpilot.Pilot
		limit   bool
	}{
		{"River", func(d *engine.Driver) riverpilot.Pilot { return &riverpilot.StandardPilot{} }, false},
		{"Fair", func(d *engine.Driver) riverpilot.Pilot { return d.PluginPilot() }, false},
		{"FairLimited", func(d *engine.Driver) riverpilot.Pilot { return d.PluginPilot() }, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			db := testdb.New(b)
			ctx := context.Background()
			_, err := db.Pool.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, priority)
				SELECT jsonb_build_object('run_id', gen_random_uuid(), 'tenant', 't' || (g % 1000), 'start', '{"input":1}'),
					'workflow:a', 25, 'default', 'available', now() - interval '1 minute' + g * interval '1 microsecond', 1
				FROM generate_series(1, $1) g`, b.N+100)
			require.NoError(b, err)
			_, err = db.Pool.Exec(ctx, `ANALYZE river_job`)
			require.NoError(b, err)

			d := engine.NewDriver(db.Pool, nil)
			if c.limit {
				d.SetTenantLimits(map[string]engine.TenantLimit{"workflow:a": {Type: "a", Max: 1000}})
			}
			pilot := c.fetcher(d)
			_, state, err := pilot.ProducerInit(ctx, d.GetExecutor(), &riverpilot.ProducerInitParams{
				ClientID: "fetcher", Queue: "default", Schema: db.Schema,
			})
			require.NoError(b, err)
			params := &riverdriver.JobGetAvailableParams{
				ClientID: "fetcher", Kind: []string{"workflow:a"}, MaxAttemptedBy: 100, MaxToLock: 13, Queue: "default", Schema: db.Schema,
			}
			b.ResetTimer()
			for fetched := 0; fetched < b.N; {
				res, err := pilot.JobGetAvailable(ctx, d.GetExecutor(), state, params)
				require.NoError(b, err)
				require.NotEmpty(b, res.Jobs)
				fetched += len(res.Jobs)
				// The jobs end, as a client's would, so that as many run
				// at once as a client of 20 workers runs.
				b.StopTimer()
				ids := make([]int64, len(res.Jobs))
				for i, j := range res.Jobs {
					ids[i] = j.ID
				}
				_, err = db.Pool.Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = ANY($1)`, ids)
				require.NoError(b, err)
				b.StartTimer()
			}
		})
	}
}
