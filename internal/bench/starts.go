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
	{key: "river_insert_many", name: "River InsertMany, 100 jobs a call", table: "river_job", insert: riverInsertMany},
	{key: "workflow_start_many", name: "Workflow StartMany, 100 runs a call", table: "workflow_runs", insert: workflowStartMany},
}

// startManyBatch is how many items a call of the InsertMany and StartMany
// cases inserts.
const startManyBatch = 100

// RunStarts measures how fast runs are started beside River's inserts of
// jobs, with no client working them: Config.Items River jobs inserted by
// Config.Callers callers at once, one Insert a call, then as many workflow
// runs started the same way, one Start a call (ZeroSteps, no options); then
// the same with River's InsertMany and the workflow's StartMany, 100 items
// a call. Each case runs on a schema of its own, as Run's; with
// Config.Rounds above 1 the cases run that many times, interleaved. The
// ratios are Start's rate over Insert's, and StartMany's over InsertMany's.
// Config.Workers and Config.Keyed are not used.
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
	err = runRounds(progress, config, res, func(i int) (*Round, error) {
		return runStartCase(ctx, pool, startCases[i], config)
	})
	if err != nil {
		return nil, err
	}
	res.Ratios = []*Ratio{
		ratio("workflow Start / River Insert", res.Cases[1], res.Cases[0]),
		ratio("workflow StartMany / River InsertMany", res.Cases[3], res.Cases[2]),
	}
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

// startsClient is a workflow client on s that registers ZeroSteps and is
// not started: it only starts runs.
func startsClient(s *scratch, config *Config) (*workflow.Client, error) {
	client, err := workflow.NewClient(s.pool, &workflow.Config{
		CompletedRunRetention: -1,
		FailedRunRetention:    -1,
		Logger:                config.Logger,
		River:                 &river.Config{Logger: config.Logger, Schema: s.schema},
		Schema:                s.schema,
		Workflows:             []workflow.Registrable{ZeroSteps},
	})
	if err != nil {
		return nil, fmt.Errorf("building the workflow client: %w", err)
	}
	return client, nil
}

// workflowStarts starts the items as ZeroSteps runs, one Start a call, with
// a workflow client that registers the type and is not started.
func workflowStarts(ctx context.Context, s *scratch, config *Config) error {
	client, err := startsClient(s, config)
	if err != nil {
		return err
	}
	return byCallersEach(ctx, config, func(ctx context.Context, i int) error {
		_, err := ZeroSteps.Start(ctx, client, i, nil)
		return err
	})
}

// batches calls insert with each batch of up to startManyBatch items (from
// and to, to excluded), from config.Callers callers at once.
func batches(ctx context.Context, config *Config, insert func(ctx context.Context, from, to int) error) error {
	perBatch := &Config{Items: (config.Items + startManyBatch - 1) / startManyBatch, Callers: config.Callers}
	return byCallersEach(ctx, perBatch, func(ctx context.Context, b int) error {
		from := b * startManyBatch
		return insert(ctx, from, min(from+startManyBatch, config.Items))
	})
}

// riverInsertMany inserts the items as NoopArgs jobs with InsertMany,
// startManyBatch a call.
func riverInsertMany(ctx context.Context, s *scratch, config *Config) error {
	client, err := river.NewClient(riverpgxv5.New(s.pool), &river.Config{Logger: config.Logger, Schema: s.schema})
	if err != nil {
		return fmt.Errorf("building the River client: %w", err)
	}
	return batches(ctx, config, func(ctx context.Context, from, to int) error {
		params := make([]river.InsertManyParams, 0, to-from)
		for i := from; i < to; i++ {
			params = append(params, river.InsertManyParams{Args: NoopArgs{N: i}})
		}
		_, err := client.InsertMany(ctx, params)
		return err
	})
}

// workflowStartMany starts the items as ZeroSteps runs with StartMany,
// startManyBatch a call.
func workflowStartMany(ctx context.Context, s *scratch, config *Config) error {
	client, err := startsClient(s, config)
	if err != nil {
		return err
	}
	return batches(ctx, config, func(ctx context.Context, from, to int) error {
		params := make([]workflow.StartManyParams[int], 0, to-from)
		for i := from; i < to; i++ {
			params = append(params, workflow.StartManyParams[int]{Input: i})
		}
		_, err := ZeroSteps.StartMany(ctx, client, params)
		return err
	})
}
