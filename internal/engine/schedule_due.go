package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
)

// scheduleDueMax bounds the jobs one ScheduleDueTx makes available.
const scheduleDueMax = 10_000

// ScheduleDueTx makes the scheduled and retryable jobs due by now
// available, through River's own scheduler query (JobSchedule, which also
// discards a unique job whose slot is taken), and notifies their queues'
// producers when tx commits. It returns how many jobs it made available,
// at most scheduleDueMax a call. River's scheduler runs it every few
// seconds on its leader; a test's virtual clock (package tributarytest)
// runs it at once after each move.
func (j *Jobs) ScheduleDueTx(ctx context.Context, tx pgx.Tx, now time.Time) (int, error) {
	due, err := j.driver.UnwrapExecutor(tx).JobSchedule(ctx, &riverdriver.JobScheduleParams{Max: scheduleDueMax, Now: &now, Schema: j.schema})
	if err != nil {
		return 0, fmt.Errorf("make the jobs due by %s available: %w", now.Format(time.RFC3339Nano), err)
	}
	var queues []string
	for _, res := range due {
		if !res.ConflictDiscarded && !slices.Contains(queues, res.Job.Queue) {
			queues = append(queues, res.Job.Queue)
		}
	}
	for _, queue := range queues {
		if err := j.NotifyQueueTx(ctx, tx, queue); err != nil {
			return 0, err
		}
	}
	return len(due), nil
}
