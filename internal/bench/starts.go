package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/tributary-go/tributary/workflow"
)

// startCase is one case of RunStarts: it inserts config.Items items on s,
// from config.Callers callers at once, and returns how many it inserted.
type startCase struct {
	key, name string
	insert    func(ctx context.Context, s *scratch, config *Config) error
	// table is the table that holds one row an item afterwards.
	table string
}

// startCases are the cases of RunStarts, in order.
var startCases = []startCase{
	{key: "river_insert", name: "River Insert, one job a call", table: "river_job", insert: riverInserts},
	{key: "workflow_start", name: "Workflow Start, one run a call", table: "workflow_runs", insert: workflowStarts},
}

// RunStarts measures how fast runs are started beside River's inserts of
// jobs, with no client working them: Config.Items River jobs inserted by
// Config.Callers callers at once, one Insert a call, then as many workflow
// runs started the same way, one Start a call (ZeroSteps, no options). Each
// case runs on a schema of its own, as Run's; with Config.Rounds above 1
// the cases run that many times, interleaved. The ratio is Start's rate
// over Insert's. Config.Workers and Config.Keyed are not used.
func RunStarts(ctx context.Context, pool *pgxpool.Pool, config *Config, progress io.Writer) (*Result, error) {
	config, err := config.withDefaults()
	if err != nil {
		return nil, err
	}
	if progress == nil {
		progress = io.Discard
	}
	// The callers each hold a connection while they insert.
	config.Workers = max(config.Workers, config.Callers)

	res := &Result{Items: config.Items, Rounds: config.Rounds, Workers: config.Callers}
	if err := pool.QueryRow(ctx, "SHOW server_version").Scan(&res.Server); err != nil {
		return nil, fmt.Errorf("bench: reading the server version: %w", err)
	}
	for _, c := range startCases {
		res.Cases = append(res.Cases, &CaseResult{Key: c.key, Name: c.name})
	}
	for round := range config.Rounds {
		for i, c := range startCases {
			prefix := ""
			if config.Rounds > 1 {
				prefix = fmt.Sprintf("round %d/%d, ", round+1, config.Rounds)
			}
			fmt.Fprintf(progress, "%s%s: %d items… ", prefix, c.name, config.Items)
			r, err := runStartCase(ctx, pool, c, config)
			if err != nil {
				fmt.Fprintln(progress, "failed")
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
			fmt.Fprintf(progress, "%s/s\n", FormatCount(r.Rate))
			res.Cases[i].Rounds = append(res.Cases[i].Rounds, r)
		}
	}
	for _, c := range res.Cases {
		c.summarize()
	}
	res.Ratios = []*Ratio{ratio("workflow Start / River Insert", res.Cases[1], res.Cases[0])}
	return res, nil
}

// runStartCase runs c once on a schema of its own, dropped before it
// returns, and checks that the schema holds every item afterwards.
func runStartCase(ctx context.Context, admin *pgxpool.Pool, c startCase, config *Config) (_ *Round, err error) {
	s, err := newScratch(ctx, admin, config)
	if err != nil {
		return nil, err
	}
	round := &Round{Schema: s.schema}
	defer func() { err = errors.Join(err, s.drop(ctx, admin)) }()

	began := time.Now()
	if err := c.insert(ctx, s, config); err != nil {
		return round, err
	}
	round.Elapsed = time.Since(began)

	n, err := s.count(ctx, `SELECT count(*) FROM `+s.table(c.table))
	if err != nil {
		return round, fmt.Errorf("counting what was inserted: %w", err)
	}
	if n != config.Items {
		return round, fmt.Errorf("%d items inserted, want %d", n, config.Items)
	}
	round.Completed = n
	round.Rate = float64(n) / round.Elapsed.Seconds()
	return round, nil
}

// riverInserts inserts the items as NoopArgs jobs, one Insert a call, with
// an insert-only River client.
func riverInserts(ctx context.Context, s *scratch, config *Config) error {
	client, err := river.NewClient(riverpgxv5.New(s.pool), &river.Config{Logger: config.Logger, Schema: s.schema})
	if err != nil {
		return fmt.Errorf("building the River client: %w", err)
	}
	return byCallersEach(ctx, config, func(ctx context.Context, i int) error {
		_, err := client.Insert(ctx, NoopArgs{N: i}, nil)
		return err
	})
}

// workflowStarts starts the items as ZeroSteps runs, one Start a call, with
// a workflow client that registers the type and is not started.
func workflowStarts(ctx context.Context, s *scratch, config *Config) error {
	client, err := workflow.NewClient(s.pool, &workflow.Config{
		CompletedRunRetention: -1,
		FailedRunRetention:    -1,
		Logger:                config.Logger,
		River:                 &river.Config{Logger: config.Logger, Schema: s.schema},
		Schema:                s.schema,
		Workflows:             []workflow.Registrable{ZeroSteps},
	})
	if err != nil {
		return fmt.Errorf("building the workflow client: %w", err)
	}
	return byCallersEach(ctx, config, func(ctx context.Context, i int) error {
		_, err := ZeroSteps.Start(ctx, client, i, nil)
		return err
	})
}
