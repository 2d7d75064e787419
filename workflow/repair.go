package workflow

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/wfruntime"
)

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
	return c.repairer.Repair(ctx)
}

// newRepairer is the client's wfruntime.Repairer: the repair's logic is
// there; what is bound to this package's types (RunError, Run, the
// middleware) is here.
func newRepairer(c *Client) *wfruntime.Repairer {
	return wfruntime.NewRepairer(wfruntime.RepairConfig{
		Logger: c.logger, Pool: c.pool, Queries: c.db, SQLNow: c.sqlNow,
		StoredError: func(cancelled bool, message string, attempt int) []byte {
			kind := ErrorKindError
			if cancelled {
				kind = ErrorKindCancelled
			}
			return encodeRunError(&RunError{Kind: kind, Message: message, Attempt: attempt, At: c.now().UTC()})
		},
		AfterFinishTx: c.afterFinishTx,
		RequeueTx:     c.requeueRescuedTx,
		RunFinished: func(ctx context.Context, id uuid.UUID, typ string, cancelled bool) {
			outcome := StatusFailed
			if cancelled {
				outcome = StatusCancelled
			}
			c.mw.runFinished(ctx, id, typ, outcome)
		},
	})
}

// requeueRescuedTx gives run id, whose job jobID River's rescuer discarded,
// a new job in tx, unless the run moved on meanwhile
// (wfruntime.RepairConfig.RequeueTx).
func (c *Client) requeueRescuedTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, jobID int64, attemptBase, attemptsLeft int) (bool, error) {
	run, err := runOf(c.db.RunByIDForUpdateTx(ctx, tx, id))
	if err != nil {
		return false, err
	}
	if run.Status.Finished() || run.JobID != jobID {
		return false, nil
	}
	return true, c.requeueTx(ctx, tx, run, attemptBase, attemptsLeft)
}
