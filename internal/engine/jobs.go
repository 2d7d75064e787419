package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
)

// ErrJobNotRunning means River no longer considers an attempt's job running
// (it was rescued or cancelled meanwhile): the attempt must stop.
var ErrJobNotRunning = errors.New("workflow: the attempt's River job is no longer running (rescued or cancelled); abandoning this attempt")

// Jobs changes River's jobs in one schema. Each method that takes a
// transaction runs inside the caller's, so that a run's row and its River
// job change together (invariant TRANSACTIONAL_EDGES). State changes go
// through River's own driver executor, the path river.JobCompleteTx takes:
// a job is only moved out of the running state by the worker that holds
// it, and River's completer, which later records the attempt's outcome "if
// still running", then leaves the job as set here.
type Jobs struct {
	driver *riverpgxv5.Driver
	q      *Queries
	schema string
	time   rivertype.TimeGenerator
}

// NewJobs returns the Jobs of q's schema, on real time: this machine's
// clock for the times set in Go, the database's now() in SQL (see
// WithClock).
func NewJobs(q *Queries) *Jobs {
	return &Jobs{driver: riverpgxv5.New(nil), q: q, schema: q.schema, time: realTime{}}
}

// WithClock returns a copy of j that decides and records times by clock
// (workflow.Config.Clock), as River's own services take their
// TimeGenerator: Now for the times set in Go (a job's finalized_at, an
// attempt error's time), NowOrNil as its statements' now (nil: the
// database's now()).
func (j *Jobs) WithClock(clock rivertype.TimeGenerator) *Jobs {
	c := *j
	c.time = clock
	return &c
}

// realTime is the TimeGenerator of Jobs without a clock, as River's own
// is in production: the machine's clock, and nil for SQL's now.
type realTime struct{}

func (realTime) Now() time.Time { return time.Now() }

func (realTime) NowOrNil() *time.Time { return nil }

// The statements of Jobs that read or lock River's tables.
var (
	lockJobStateStmt = define(`SELECT state::text, scheduled_at > coalesce($2::timestamptz, now()) + interval '1 second' FROM {s}river_job WHERE id = $1 FOR UPDATE`)

	scheduledWithinStmt = define(`SELECT id, queue, scheduled_at FROM {s}river_job
		WHERE state = 'scheduled' AND queue = ANY($1) AND scheduled_at < coalesce($4::timestamptz, now()) + make_interval(secs => $2)
		ORDER BY scheduled_at LIMIT $3`)
)

func (j *Jobs) setStateTx(ctx context.Context, tx pgx.Tx, params *riverdriver.JobSetStateIfRunningParams) error {
	rows, err := j.driver.UnwrapExecutor(tx).JobSetStateIfRunningMany(ctx, &riverdriver.JobSetStateIfRunningManyParams{
		ID:              []int64{params.ID},
		Attempt:         []*int{params.Attempt},
		ErrData:         [][]byte{params.ErrData},
		FinalizedAt:     []*time.Time{params.FinalizedAt},
		MetadataDoMerge: []bool{params.MetadataDoMerge},
		MetadataUpdates: [][]byte{params.MetadataUpdates},
		Now:             j.time.NowOrNil(),
		ScheduledAt:     []*time.Time{params.ScheduledAt},
		Schema:          j.schema,
		State:           []rivertype.JobState{params.State},
	})
	if err != nil {
		return fmt.Errorf("set River job %d to %s: %w", params.ID, params.State, err)
	}
	if len(rows) == 0 || rows[0].State != params.State {
		return ErrJobNotRunning
	}
	return nil
}

// CompleteTx completes running job jobID, merging metadata (a JSON object)
// into its metadata. A job that is not running keeps its state: CompleteTx
// then returns ErrJobNotRunning, or nil when the job is completed already.
// (River merges metadata into it all the same, as it does for a worker's
// metadata updates.)
func (j *Jobs) CompleteTx(ctx context.Context, tx pgx.Tx, jobID int64, metadata []byte) error {
	return j.setStateTx(ctx, tx, riverdriver.JobSetStateCompleted(jobID, j.time.Now().UTC(), metadata))
}

// DiscardTx ends running job as discarded (no more retries), with cause as
// the attempt's error River UI shows. A job that is not running is left
// alone: DiscardTx then returns ErrJobNotRunning, or nil when the job is
// discarded already.
func (j *Jobs) DiscardTx(ctx context.Context, tx pgx.Tx, job *rivertype.JobRow, cause error) error {
	now := j.time.Now().UTC()
	return j.setStateTx(ctx, tx, riverdriver.JobSetStateDiscarded(job.ID, now, attemptError(now, job.Attempt, cause), nil))
}

// CancelTx ends running job as cancelled, like DiscardTx.
func (j *Jobs) CancelTx(ctx context.Context, tx pgx.Tx, job *rivertype.JobRow, cause error) error {
	now := j.time.Now().UTC()
	return j.setStateTx(ctx, tx, riverdriver.JobSetStateCancelled(job.ID, now, attemptError(now, job.Attempt, cause), nil))
}

func attemptError(at time.Time, attempt int, cause error) []byte {
	errData, _ := json.Marshal(rivertype.AttemptError{At: at, Attempt: attempt, Error: cause.Error()})
	return errData
}

// NotifyQueueTx sends River's insert notification for queue, the one River
// sends when a job is inserted, so that the queue's idle producers fetch at
// once instead of at their next poll. It is delivered when tx commits.
func (j *Jobs) NotifyQueueTx(ctx context.Context, tx pgx.Tx, queue string) error {
	return j.driver.UnwrapExecutor(tx).NotifyMany(ctx, insertNotification(j.schema, queue))
}

// insertNotification is River's insert notification for queue in schema.
func insertNotification(schema, queue string) *riverdriver.NotifyManyParams {
	payload, _ := json.Marshal(map[string]string{"queue": queue})
	return &riverdriver.NotifyManyParams{Payload: []string{string(payload)}, Schema: schema, Topic: insertTopic}
}

// insertTopic is the topic of River's insert notifications
// (notifier.NotificationTopicInsert, internal to River).
const insertTopic = "river_insert"

// LockStateTx locks job jobID's row until tx ends and returns its state,
// and whether it is due more than a second from now (its time was moved
// later, as a debounced start does, after a wake-up was timed for it).
// found is false when there is no such job (yet).
func (j *Jobs) LockStateTx(ctx context.Context, tx pgx.Tx, jobID int64) (state rivertype.JobState, early, found bool, err error) {
	err = tx.QueryRow(ctx, j.q.sql(lockJobStateStmt), jobID, j.time.NowOrNil()).Scan(&state, &early)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, false, nil
	}
	if err != nil {
		return "", false, false, fmt.Errorf("lock River job %d: %w", jobID, err)
	}
	return state, early, true, nil
}

// Scheduled is a job waiting in the scheduled state.
type Scheduled struct {
	ID          int64
	Queue       string
	ScheduledAt time.Time
}

// ScheduledWithin returns the scheduled jobs of queues due before
// within from now (those overdue included), the nearest first, at most
// limit of them.
func (j *Jobs) ScheduledWithin(ctx context.Context, db DBTX, queues []string, within time.Duration, limit int) ([]Scheduled, error) {
	rows, err := db.Query(ctx, j.q.sql(scheduledWithinStmt), queues, within.Seconds(), limit, j.time.NowOrNil())
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Scheduled, error) {
		var s Scheduled
		err := row.Scan(&s.ID, &s.Queue, &s.ScheduledAt)
		return s, err
	})
}

// CompleteRunningCTE is the data-modifying CTE that completes, in a
// statement of the caller's, the River jobs of a batch that are still
// running, as JobSetStateIfRunningMany would: a job that is no longer
// running (rescued, cancelled, completed by River's completer) is left
// alone and not returned. It expects a CTE named v with a job_id column,
// and the statement's now parameter (nil: the database's now()) in $now,
// which the caller replaces with its own parameter's number; it names its
// own result "jobs", one row per completed job: its id and finalized_at.
// {s} is the schema prefix, qualified by the caller's statement.
//
// It looks the jobs up by the join alone, as completeRunsStmt looks up the
// runs: with "j.id = ANY($1)" (the batch's ids) beside "j.id = v.job_id",
// the generic plan found the jobs through the primary key and then scanned
// the whole batch for each job, which costs the square of the batch: 19 of
// 22 ms for a batch of 300 (TestCompleteRunsPlanReadsTheBatchOnce).
const CompleteRunningCTE = `jobs AS (
	UPDATE {s}river_job j SET state = 'completed', finalized_at = coalesce($now::timestamptz, now())
	FROM v
	WHERE j.id = v.job_id AND (j.state = 'running') IS TRUE
	RETURNING j.id, j.finalized_at
)`
