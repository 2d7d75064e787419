package wfruntime

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/internal/engine"
)

// Some changes to a run's River job happen without any Tributary code
// running: River's rescuer discards a stuck job whose attempts are used up
// (a worker crashed on the last attempt) or cancels one whose cancellation
// was requested while its worker died, and an operator can cancel or delete a
// job in River UI. The run would then stay "running" forever. The Repairer
// finds such runs and finishes them the way their job ended
// (workflow.Client.RepairRuns says how); the client runs it on start-up and
// every Config.Maintenance.RepairInterval on the leader, as a River periodic
// job (jobs.KindRepairRuns), and at once for the runs migration 006's
// triggers announce (Waker).

// repairGrace keeps Repair away from runs whose job changed moments ago,
// so it never races an attempt that is finishing normally.
const repairGrace = 5 * time.Second

// rescuedError is the error River's rescuer records on a stuck job.
const rescuedError = "Stuck job rescued by JobRescuer"

// Repairer finishes, or puts back on a job, the runs whose River job ended
// outside Tributary (see workflow.Client.RepairRuns).
type Repairer struct {
	c RepairConfig
}

// RepairConfig is what a Repairer needs of its workflow client: the parts
// of a repair bound to package workflow's types come as functions.
type RepairConfig struct {
	Logger  *slog.Logger
	Pool    *pgxpool.Pool
	Queries *engine.Queries

	// SQLNow is the now parameter of the engine's statements
	// (Runtime.SQLNow).
	SQLNow func() *time.Time

	// StoredError is the stored form (a workflow.RunError's JSON) of the
	// error a repair leaves on the run it finishes: cancelled or failed,
	// with message, and the attempt of the job's last error (0: none).
	StoredError func(cancelled bool, message string, attempt int) []byte

	// AfterFinishTx announces a run the repair finished, in its
	// transaction: it wakes a waiting parent (parentID) and notifies
	// Result waiters on commit.
	AfterFinishTx func(ctx context.Context, tx pgx.Tx, runID uuid.UUID, parentID *uuid.UUID) error

	// RequeueTx gives run id, whose job jobID River's rescuer discarded
	// with attempts left, a new job in tx, whose attempts continue from
	// attemptBase and number at most attemptsLeft, unless the run moved on
	// meanwhile (finished, or on another job): then it returns false and
	// writes nothing.
	RequeueTx func(ctx context.Context, tx pgx.Tx, id uuid.UUID, jobID int64, attemptBase, attemptsLeft int) (bool, error)

	// RunFinished reports a run the repair finished, once it committed
	// (workflow's HookRunFinished): cancelled, or failed.
	RunFinished func(ctx context.Context, id uuid.UUID, typ string, cancelled bool)
}

// NewRepairer is a Repairer of the runs of c's client.
func NewRepairer(c RepairConfig) *Repairer { return &Repairer{c: c} }

// Repair finds the runs to repair, leaving alone those whose job changed
// within repairGrace, and repairs them (workflow.Client.RepairRuns). It
// returns how many runs it finished or put back on a job.
func (r *Repairer) Repair(ctx context.Context) (int, error) {
	found, err := r.c.Queries.BrokenRuns(ctx, r.c.Pool, repairGrace, r.c.SQLNow())
	if err != nil {
		return 0, fmt.Errorf("workflow: find runs to repair: %w", err)
	}
	return r.repair(ctx, found)
}

// RepairOf repairs the runs ids, at once: a trigger announced that
// their River job was cancelled, discarded or deleted (see migration 006).
// No grace is needed: a run's own completion or park only commits while
// its job is running, so once the job ended outside Tributary nothing of
// the attempt can land any more.
func (r *Repairer) RepairOf(ctx context.Context, ids []uuid.UUID) (int, error) {
	found, err := r.c.Queries.BrokenRunsOf(ctx, r.c.Pool, ids)
	if err != nil {
		return 0, fmt.Errorf("workflow: find runs to repair: %w", err)
	}
	return r.repair(ctx, found)
}

// repair finishes, or puts back on a job, the runs found, as
// workflow.Client.RepairRuns says.
func (r *Repairer) repair(ctx context.Context, found []*engine.BrokenRun) (int, error) {
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
			requeued, err := r.requeueRescued(ctx, b.ID, b.JobID, b.AttemptBase+b.Attempt, b.MaxAttempts-b.Attempt)
			if err != nil {
				return repaired, fmt.Errorf("workflow: repair run %s: %w", b.ID, err)
			}
			if requeued {
				repaired++
				r.c.Logger.WarnContext(ctx, "tributary: River's rescuer discarded a stuck job of a kind the leader does not know; the run continues on a new job",
					slog.String("run_id", b.ID.String()), slog.Int64("job_id", b.JobID))
			}
			continue
		}
		// The run is cancelled when its job was, or is gone; failed
		// otherwise.
		var (
			cancel  bool
			message string
			attempt int
		)
		switch {
		case b.JobState == nil:
			cancel = true
			message = fmt.Sprintf("River job %d was deleted", b.JobID)
		case *b.JobState == "cancelled":
			cancel = true
			message = "River job cancelled"
		case *b.JobState == "discarded":
			message = "River discarded the job: no attempts left"
		default:
			message = "River job completed outside Tributary; the run's output is unknown"
		}
		if last.Error != "" {
			message += " (last error: " + last.Error + ")"
			attempt = last.Attempt
		}
		stored := r.c.StoredError(cancel, message, attempt)
		var finished *engine.Finished
		err := pgx.BeginFunc(ctx, r.c.Pool, func(tx pgx.Tx) error {
			var (
				ok  bool
				err error
			)
			if cancel {
				finished, ok, err = r.c.Queries.CancelRun(ctx, tx, b.ID, stored, r.c.SQLNow())
			} else {
				finished, ok, err = r.c.Queries.FailRun(ctx, tx, &engine.FailRunParams{ID: b.ID, Error: stored, Now: r.c.SQLNow()})
			}
			if err != nil || !ok {
				return err
			}
			return r.c.AfterFinishTx(ctx, tx, b.ID, finished.ParentID)
		})
		if err != nil {
			return repaired, fmt.Errorf("workflow: repair run %s: %w", b.ID, err)
		}
		if finished != nil {
			repaired++
			r.c.RunFinished(ctx, b.ID, finished.Type, cancel)
		}
		r.c.Logger.WarnContext(ctx, "tributary: Repaired run whose River job ended outside Tributary",
			slog.String("run_id", b.ID.String()), slog.Int64("job_id", b.JobID), slog.String("error", message))
	}
	return repaired, nil
}

// requeueRescued gives run id, whose job jobID River's rescuer discarded, a
// new job, unless the run moved on meanwhile.
func (r *Repairer) requeueRescued(ctx context.Context, id uuid.UUID, jobID int64, attemptBase, attemptsLeft int) (bool, error) {
	requeued := false
	err := pgx.BeginFunc(ctx, r.c.Pool, func(tx pgx.Tx) error {
		var err error
		requeued, err = r.c.RequeueTx(ctx, tx, id, jobID, attemptBase, attemptsLeft)
		return err
	})
	return requeued, err
}
