package bench

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/workflow"
)

// The work of the cases: what tributary bench and the workflow package
// benchmark (workflow/bench_test.go) both run, so that the two measure the
// same thing.

// Steps is the number of steps of ThreeSteps and of checkpoints
// CheckpointWorker stores per job.
const Steps = 3

// StepOut is the small output of every step of ThreeSteps and every
// checkpoint of CheckpointWorker.
type StepOut struct {
	Step  int    `json:"step"`
	Value string `json:"value"`
}

// stepNames are the names of ThreeSteps' steps.
var stepNames = [Steps]string{"one", "two", "three"}

// ZeroSteps is the workflow of runs of 0 steps, which return their input:
// the cost of a run alone, next to a NoopArgs job.
var ZeroSteps = workflow.Define("bench_zero_steps", zeroSteps, nil)

// ThreeSteps is the workflow of runs of Steps steps, each a workflow.Step
// returning a StepOut: the cost of a step, next to a CheckpointArgs job.
var ThreeSteps = workflow.Define("bench_three_steps", threeSteps, nil)

// KeyedLimit is the tenant limit of ZeroStepsLimited and ThreeStepsLimited:
// more than a tenant of the keyed cases ever has running, so that it costs
// its admission and give-back but never holds a run back.
const KeyedLimit = 1000

// ZeroStepsLimited and ThreeStepsLimited are ZeroSteps and ThreeSteps under
// a tenant limit of KeyedLimit: the cost of a limit never reached.
var (
	ZeroStepsLimited  = workflow.Define("bench_zero_steps_limited", zeroSteps, &workflow.DefineOpts{TenantLimit: KeyedLimit})
	ThreeStepsLimited = workflow.Define("bench_three_steps_limited", threeSteps, &workflow.DefineOpts{TenantLimit: KeyedLimit})
)

func zeroSteps(_ workflow.Context, n int) (int, error) { return n, nil }

func threeSteps(ctx workflow.Context, n int) (int, error) {
	total := n
	for i, name := range stepNames {
		out, err := workflow.Step(ctx, name, func(context.Context) (StepOut, error) {
			return StepOut{Step: i, Value: "ok"}, nil
		})
		if err != nil {
			return 0, err
		}
		total += out.Step
	}
	return total, nil
}

// NoopArgs is the raw River job whose worker, NoopWorker, does nothing: the
// cost of a River job alone.
type NoopArgs struct {
	N int `json:"n"`
}

// Kind is "bench_noop".
func (NoopArgs) Kind() string { return "bench_noop" }

// NoopWorker works NoopArgs jobs by doing nothing.
type NoopWorker struct {
	river.WorkerDefaults[NoopArgs]
}

// Work returns nil.
func (*NoopWorker) Work(context.Context, *river.Job[NoopArgs]) error { return nil }

// CheckpointArgs is the raw River job whose worker, CheckpointWorker,
// stores Steps checkpoints by hand: what ThreeSteps does, without Tributary.
type CheckpointArgs struct {
	N int `json:"n"`
}

// Kind is "bench_checkpoint".
func (CheckpointArgs) Kind() string { return "bench_checkpoint" }

// CheckpointWorker works CheckpointArgs jobs by storing Steps StepOut
// outputs in Table, each in a transaction of its own: one autocommit
// INSERT, so one round trip and one commit per step, the cheapest
// hand-rolled form.
type CheckpointWorker struct {
	river.WorkerDefaults[CheckpointArgs]

	// Pool runs the INSERTs.
	Pool *pgxpool.Pool

	// Table is the checkpoint table, as SQL names it (quoted and
	// schema-qualified where needed), created by CheckpointTableSQL.
	Table string
}

// Work inserts the job's Steps checkpoints, one statement each.
func (w *CheckpointWorker) Work(ctx context.Context, job *river.Job[CheckpointArgs]) error {
	insert := `INSERT INTO ` + w.Table + ` (job_id, step, output) VALUES ($1, $2, $3)`
	for i := range Steps {
		out, err := json.Marshal(StepOut{Step: i, Value: "ok"})
		if err != nil {
			return err
		}
		if _, err := w.Pool.Exec(ctx, insert, job.ID, i, out); err != nil {
			return fmt.Errorf("checkpoint %d of job %d: %w", i, job.ID, err)
		}
	}
	return nil
}

// CheckpointTableSQL is the CREATE TABLE statement of a CheckpointWorker's
// table, named table as SQL names it.
func CheckpointTableSQL(table string) string {
	return `CREATE TABLE ` + table + ` (
	job_id bigint NOT NULL,
	step   int    NOT NULL,
	output jsonb  NOT NULL,
	PRIMARY KEY (job_id, step)
)`
}
