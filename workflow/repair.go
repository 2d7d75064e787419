package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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
	return c.repairRuns(ctx, c.q.brokenRuns, repairGrace.Seconds())
}

// repairRunsOf repairs the runs ids, at once: a trigger announced that
// their River job was cancelled, discarded or deleted (see migration 006).
// No grace is needed: a run's own completion or park only commits while
// its job is running, so once the job ended outside Tributary nothing of
// the attempt can land any more.
func (c *Client) repairRunsOf(ctx context.Context, ids []uuid.UUID) (int, error) {
	return c.repairRuns(ctx, c.q.brokenRunsOf, ids)
}

func (c *Client) repairRuns(ctx context.Context, query string, arg any) (int, error) {
	rows, err := c.pool.Query(ctx, query, arg)
	if err != nil {
		return 0, fmt.Errorf("workflow: find runs to repair: %w", err)
	}
	type broken struct {
		id                   uuid.UUID
		jobID                int64
		jobState             *string
		lastErr              []byte
		attempt, maxAttempts int
		attemptBase          int
	}
	var found []broken
	for rows.Next() {
		var b broken
		if err := rows.Scan(&b.id, &b.jobID, &b.jobState, &b.lastErr, &b.attempt, &b.maxAttempts, &b.attemptBase); err != nil {
			rows.Close()
			return 0, err
		}
		found = append(found, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}

	repaired := 0
	for _, b := range found {
		var last struct {
			Attempt int    `json:"attempt"`
			Error   string `json:"error"`
		}
		if len(b.lastErr) > 0 {
			_ = json.Unmarshal(b.lastErr, &last)
		}
		if b.jobState != nil && *b.jobState == "discarded" && b.attempt < b.maxAttempts && last.Error == rescuedError {
			requeued, err := c.requeueRescued(ctx, b.id, b.jobID, b.attemptBase+b.attempt, b.maxAttempts-b.attempt)
			if err != nil {
				return repaired, fmt.Errorf("workflow: repair run %s: %w", b.id, err)
			}
			if requeued {
				repaired++
				c.logger.WarnContext(ctx, "tributary: River's rescuer discarded a stuck job of a kind the leader does not know; the run continues on a new job",
					slog.String("run_id", b.id.String()), slog.Int64("job_id", b.jobID))
			}
			continue
		}
		var (
			query  = c.q.failRun
			stored = &RunError{Kind: ErrorKindError, At: c.now().UTC()}
		)
		switch {
		case b.jobState == nil:
			query, stored.Kind = c.q.cancelRun, ErrorKindCancelled
			stored.Message = fmt.Sprintf("River job %d was deleted", b.jobID)
		case *b.jobState == "cancelled":
			query, stored.Kind = c.q.cancelRun, ErrorKindCancelled
			stored.Message = "River job cancelled"
		case *b.jobState == "discarded":
			stored.Message = "River discarded the job: no attempts left"
		default:
			stored.Message = "River job completed outside Tributary; the run's output is unknown"
		}
		if last.Error != "" {
			stored.Message += " (last error: " + last.Error + ")"
			stored.Attempt = last.Attempt
		}
		var (
			finished bool
			typ      string
		)
		err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
			var parentID *uuid.UUID
			args := []any{b.id, encodeRunError(stored)}
			if query == c.q.failRun {
				args = append(args, nil, nil)
			}
			err := tx.QueryRow(ctx, query, args...).Scan(&parentID, &typ)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			finished = true
			return c.afterFinishTx(ctx, tx, b.id, parentID)
		})
		if err != nil {
			return repaired, fmt.Errorf("workflow: repair run %s: %w", b.id, err)
		}
		if finished {
			repaired++
			outcome := StatusFailed
			if query == c.q.cancelRun {
				outcome = StatusCancelled
			}
			c.mw.runFinished(ctx, b.id, typ, outcome)
		}
		c.logger.WarnContext(ctx, "tributary: Repaired run whose River job ended outside Tributary",
			slog.String("run_id", b.id.String()), slog.Int64("job_id", b.jobID), slog.String("error", stored.Message))
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
		run, err := scanRun(tx.QueryRow(ctx, c.q.runByID+" FOR UPDATE OF r", id))
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
