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

// CountRuns counts runs for an overview: every unfinished run by status,
// the runs created since since by status, and the runs that failed since
// since. Its cost follows the unfinished runs (an index-only count), the
// runs River is working, the runs created since since (at most
// MaxRecentCounted) and the failures since since, not the table's size.
func (c *Client) CountRuns(ctx context.Context, since time.Time) (*RunCounts, error) {
	counts := &RunCounts{InFlight: map[Status]int64{}, Since: since, Recent: map[Status]int64{}}
	err := pgx.BeginTxFunc(ctx, c.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		byStatus := func(into map[Status]int64, sql string, args ...any) (int64, error) {
			rows, err := tx.Query(ctx, sql, args...)
			if err != nil {
				return 0, err
			}
			var (
				total, n int64
				status   string
			)
			_, err = pgx.ForEachRow(rows, []any{&status, &n}, func() error {
				into[Status(status)] += n
				total += n
				return nil
			})
			return total, err
		}
		if _, err := byStatus(counts.InFlight, c.q.countInFlight); err != nil {
			return fmt.Errorf("count unfinished runs: %w", err)
		}
		// Runs stored as pending, sleeping or waiting whose job is running
		// read as running.
		moved := map[Status]int64{}
		running, err := byStatus(moved, c.q.countRunningJobs)
		if err != nil {
			return fmt.Errorf("count running runs: %w", err)
		}
		for status, n := range moved {
			counts.InFlight[status] -= n
		}
		counts.InFlight[StatusRunning] += running

		recent, err := byStatus(counts.Recent, c.q.countRecent, firstIDAt(since), MaxRecentCounted)
		if err != nil {
			return fmt.Errorf("count recent runs: %w", err)
		}
		counts.RecentCapped = recent >= MaxRecentCounted
		if err := tx.QueryRow(ctx, c.q.countFailedSince, since).Scan(&counts.Failed); err != nil {
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
// failure first, at most limit (1 to 1000), without their steps. Its cost
// follows the failures since since (through the index of failed runs by
// finish time), not the table's size.
func (c *Client) ListFailures(ctx context.Context, since time.Time, limit int) ([]*Run, error) {
	if limit < 1 || limit > 1000 {
		return nil, &ValidationError{Field: "limit", Problem: fmt.Sprintf("is %d; use 1 to 1000", limit)}
	}
	rows, err := c.pool.Query(ctx, c.q.listFailedSince, since, limit)
	if err != nil {
		return nil, fmt.Errorf("workflow: list failed runs: %w", err)
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Run, error) { return scanRun(row) })
	if err != nil {
		return nil, fmt.Errorf("workflow: list failed runs: %w", err)
	}
	return runs, nil
}
