package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/tributary-go/tributary/workflow"
)

// insertChunk bounds the items inserted in one statement or transaction.
const insertChunk = 5000

// benchCase is one of the cases Run measures.
type benchCase struct {
	key   string // CaseResult.Key
	name  string // CaseResult.Name
	steps int    // steps or checkpoints per item

	// prepare builds the client that works the case on s and inserts
	// items; the client is not started.
	prepare func(ctx context.Context, s *scratch, config *Config) (*runner, error)
}

// cases are the cases Run measures, in order.
var cases = []benchCase{
	{key: "river_0_steps", name: "River jobs, 0 steps", prepare: prepareRiverNoop},
	{key: "workflow_0_steps", name: "Workflow runs, 0 steps", prepare: prepareWorkflow(ZeroSteps, 0, 0)},
	{key: "river_3_checkpoints", name: "River jobs, 3 checkpoints", steps: Steps, prepare: prepareRiverCheckpoints},
	{key: "workflow_3_steps", name: "Workflow runs, 3 steps", steps: Steps, prepare: prepareWorkflow(ThreeSteps, Steps, 0)},
}

// keyedCases are the cases Config.Keyed adds: the workflow cases with a
// tenant on every run, one tenant and no limit, then 1,000 tenants under a
// limit never reached.
var keyedCases = []benchCase{
	{key: "workflow_0_steps_keyed", name: "Workflow runs, 0 steps, one tenant", prepare: prepareWorkflow(ZeroSteps, 0, 1)},
	{key: "workflow_0_steps_limited", name: "Workflow runs, 0 steps, 1,000 tenants, limit", prepare: prepareWorkflow(ZeroStepsLimited, 0, KeyedTenants)},
	{key: "workflow_3_steps_keyed", name: "Workflow runs, 3 steps, one tenant", steps: Steps, prepare: prepareWorkflow(ThreeSteps, Steps, 1)},
	{key: "workflow_3_steps_limited", name: "Workflow runs, 3 steps, 1,000 tenants, limit", steps: Steps, prepare: prepareWorkflow(ThreeStepsLimited, Steps, KeyedTenants)},
}

// KeyedTenants is how many tenants the limited keyed cases spread their
// runs over.
const KeyedTenants = 1000

// startedCases are the cases Config.Starts adds: the four cases with their
// items inserted or started while the clock runs, by Config.Callers
// callers at once, each one item a call (River's Insert, the workflow's
// Start), as an application's request handlers would.
var startedCases = []benchCase{
	{key: "river_0_steps_inserted", name: "River jobs, 0 steps, inserted by callers", prepare: riverNoop(true)},
	{key: "workflow_0_steps_started", name: "Workflow runs, 0 steps, started by callers", prepare: prepareWorkflowBy(ZeroSteps, 0, 0, true)},
	{key: "river_3_checkpoints_inserted", name: "River jobs, 3 checkpoints, inserted by callers", steps: Steps, prepare: riverCheckpoints(true)},
	{key: "workflow_3_steps_started", name: "Workflow runs, 3 steps, started by callers", steps: Steps, prepare: prepareWorkflowBy(ThreeSteps, Steps, 0, true)},
}

// runner is a case's client, ready to start with its items inserted, or
// with feed to insert them.
type runner struct {
	river *river.Client[pgx.Tx] // whose events report the items' jobs
	kind  string                // the job kind of the items
	start func(context.Context) error
	stop  func(context.Context) error

	// feed, when not nil, inserts the items once the client started, while
	// it works them (Config.Starts); nil when they are inserted already.
	feed func(context.Context) error

	// completed counts the items and steps the database holds as
	// completed.
	completed func(ctx context.Context) (items, steps int, err error)
}

// riverConfig is the River configuration of every case: fetch tuned as
// River's own benchmark tunes it, and one queue of config.Workers workers.
func riverConfig(s *scratch, config *Config) *river.Config {
	return &river.Config{
		FetchCooldown:     fetchCooldown,
		FetchPollInterval: fetchPollInterval,
		Logger:            config.Logger,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: config.Workers}},
		Schema:            s.schema,
	}
}

// --- Cases 1 and 3: raw River ---------------------------------------------

var (
	prepareRiverNoop        = riverNoop(false)
	prepareRiverCheckpoints = riverCheckpoints(false)
)

// riverNoop prepares the case of NoopArgs jobs; byCallers: inserted by
// callers while the clock runs (runner.feed).
func riverNoop(byCallers bool) func(context.Context, *scratch, *Config) (*runner, error) {
	return func(ctx context.Context, s *scratch, config *Config) (*runner, error) {
		workers := river.NewWorkers()
		river.AddWorker(workers, &NoopWorker{})
		return prepareRiver(ctx, s, config, workers, func(i int) river.JobArgs { return NoopArgs{N: i} },
			func(context.Context) (int, error) { return 0, nil }, byCallers)
	}
}

// riverCheckpoints prepares the case of CheckpointArgs jobs, as riverNoop.
func riverCheckpoints(byCallers bool) func(context.Context, *scratch, *Config) (*runner, error) {
	return func(ctx context.Context, s *scratch, config *Config) (*runner, error) {
		table := s.table("bench_checkpoints")
		if _, err := s.pool.Exec(ctx, CheckpointTableSQL(table)); err != nil {
			return nil, fmt.Errorf("creating the checkpoint table: %w", err)
		}
		workers := river.NewWorkers()
		river.AddWorker(workers, &CheckpointWorker{Pool: s.pool, Table: table})
		return prepareRiver(ctx, s, config, workers, func(i int) river.JobArgs { return CheckpointArgs{N: i} },
			func(ctx context.Context) (int, error) { return s.count(ctx, `SELECT count(*) FROM `+table) }, byCallers)
	}
}

// prepareRiver builds a River client working workers and inserts
// config.Items jobs made by args, or, byCallers, gives the runner a feed
// that inserts them one a call; steps counts the checkpoints stored.
func prepareRiver(ctx context.Context, s *scratch, config *Config, workers *river.Workers, args func(i int) river.JobArgs, steps func(context.Context) (int, error), byCallers bool) (*runner, error) {
	rc := riverConfig(s, config)
	rc.Workers = workers
	client, err := river.NewClient(riverpgxv5.New(s.pool), rc)
	if err != nil {
		return nil, fmt.Errorf("building the River client: %w", err)
	}
	kind := args(0).Kind()
	var feed func(context.Context) error
	if byCallers {
		feed = func(ctx context.Context) error {
			return byCallersEach(ctx, config, func(ctx context.Context, i int) error {
				_, err := client.Insert(ctx, args(i), nil)
				return err
			})
		}
	} else if err := insertRiverJobs(ctx, client, config.Items, args); err != nil {
		return nil, err
	}
	return &runner{
		feed:  feed,
		river: client,
		kind:  kind,
		// The client works until stop: cancelling ctx would stop River
		// hard, cancelling jobs in progress.
		start: func(ctx context.Context) error { return client.Start(context.WithoutCancel(ctx)) },
		stop:  client.Stop,
		completed: func(ctx context.Context) (int, int, error) {
			items, err := s.count(ctx, `SELECT count(*) FROM `+s.table("river_job")+` WHERE state = 'completed' AND kind = $1`, kind)
			if err != nil {
				return 0, 0, err
			}
			n, err := steps(ctx)
			return items, n, err
		},
	}, nil
}

// insertRiverJobs inserts n jobs made by args with InsertMany, in chunks
// of insertChunk.
func insertRiverJobs(ctx context.Context, client *river.Client[pgx.Tx], n int, args func(i int) river.JobArgs) error {
	for from := 0; from < n; from += insertChunk {
		params := make([]river.InsertManyParams, 0, min(insertChunk, n-from))
		for i := from; i < min(from+insertChunk, n); i++ {
			params = append(params, river.InsertManyParams{Args: args(i)})
		}
		if _, err := client.InsertMany(ctx, params); err != nil {
			return fmt.Errorf("inserting jobs: %w", err)
		}
	}
	return nil
}

// byCallersEach calls insert for each of config.Items items from
// config.Callers goroutines at once, each taking the next item as it is
// done with one, and returns the first error (the others stop at their
// next item).
func byCallersEach(ctx context.Context, config *Config, insert func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range config.Callers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= config.Items || ctx.Err() != nil {
					return
				}
				if err := insert(ctx, i); err != nil {
					cancel(fmt.Errorf("item %d: %w", i, err))
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// --- Cases 2 and 4: workflows ---------------------------------------------

// prepareWorkflow returns the prepare function of the case of def, whose
// runs have steps steps each, spread over tenants tenants (none for 0).
func prepareWorkflow(def *workflow.Definition[int, int], steps, tenants int) func(context.Context, *scratch, *Config) (*runner, error) {
	return prepareWorkflowBy(def, steps, tenants, false)
}

// prepareWorkflowBy is prepareWorkflow whose runs, byCallers, are started
// by callers while the clock runs (runner.feed), one a Start.
func prepareWorkflowBy(def *workflow.Definition[int, int], steps, tenants int, byCallers bool) func(context.Context, *scratch, *Config) (*runner, error) {
	return func(ctx context.Context, s *scratch, config *Config) (*runner, error) {
		client, err := workflow.NewClient(s.pool, &workflow.Config{
			// No retention pass of the client's own: `bench retention`
			// runs one where it measures it, and nowhere else.
			CompletedRunRetention: -1,
			FailedRunRetention:    -1,
			Logger:                config.Logger,
			Middleware:            config.Middleware,
			River:                 riverConfig(s, config),
			Schema:                s.schema,
			Workflows:             []workflow.Registrable{def},
		})
		if err != nil {
			return nil, fmt.Errorf("building the workflow client: %w", err)
		}
		var feed func(context.Context) error
		if byCallers {
			feed = func(ctx context.Context) error {
				return byCallersEach(ctx, config, func(ctx context.Context, i int) error {
					_, err := def.Start(ctx, client, i, tenantOpts(i, tenants))
					return err
				})
			}
		} else if err := startRuns(ctx, s, client, def, config.Items, tenants); err != nil {
			return nil, fmt.Errorf("starting runs: %w", err)
		}
		return &runner{
			feed:  feed,
			river: client.River(),
			kind:  def.Kind(),
			start: client.Start,
			stop:  client.Stop,
			completed: func(ctx context.Context) (int, int, error) {
				runs, err := s.count(ctx, `SELECT count(*) FROM `+s.table("workflow_runs")+` WHERE status = 'completed'`)
				if err != nil {
					return 0, 0, err
				}
				stepsDone, err := s.count(ctx, `SELECT count(*) FROM `+s.table("step_runs")+` WHERE status = 'completed'`)
				return runs, stepsDone, err
			},
		}, nil
	}
}

// startRuns starts n runs of def, in transactions of up to insertChunk
// runs, spread in turn over tenants tenants ("t0", "t1", …; none for 0).
func startRuns(ctx context.Context, s *scratch, client *workflow.Client, def *workflow.Definition[int, int], n, tenants int) error {
	for from := 0; from < n; from += insertChunk {
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			for i := from; i < min(from+insertChunk, n); i++ {
				if _, err := def.StartTx(ctx, client, tx, i, tenantOpts(i, tenants)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// tenantOpts are the options of item i spread in turn over tenants tenants
// ("t0", "t1", …): nil for none.
func tenantOpts(i, tenants int) *workflow.StartOpts {
	if tenants == 0 {
		return nil
	}
	return &workflow.StartOpts{Tenant: "t" + strconv.Itoa(i%tenants)}
}
