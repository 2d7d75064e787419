package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/workflow"
)

// DefaultOldRuns is how many old finished runs RunRetention seeds for the
// retention to delete.
const DefaultOldRuns = 1_000_000

// RetentionConfig configures RunRetention.
type RetentionConfig struct {
	// OldRuns is how many runs, finished 40 days ago (past the default
	// retention), each phase seeds, with a step each.
	//
	// Defaults to DefaultOldRuns (1,000,000).
	OldRuns int

	// Items is how many 3-step workflow runs each phase works.
	//
	// Defaults to DefaultItems (5000).
	Items int

	// Rounds is how many times the two phases run; their order alternates
	// from one round to the next.
	//
	// Defaults to DefaultRounds (1).
	Rounds int

	// Workers is the MaxWorkers of the working client's queue.
	//
	// Defaults to DefaultWorkers (20).
	Workers int

	// Logger receives River's, the engine's and the migrator's logs.
	//
	// Defaults to a logger that discards everything.
	Logger *slog.Logger
}

// RetentionRound is one phase's measurement.
type RetentionRound struct {
	// Retention is whether the retention deleted old runs meanwhile.
	Retention bool    `json:"retention"`
	Rate      float64 `json:"runs_per_second"`
	// Deleted and DeleteRate are the old runs the retention deleted while
	// the runs were worked, and how fast.
	Deleted    int     `json:"deleted,omitempty"`
	DeleteRate float64 `json:"deleted_per_second,omitempty"`
}

// RetentionResult is what RunRetention measured.
type RetentionResult struct {
	Config *RetentionConfig  `json:"-"`
	Rounds []*RetentionRound `json:"rounds"`
	// Without and With are the median rates, in runs per second, of the
	// phases without and with the retention deleting; Ratio is With over
	// Without (1 means no cost).
	Without float64 `json:"without"`
	With    float64 `json:"with"`
	Ratio   float64 `json:"ratio"`
}

// RunRetention measures what run retention costs the workflows that run
// while it deletes: each phase seeds OldRuns runs finished 40 days ago on a
// schema of its own, then works Items 3-step runs, the retention
// (workflow.Client.DeleteExpiredRuns, in a loop on a client of its own)
// deleting the old runs meanwhile or not.
func RunRetention(ctx context.Context, pool *pgxpool.Pool, config *RetentionConfig, progress io.Writer) (*RetentionResult, error) {
	c := RetentionConfig{}
	if config != nil {
		c = *config
	}
	if err := countDefaults("RetentionConfig", []countField{
		{"OldRuns", &c.OldRuns, DefaultOldRuns},
		{"Items", &c.Items, DefaultItems},
		{"Rounds", &c.Rounds, DefaultRounds},
		{"Workers", &c.Workers, DefaultWorkers},
	}); err != nil {
		return nil, err
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	res := &RetentionResult{Config: &c}
	for round := range c.Rounds {
		order := []bool{false, true}
		if round%2 == 1 {
			order = []bool{true, false}
		}
		for _, retention := range order {
			fmt.Fprintf(progress, "round %d/%d, retention %t: seeding %d old runs…\n", round+1, c.Rounds, retention, c.OldRuns)
			r, err := retentionPhase(ctx, pool, &c, retention)
			if err != nil {
				return nil, fmt.Errorf("round %d, retention %t: %w", round+1, retention, err)
			}
			fmt.Fprintf(progress, "  %.0f runs/s; retention deleted %d old runs (%.0f/s)\n", r.Rate, r.Deleted, r.DeleteRate)
			res.Rounds = append(res.Rounds, r)
		}
	}
	var with, without []float64
	for _, r := range res.Rounds {
		if r.Retention {
			with = append(with, r.Rate)
		} else {
			without = append(without, r.Rate)
		}
	}
	res.With, res.Without = median(with), median(without)
	res.Ratio = divide(res.With, res.Without)
	return res, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Sorted(slices.Values(xs))
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// seedOldRunsSQL inserts $1 completed runs created and finished at $2, with
// UUIDv7 ids of that time (the retention reads the oldest ids first), and
// a completed step each.
const seedOldRunsSQL = `
WITH runs AS (
	INSERT INTO workflow_runs (id, workflow_type, input, output, max_attempts, queue, priority, metadata, tags, status,
		created_at, updated_at, started_at, finished_at)
	SELECT (lpad(to_hex((extract(epoch FROM $2::timestamptz) * 1000)::bigint + i / 1000), 12, '0')
			|| '7' || substr(md5(i::text), 1, 3) || '8' || substr(md5(i::text), 4, 15))::uuid,
		'bench_three_steps', to_jsonb(i), to_jsonb(i), 10, 'default', 1, '{}', '{}', 'completed', $2, $2, $2, $2
	FROM generate_series(1, $1) AS i
	RETURNING id
)
INSERT INTO step_runs (run_id, name, kind, status, result_type, output, started_at, finished_at)
SELECT id, 'one', 'step', 'completed', 'int', '1', $2, $2 FROM runs`

// retentionPhase is one phase on a schema of its own.
func retentionPhase(ctx context.Context, admin *pgxpool.Pool, c *RetentionConfig, retention bool) (_ *RetentionRound, err error) {
	config := &Config{Items: c.Items, Logger: c.Logger, Rounds: 1, Workers: c.Workers}
	s, err := newScratch(ctx, admin, config)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, s.drop(ctx, admin)) }()

	old := time.Now().Add(-40 * 24 * time.Hour)
	for from := 0; from < c.OldRuns; from += 100_000 {
		n := min(100_000, c.OldRuns-from)
		if _, err := s.pool.Exec(ctx, seedOldRunsSQL, n, old.Add(time.Duration(from)*time.Millisecond)); err != nil {
			return nil, fmt.Errorf("seeding old runs: %w", err)
		}
	}
	if _, err := s.pool.Exec(ctx, `VACUUM ANALYZE workflow_runs, step_runs`); err != nil {
		return nil, fmt.Errorf("vacuuming the seeded tables: %w", err)
	}

	r, err := prepareWorkflow(ThreeSteps, Steps, 0)(ctx, s, config)
	if err != nil {
		return nil, err
	}
	round := &RetentionRound{Retention: retention}
	var (
		deleted int
		wg      sync.WaitGroup
		delErr  error
	)
	measureCtx, stop := context.WithCancel(ctx)
	if retention {
		cleaner, err := workflow.NewClient(s.pool, &workflow.Config{Logger: c.Logger, Schema: s.schema})
		if err != nil {
			stop()
			return nil, err
		}
		wg.Go(func() {
			for measureCtx.Err() == nil {
				n, err := cleaner.DeleteExpiredRuns(measureCtx)
				deleted += n
				if err != nil {
					if measureCtx.Err() == nil {
						delErr = err
					}
					return
				}
				if n == 0 {
					return // all deleted
				}
			}
		})
	}
	elapsed, err := measure(ctx, r, c.Items)
	stop()
	wg.Wait()
	if err := errors.Join(err, delErr); err != nil {
		return nil, err
	}
	round.Rate = float64(c.Items) / elapsed.Seconds()
	if retention {
		round.Deleted = deleted
		round.DeleteRate = float64(deleted) / elapsed.Seconds()
	}
	return round, nil
}
