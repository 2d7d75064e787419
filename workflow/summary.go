package workflow

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MaxRecentCounted is how many of the runs created in CountRuns' window it
// counts at most: the newest ones.
const MaxRecentCounted = 100_000

// RunCounts are the counts of runs by status that an overview shows.
type RunCounts struct {
	// InFlight counts every unfinished run, however old, by status:
	// pending, running, sleeping and waiting. A run whose River job is
	// being worked counts as running, as ListRuns shows it. Exact.
	InFlight map[Status]int64
	// Since is the start of the window of Recent and Failed.
	Since time.Time
	// Recent counts the runs created since Since (as their ids record it,
	// see ListParams.CreatedAfter) by their status now.
	Recent map[Status]int64
	// RecentCapped is true when more than MaxRecentCounted runs were
	// created since Since: Recent counts the newest MaxRecentCounted.
	RecentCapped bool
	// Failed counts the runs that failed since Since, whenever they were
	// created.
	Failed int64
}

// CountRuns counts runs for an overview, such as a health check or a
// dashboard of the application's own: every unfinished run by status, the
// runs created since since by status, and the runs that failed since
// since. The counts are one snapshot (one read-only repeatable-read
// transaction), so they agree with each other; InFlight and Failed are
// exact, Recent is capped at MaxRecentCounted. Its cost follows the
// unfinished runs (an index-only count), the runs River is working, the
// runs created since since (at most MaxRecentCounted) and the failures
// since since, not the table's size, so it can be called every few seconds.
func (c *Client) CountRuns(ctx context.Context, since time.Time) (*RunCounts, error) {
	counts := &RunCounts{InFlight: map[Status]int64{}, Since: since, Recent: map[Status]int64{}}
	err := pgx.BeginTxFunc(ctx, c.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		// add adds the counts by status n into into and returns their total.
		add := func(into map[Status]int64, n map[string]int64) int64 {
			var total int64
			for status, k := range n {
				into[Status(status)] += k
				total += k
			}
			return total
		}
		ceilingAt := c.listCeilingAt()
		unfinished, err := c.db.CountUnfinished(ctx, tx, ceilingAt)
		if err != nil {
			return fmt.Errorf("count unfinished runs: %w", err)
		}
		add(counts.InFlight, unfinished)
		// Runs stored as pending, sleeping or waiting whose job is running
		// read as running.
		moved, err := c.db.CountRunningJobs(ctx, tx)
		if err != nil {
			return fmt.Errorf("count running runs: %w", err)
		}
		var running int64
		for status, n := range moved {
			counts.InFlight[Status(status)] -= n
			running += n
		}
		counts.InFlight[StatusRunning] += running

		recent, err := c.db.CountRecent(ctx, tx, firstIDAt(since), firstIDAt(ceilingAt), MaxRecentCounted)
		if err != nil {
			return fmt.Errorf("count recent runs: %w", err)
		}
		counts.RecentCapped = add(counts.Recent, recent) >= MaxRecentCounted
		if counts.Failed, err = c.db.CountFailedSince(ctx, tx, since); err != nil {
			return fmt.Errorf("count failed runs: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("workflow: count runs: %w", err)
	}
	return counts, nil
}

// ListFailures lists the runs that failed at or after since, the latest
// failure first, at most limit (1 to 1000), each with its Error but
// without its steps: what an alert needs. A failed run is one whose status
// is StatusFailed (attempts used up, a NonRetryable error, a divergence);
// a cancelled run is not listed. A run's failure time (its FinishedAt) is
// the start of the transaction that failed it, which may commit a moment
// after a later failure's: a caller that polls sees every failure when it
// reaches a few seconds back before the latest failure it saw and skips
// the runs it has seen, as `tributary serve` does to log them. Its cost follows the failures since since (through the index of
// failed runs by finish time), not the table's size.
func (c *Client) ListFailures(ctx context.Context, since time.Time, limit int) ([]*Run, error) {
	if limit < 1 || limit > 1000 {
		return nil, &ValidationError{Field: "limit", Problem: fmt.Sprintf("is %d; use 1 to 1000", limit)}
	}
	runs, err := runsOf(c.db.ListFailedSince(ctx, c.pool, since, limit))
	if err != nil {
		return nil, fmt.Errorf("workflow: list failed runs: %w", err)
	}
	return runs, nil
}
