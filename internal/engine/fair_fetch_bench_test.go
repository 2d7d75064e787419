package engine_test

import (
	"testing"

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
		name         string
		river, limit bool
	}{
		{name: "River", river: true},
		{name: "Fair"},
		{name: "FairLimited", limit: true},
	} {
		b.Run(c.name, func(b *testing.B) {
			db := testdb.New(b)
			_, err := db.Pool.Exec(ctx(b), `INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, priority)
				SELECT jsonb_build_object('run_id', gen_random_uuid(), 'tenant', 't' || (g % 1000), 'start', '{"input":1}'),
					'workflow:a', 25, 'default', 'available', now() - interval '1 minute' + g * interval '1 microsecond', 1
				FROM generate_series(1, $1) g`, b.N+100)
			require.NoError(b, err)
			_, err = db.Pool.Exec(ctx(b), `ANALYZE river_job`)
			require.NoError(b, err)

			f := newFairFetcher(b, db)
			if c.limit {
				f.driver.SetTenantLimits(map[string]engine.TenantLimit{"workflow:a": {Type: "a", Max: 1000}})
			}
			if c.river {
				f.pilot = &riverpilot.StandardPilot{}
			}
			b.ResetTimer()
			for fetched := 0; fetched < b.N; {
				jobs := f.fetchJobs(13, "workflow:a")
				require.NotEmpty(b, jobs)
				fetched += len(jobs)
				// The jobs end, as a client's would, so that as many run
				// at once as a client of 20 workers runs.
				b.StopTimer()
				ids := make([]int64, len(jobs))
				for i, j := range jobs {
					ids[i] = j.ID
				}
				_, err = db.Pool.Exec(ctx(b), `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = ANY($1)`, ids)
				require.NoError(b, err)
				b.StartTimer()
			}
		})
	}
}
