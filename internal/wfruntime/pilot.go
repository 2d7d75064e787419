package wfruntime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivertype"

	"github.com/tributary-go/tributary/internal/engine"
)

// A worker frees its River slot as soon as the workflow function returns,
// as a raw River job does, instead of holding it until the run's completion
// commits. The run and its job still complete in one transaction, by
// whichever of two writers gets there first:
//
//   - The engine's completion batcher (Completer.Flush), queued the moment
//     the attempt ends. It is the usual writer, and it keeps Result prompt:
//     it writes at once after a quiet spell and within workflow's completionSpacing
//     under load, where River's completer waits up to 250 ms to gather a
//     batch.
//   - River's own completer, which completes the job after Work returns.
//     Its batches go through River's pilot, which the engine's driver
//     (internal/engine.Driver) routes to completer.CompleteWithRiver: for a
//     job whose run is still pending completion, it completes the run in
//     the same transaction. So River can never complete a workflow job without
//     its run, even when its completer runs first.
//
// Both writers take the job's row lock and only complete a job that is
// still running, so the second to commit finds nothing left to do. And
// the usual second is not sent at all: once the batch has completed a job
// with a synchronous commit, the pilot answers River's completer for it
// from memory (Completer.TakeCompleted), with the row River's update would
// have returned, so that each job is written once and the two writers do
// not wait on each other's row locks. If the process dies before either
// commits, the job is still running: River rescues it and the run replays
// from its memos, as after any crash.
//
// With workflow.Config.AsyncCompletion the batch commits without waiting for its WAL
// to reach the disk: its completion is visible (Result returns it) before
// it is durable, and a crash of Postgres in between takes it back, the job
// running again. River's completer holds the job until its own write
// succeeds, retrying through the outage; had the batch forgotten the run,
// it would then complete the job without it (and RepairRuns fail the run).
// So with AsyncCompletion a run stays pending until its completion is known
// to be durable, and only the pilot forgets it, in a transaction that
// commits synchronously (makeDurableTx):
//
//   - a run whose job reads running again (a crash lost its completion) is
//     completed there, with the output and memos the batch had committed:
//     Result's answer comes back, and no step runs again;
//   - for a run whose completion it finds committed, the transaction makes
//     sure that the completion is on disk before the run is forgotten:
//     either the server's WAL is flushed past the batch's commit (a
//     position read after that commit), or the transaction writes a WAL
//     record of its own, so that its synchronous commit flushes the WAL up
//     to its commit record, past the batch's. A crash between the batch's
//     commit and this transaction cannot fool the comparison: a completion
//     the crash lost reads running here and is written here, and one it
//     kept is durable.
//
// What AsyncCompletion saves is then the flush in each completion batch:
// River's completer, off every run's path, pays at most one flush per batch
// of its own (every 250 ms, or per 100 jobs under load), and none when the
// WAL writer or a synchronous commit (of a memo, say) has flushed the WAL
// already. A completion that no pending entry covers (a worker waiting for
// its own, past Pending.Limit) has no one to restore it, so a
// batch holding one commits synchronously.
//
// The pilot is River's plugin point for exactly this (River Pro uses it to
// keep its own writes atomic with River's). It is marked as River's
// internal API, so only internal/engine touches it, and its conformance
// tests, like package workflow's TestCompletionByRiverCompleter, fail if River stops
// routing completions through it, and TestPostgresCrashKeepsCompletedRuns if River's completer
// stops retrying a batch through an outage of the database.

// Completion completes a run with its output, and its River job.
type Completion struct {
	JobID     int64
	RunID     uuid.UUID
	Type      string // the run's workflow type
	Attempt   int
	HasParent bool
	// Memos are the step memos stored with the completion (workflow's
	// Step).
	Memos     []*engine.Memo
	Output    []byte
	StartedAt *time.Time
	// Job is the run's River job as the attempt was given it; the pilot
	// answers River's completer with it once the batch has completed it
	// (Completer.TakeCompleted). Nil: River's completer writes the job
	// again, finding it completed.
	Job *rivertype.JobRow
}

// RestoredCompletionsMsg is logged when River's completer completes runs
// again whose asynchronous completion a crash of Postgres lost.
const RestoredCompletionsMsg = "tributary: Completed runs again whose completion a Postgres crash lost (AsyncCompletion); their output is the one Result returned"

// Completer is the engine's Completer (see internal/engine) of a workflow
// client: River's completer completes a workflow run together with its job
// (see the comment at the top).
type Completer struct {
	c CompleterConfig
}

// CompleterConfig is what a Completer needs of its workflow client.
type CompleterConfig struct {
	Logger  *slog.Logger
	Pool    *pgxpool.Pool
	Queries *engine.Queries
	Jobs    *engine.Jobs

	// WritePool is the pool for batched writes (workflow's batch pool
	// while the client is started).
	WritePool func() engine.Pool
	// Pending are the client's runs pending completion.
	Pending *Pending
	// Async is workflow.Config.AsyncCompletion.
	Async bool
	// ClientID is the River client's ID.
	ClientID func() string
	// KindPrefix begins the River job kind of every workflow type.
	KindPrefix string

	// SQLNow is the now parameter of the engine's statements
	// (Runtime.SQLNow).
	SQLNow func() *time.Time
	// WakeRunTx wakes run runID, a parent waiting for a child run that
	// completes, in tx.
	WakeRunTx func(ctx context.Context, tx pgx.Tx, runID uuid.UUID) error
	// RunCompleted, when set, reports a run completed, once its
	// completion has committed (workflow's HookRunFinished); nil when no
	// such hook is installed.
	RunCompleted func(ctx context.Context, runID uuid.UUID, typ string)

	// FailBatch and FailPilot, when set and true, fail every completion
	// batch (Flush) and every call of CompleteWithRiver (tests).
	FailBatch func() bool
	FailPilot func() bool
}

// NewCompleter is the Completer of c's client.
func NewCompleter(c CompleterConfig) *Completer { return &Completer{c: c} }

// CompleteWithRiver is called with the jobs River's completer is about to
// mark completed. When some of them have a run pending completion, it
// completes those runs first, in one transaction with River's own update,
// which commits synchronously (see the comment at the top).
func (cp *Completer) CompleteWithRiver(ctx context.Context, jobIDs []int64, apply func(context.Context, pgx.Tx) error) (bool, error) {
	c := &cp.c
	if c.FailPilot != nil && c.FailPilot() {
		return false, errors.New("tributary: River's completer failed by the test")
	}
	reqs := c.Pending.of(jobIDs)
	if len(reqs) == 0 {
		return false, nil
	}
	var (
		restored int
		finished map[int64]bool
	)
	err := retryDeadlock(func() error {
		return pgx.BeginFunc(ctx, c.WritePool(), func(tx pgx.Tx) error {
			var (
				completed map[int64]time.Time
				err       error
			)
			completed, finished, err = cp.completeRunsTx(ctx, tx, reqs, false)
			if err != nil {
				return err
			}
			restored = 0
			if c.Async {
				if restored, err = cp.makeDurableTx(ctx, tx, reqs, completed); err != nil {
					return err
				}
			}
			return apply(ctx, tx)
		})
	})
	if err != nil {
		return false, fmt.Errorf("tributary: complete runs with River's completer: %w", err)
	}
	// A run the engine's batch completed asynchronously, which a crash
	// took back and this transaction completed again, was reported by the
	// batch already.
	if len(finished) > 0 {
		cp.reportCompleted(ctx, c.Pending.notCommitted(reqs), finished)
	}
	c.Pending.done(reqs)
	if restored > 0 {
		c.Logger.WarnContext(ctx, RestoredCompletionsMsg, slog.Int("runs", restored))
	}
	return true, nil
}

// TakeCompleted returns those of jobIDs, jobs River's completer is about
// to mark completed, that the engine's batch completed with a synchronous
// commit, each as River's update would return it, and forgets them: River's
// completer then writes only the jobs the batch has not (see the comment
// at the top). A completion committed asynchronously is not among them: it
// stays pending, for CompleteWithRiver to make durable.
//
// River's completer often comes for a job while its completion still waits
// in the batch (a third of the jobs of a busy client, measured). It then
// waits, at most takeWait, for the batch to try them, so that the job is
// written once, by the batch, instead of by River's update in
// CompleteWithRiver and again, finding it done, by the batch, each waiting
// on the other's row lock. It waits off every run's path: River's
// completer works after the attempts have ended.
//
// Should the database lose such a completion after all (a failover to a
// standby that had not received it), the job reads running on the new
// server with no worker: the worker registry, seeing the server change,
// makes it available again and the run replays from its memos (see
// wfruntime's orphans.go), as CompletedByRiver would have after River's
// update.
func (cp *Completer) TakeCompleted(ctx context.Context, jobIDs []int64) map[int64]*rivertype.JobRow {
	cp.c.Pending.awaitTried(ctx, jobIDs, takeWait)
	return cp.c.Pending.take(jobIDs)
}

// takeWait bounds how long River's completer waits for the engine's batch
// to try the completions it came for (Completer.TakeCompleted): ten of
// workflow's completion spacings. Past it, CompleteWithRiver completes
// the runs with River's update, as when the batch fails.
const takeWait = 100 * time.Millisecond

// LostCompletionsMsg is logged when River's completer completed workflow
// jobs without their run, and the client made them available again.
const LostCompletionsMsg = "tributary: The database lost the completion of runs this client had completed (a failover to a standby that had not received it); their jobs are available again and the runs replay from their memos"

// CompletedByRiver is given the jobs River's completer completed itself,
// having found them running. For a workflow job that is never right: a
// run's job completes with its run, by the engine's batch or through
// CompleteWithRiver. It happens when the database lost the batch's
// synchronous commit (a failover to a standby under asynchronous
// replication that had not received it) while River's completer still held
// the job, so that the job reads running again on the new primary, and the
// completion had been forgotten here. Those jobs whose run is unfinished are
// made available again at once, and the runs replay from their memos; were
// this to fail, RepairRuns fails the run later ("completed outside
// Tributary"), and the failure is logged.
func (cp *Completer) CompletedByRiver(ctx context.Context, jobs []*rivertype.JobRow) {
	c := &cp.c
	var ids []int64
	for _, job := range jobs {
		if strings.HasPrefix(job.Kind, c.KindPrefix) {
			ids = append(ids, job.ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	var rescued *engine.RescuedJobs
	err := pgx.BeginFunc(ctx, c.Pool, func(tx pgx.Tx) error {
		var err error
		rescued, err = c.Jobs.RescueLostCompletionsTx(ctx, tx, ids, c.ClientID())
		return err
	})
	if err != nil {
		c.Logger.ErrorContext(ctx, "tributary: River's completer completed workflow jobs without their run, and they could not be made available again; RepairRuns will fail those runs",
			slog.Any("job_ids", ids), slog.String("err", err.Error()))
		return
	}
	n := 0
	for _, k := range rescued.ByClient {
		n += k
	}
	if n > 0 {
		c.Logger.WarnContext(ctx, LostCompletionsMsg, slog.Int("runs", n))
	}
}

// makeDurableTx makes sure, before tx commits, that its commit leaves the
// completions of reqs durable (see the comment at the top). Those tx
// completed itself (completed) it writes; for the others, which the
// engine's batch committed asynchronously (or whose job is no longer
// running), the server's WAL must be flushed past the batch's commit, or tx
// writes a WAL record of its own, so that its synchronous commit flushes
// the WAL past the batch's commit. It returns how many runs tx completed
// again after a crash lost their asynchronous completion.
func (cp *Completer) makeDurableTx(ctx context.Context, tx pgx.Tx, reqs []Completion, completed map[int64]time.Time) (int, error) {
	c := &cp.c
	var done, others []Completion
	for _, req := range reqs {
		if _, ok := completed[req.JobID]; ok {
			done = append(done, req)
		} else {
			others = append(others, req)
		}
	}
	restored := c.Pending.countCommitted(done)
	if len(done) > 0 || len(others) == 0 {
		return restored, nil // tx writes, so its commit flushes the WAL past every earlier commit
	}
	flushed, err := c.Queries.WALFlushLSN(ctx, tx)
	if err != nil {
		return 0, fmt.Errorf("read the WAL flush position: %w", err)
	}
	if c.Pending.flushedBy(others, flushed) {
		return restored, nil
	}
	// tx wrote no WAL, and such a transaction commits without a flush.
	if err := c.Queries.WriteWALRecordTx(ctx, tx); err != nil {
		return 0, fmt.Errorf("flush the completions committed asynchronously: %w", err)
	}
	return restored, nil
}

// deadlockDetected is Postgres's SQLSTATE for a transaction it aborted to
// break a deadlock.
const deadlockDetected = "40P01"

// retryDeadlock runs fn, and runs it again, up to twice more, while
// Postgres aborts it to break a deadlock. The two writers of a run's
// completion (see the comment at the top) lock the same jobs in their own
// orders: the engine's batch its jobs in one statement, River's completer
// its batch in two (the runs pending completion, then the rest), so under
// a burst of completions they can wait on each other in a cycle. Postgres
// aborts one after deadlock_timeout; the other has committed by the time
// it is run again, which then finds those jobs completed and leaves them.
func retryDeadlock(fn func() error) error {
	err := fn()
	for range 2 {
		if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != deadlockDetected {
			return err
		}
		err = fn()
	}
	return err
}
