package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// TestKeyPlans: the statements that find schedules by key (a Ref by key,
// Create's and CreateMany's existing keys, a declaration's schedules) read
// them through the schedules_owner_key and schedules_declared_by indexes,
// under a custom plan and the generic plan a prepared statement switches
// to, on a table of 60,000 keyed schedules: a declaration at start-up, or a
// user's request by key, costs what it finds, not the table.
func TestKeyPlans(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, 2*time.Minute)
	_, err := db.Pool.Exec(ctx, `INSERT INTO schedules (id, name, owner, key, workflow_type, cron, declared_by)
		SELECT gen_random_uuid(), 'digest', 'user-' || i, 'digest', 'tick', '0 8 * * *',
			CASE WHEN i % 1000 = 0 THEN 'service-' || (i / 1000) END
		FROM generate_series(1, 60000) i`)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, "ANALYZE schedules")
	require.NoError(t, err)

	pool, rec := db.RecordingPool(t)
	wf, err := workflow.NewClient(pool, &workflow.Config{Schema: db.Schema})
	require.NoError(t, err)
	sc, err := New(wf, nil)
	require.NoError(t, err)

	_, err = sc.Get(ctx, ByKey("user-42", "digest"))
	require.NoError(t, err)
	_, err = sc.Pause(ctx, ByKey("user-43", "digest"), "")
	require.NoError(t, err)
	_, err = sc.CreateMany(ctx, []*Params{
		{Name: "digest", Owner: "user-44", Key: "digest", Workflow: "tick", Cron: "0 8 * * *"},
		{Name: "digest", Owner: "user-45", Key: "digest", Workflow: "tick", Cron: "0 8 * * *"},
	})
	require.NoError(t, err)
	_, err = sc.Declare(ctx, &Declaration{Service: "reports", Schedules: []*Params{
		{Name: "nightly", Key: "nightly", Workflow: "tick", Cron: "0 2 * * *"},
	}})
	require.NoError(t, err)

	explained := 0
	for _, sent := range rec.Take() {
		if !strings.Contains(sent.SQL, "key") || !strings.HasPrefix(strings.TrimSpace(sent.SQL), "SELECT") {
			continue
		}
		explained++
		for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
			plan := testdb.ExplainPrepared(ctx, t, pool, sent, mode)
			require.NotContains(t, plan, "Seq Scan on schedules", "plan (%s) of\n%s\n%s", mode, sent.SQL, plan)
			require.Regexp(t, `schedules_owner_key|schedules_declared_by`, plan, "plan (%s) of\n%s\n%s", mode, sent.SQL, plan)
		}
	}
	require.Equal(t, 5, explained, "by key (Get), the id by key (Pause), the keys of CreateMany, the declaration's schedules and the keys of its creates")
}
