package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
)

// Some changes to a run's River job happen without any Tributary code
// running: River's rescuer discards a stuck job whose attempts are used up
// (a worker crashed on the last attempt) or cancels one whose cancellation
// was requested while its worker died, and an operator can cancel or delete a
// job in River UI. The run would then stay "running" forever. RepairRuns
// finds such runs and finishes them the way their job ended; the client runs
// it on start-up and every Config.Maintenance.RepairInterval on the leader,
// as a River periodic job (jobs.KindRepairRuns).

// repairGrace keeps RepairRuns away from runs whose job changed moments ago,
// so it never races an attempt that is finishing normally.
const repairGrace = 5 * time.Second

// RepairRuns finishes runs whose River job ended (discarded, cancelled,
// completed) or was deleted while the run was still pending, running,
// sleeping or waiting:
//
//   - a job River's rescuer discarded with attempts left gets a new job with
//     the attempts that remain: the leader's rescuer discards a stuck job of
//     a kind it does not know (tributary serve, or a service without that
//     workflow type, leading), and the run must not fail for it;
//   - any other discarded job fails the run with the job's last error (for
//     a crash on the last attempt: "Stuck job rescued by JobRescuer");
//   - a cancelled or deleted job cancels the run;
//   - a job completed outside Tributary fails the run, since its output is
//     unknown.
//
// It returns how many runs it finished. Its cost grows with the number of
// unfinished runs, which it reads through an index on status.
func (c *Client) RepairRuns(ctx context.Context) (int, error) {
	found, err := c.db.BrokenRuns(ctx, c.pool, repairGrace, c.sqlNow())
	if err != nil {
		return 0, fmt.Errorf("workflow: find runs to repair: %w", err)
	}
	return c.repairRuns(ctx, found)
}

// repairRunsOf repairs the runs ids, at once: a trigger announced that
// their River job was cancelled, discarded or deleted (see migration 006).
// No grace is needed: a run's own completion or park only commits while
// its job is running, so once the job ended outside Tributary nothing of
// the attempt can land any more.
func (c *Client) repairRunsOf(ctx context.Context, ids []uuid.UUID) (int, error) {
	found, err := c.db.BrokenRunsOf(ctx, c.pool, ids)
	if err != nil {
		return 0, fmt.Errorf("workflow: find runs to repair: %w", err)
	}
	return c.repairRuns(ctx, found)
}

// repairRuns finishes, or puts back on a job, the runs found, as
// RepairRuns says.
func (c *Client) repairRuns(ctx context.Context, found []*engine.BrokenRun) (int, error) {
	repaired := 0
	for _, b := range found {
		var last struct {
			Attempt int    `json:"attempt"`
			Error   string `json:"error"`
		}
		if len(b.LastError) > 0 {
			_ = json.Unmarshal(b.LastError, &last)
		}
		if b.JobState != nil && *b.JobState == "discarded" && b.Attempt < b.MaxAttempts && last.Error == rescuedError {
			requeued, err := c.requeueRescued(ctx, b.ID, b.JobID, b.AttemptBase+b.Attempt, b.MaxAttempts-b.Attempt)
			if err != nil {
				return repaired, fmt.Errorf("workflow: repair run %s: %w", b.ID, err)
			}
			if requeued {
				repaired++
				c.logger.WarnContext(ctx, "tributary: River's rescuer discarded a stuck job of a kind the leader does not know; the run continues on a new job",
					slog.String("run_id", b.ID.String()), slog.Int64("job_id", b.JobID))
			}
			continue
		}
		// The run is cancelled when its job was, or is gone; failed
		// otherwise.
		var (
			cancel bool
			stored = &RunError{Kind: ErrorKindError, At: c.now().UTC()}
		)
		switch {
		case b.JobState == nil:
			cancel, stored.Kind = true, ErrorKindCancelled
			stored.Message = fmt.Sprintf("River job %d was deleted", b.JobID)
		case *b.JobState == "cancelled":
			cancel, stored.Kind = true, ErrorKindCancelled
			stored.Message = "River job cancelled"
		case *b.JobState == "discarded":
			stored.Message = "River discarded the job: no attempts left"
		default:
			stored.Message = "River job completed outside Tributary; the run's output is unknown"
		}
		if last.Error != "" {
			stored.Message += " (last error: " + last.Error + ")"
			stored.Attempt = last.Attempt
		}
		var finished *engine.Finished
		err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
			var (
				ok  bool
				err error
			)
			if cancel {
				finished, ok, err = c.db.CancelRun(ctx, tx, b.ID, encodeRunError(stored), c.sqlNow())
			} else {
				finished, ok, err = c.db.FailRun(ctx, tx, &engine.FailRunParams{ID: b.ID, Error: encodeRunError(stored), Now: c.sqlNow()})
			}
			if err != nil || !ok {
				return err
			}
			return c.afterFinishTx(ctx, tx, b.ID, finished.ParentID)
		})
		if err != nil {
			return repaired, fmt.Errorf("workflow: repair run %s: %w", b.ID, err)
		}
		if finished != nil {
			repaired++
			outcome := StatusFailed
			if cancel {
				outcome = StatusCancelled
			}
			c.mw.runFinished(ctx, b.ID, finished.Type, outcome)
		}
		c.logger.WarnContext(ctx, "tributary: Repaired run whose River job ended outside Tributary",
			slog.String("run_id", b.ID.String()), slog.Int64("job_id", b.JobID), slog.String("error", stored.Message))
	}
	return repaired, nil
}

// rescuedError is the error River's rescuer records on a stuck job.
const rescuedError = "Stuck job rescued by JobRescuer"

// requeueRescued gives run id, whose job jobID River's rescuer discarded, a
// new job, unless the run moved on meanwhile.
func (c *Client) requeueRescued(ctx context.Context, id uuid.UUID, jobID int64, attemptBase, attemptsLeft int) (bool, error) {
	requeued := false
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		run, err := runOf(c.db.RunByIDForUpdateTx(ctx, tx, id))
		if err != nil {
			return err
		}
		if run.Status.Finished() || run.JobID != jobID {
			return nil
		}
		requeued = true
		return c.requeueTx(ctx, tx, run, attemptBase, attemptsLeft)
	})
	return requeued, err
}
