package wfruntime

import (
	"context"
	"time"

	"github.com/tributary-go/tributary/internal/engine"
)

// Why plain deletes in batches, and not time-partitioned tables whose old
// partitions are dropped (as Oban Pro and pg-boss do): a run's retention
// starts when it finishes, not when it is created, and runs finish in any
// order (a run may sleep for months); a schedule keeps its last N runs
// whatever their age, and a finished child is kept while its parent waits
// for it. A partition holds runs by creation time, so it could be dropped
// only once every run in it is deletable, which the longest-lived run of
// the partition delays, and the exceptions above would have to move rows
// out first. Partitioning would also put the partition key in every
// primary and unique key (a run's id, SLOT_IS_UNIQUE's (schedule, slot)),
// and its foreign keys from steps and signals. Batched deletes by the
// primary key (UUIDv7 ids: the oldest runs first) keep each statement's
// locks to milliseconds, and `tributary bench retention` measures what
// they cost the workflows running meanwhile (see the README).

// retentionYield is how long the retention pauses after a full batch, as a
// multiple of the batch's duration: with 4, it takes at most a fifth of
// the time of one connection, so that deleting a backlog (a million runs
// after retention was first turned on, say) costs the workflows running
// meanwhile little (see `tributary bench retention`: 1.02× with and
// without). A pass then deletes about 6,000 runs a second on a 2-core
// machine, and a pass of retentionPassLimit every 10 minutes keeps up with
// about 600 runs finishing a second; a busier deployment shortens
// Config.Maintenance.RetentionInterval.
const retentionYield = 4

// retentionPassLimit bounds one pass of DeleteExpiredRuns; the next pass
// goes on.
const retentionPassLimit = time.Minute

// DeleteExpiredRuns is one pass of the retention of finished runs
// (workflow.Client.DeleteExpiredRuns): it deletes the runs p names on db in
// batches of p.Limit, pausing after each full batch (retentionYield), for
// at most retentionPassLimit, and returns how many it deleted.
func DeleteExpiredRuns(ctx context.Context, q *engine.Queries, db engine.DBTX, p *engine.DeleteExpiredRunsParams) (int, error) {
	deleted := 0
	for deadline := time.Now().Add(retentionPassLimit); time.Now().Before(deadline); {
		began := time.Now()
		n, err := q.DeleteExpiredRuns(ctx, db, p)
		if err != nil {
			return deleted, err
		}
		deleted += n
		if n < p.Limit {
			break
		}
		// Yield to the workload: a batch's share of the database is its
		// duration over the duration plus this pause.
		select {
		case <-time.After(retentionYield * time.Since(began)):
		case <-ctx.Done():
			return deleted, ctx.Err()
		}
	}
	return deleted, nil
}
