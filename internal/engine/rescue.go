package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// The statements the rescue reads River's tables with.
var (
	rescueJobsStmt = define(`
SELECT id, attempt, max_attempts, queue, attempted_by[cardinality(attempted_by)]
FROM {s}river_job
WHERE state = 'running' AND attempted_by[cardinality(attempted_by)] = ANY($1) AND kind LIKE ANY($2)
FOR UPDATE`)

	// The running jobs of a live client that it does not hold ($3): the
	// database lost their completions (a failover to a standby that had
	// not received them, a restore).
	orphanJobsStmt = define(`
SELECT id, attempt, max_attempts, queue, attempted_by[cardinality(attempted_by)]
FROM {s}river_job
WHERE state = 'running' AND attempted_by[cardinality(attempted_by)] = $1 AND kind LIKE ANY($2) AND NOT (id = ANY($3))
	AND attempted_at < $4
FOR UPDATE`)

	// Workflow jobs River's completer completed while their run is
	// unfinished (Completer.CompletedByRiver), put back to running, the
	// state River's rescue moves a job from. The run is found by the id in
	// its job's args (workflow_runs has no index on job_id).
	lostCompletionsStmt = define(`
UPDATE {s}river_job j SET state = 'running', finalized_at = NULL
WHERE j.id = ANY($1) AND j.state = 'completed'
	AND EXISTS (SELECT 1 FROM {s}workflow_runs r WHERE r.id = (j.args->>'run_id')::uuid AND r.job_id = j.id
		AND r.status IN ('pending', 'running', 'sleeping', 'waiting'))
RETURNING j.id, j.attempt, j.max_attempts, j.queue, j.attempted_by[cardinality(j.attempted_by)]`)

	leaderOfStmt = define(`SELECT leader_id, elected_at FROM {s}river_leader WHERE leader_id = ANY($1)`)
)

// RescuedJobs is what RescueTx did.
type RescuedJobs struct {
	// ByClient counts the rescued jobs per dead client id.
	ByClient map[string]int

	// Queues are the queues of the jobs made available again, whose
	// producers RescueTx has notified.
	Queues []string
}

// RescueTx rescues the running jobs of kinds matching one of kindPatterns
// (LIKE patterns) whose current attempt is one of the dead clients' (River
// records the clients that fetched a job in attempted_by, the current
// attempt's last), through River's own rescue query, the one its rescuer
// runs. A job with attempts left becomes available at once, and its
// queue's producers are notified when tx commits; the others are
// discarded, as River's rescuer does. The error River UI shows for the
// attempt names the dead client and rescuer.
func (j *Jobs) RescueTx(ctx context.Context, tx pgx.Tx, deadClientIDs []string, kindPatterns []string, rescuer string) (*RescuedJobs, error) {
	rows, err := tx.Query(ctx, j.q.sql(rescueJobsStmt), deadClientIDs, kindPatterns)
	if err != nil {
		return nil, fmt.Errorf("find the running jobs of dead clients: %w", err)
	}
	return j.rescueTx(ctx, tx, rows, func(client string) string {
		return fmt.Sprintf("tributary: client %s died while working this job (its heartbeat stopped and its session is gone); rescued by client %s", client, rescuer)
	})
}

// RescueOrphansTx rescues, as RescueTx does, the running jobs of kinds
// matching one of kindPatterns whose current attempt client fetched before
// fetchedBefore and does not hold (keep lists those it works, or whose
// completion it is still writing): the database lost what the client did
// with them, as after a failover to a standby that had not received their
// completions. Nothing else would rescue them before River's stuck-job
// rescuer (an hour), since their client is alive.
func (j *Jobs) RescueOrphansTx(ctx context.Context, tx pgx.Tx, client string, kindPatterns []string, keep []int64, fetchedBefore time.Time) (*RescuedJobs, error) {
	rows, err := tx.Query(ctx, j.q.sql(orphanJobsStmt), client, kindPatterns, keep, fetchedBefore)
	if err != nil {
		return nil, fmt.Errorf("find this client's orphaned jobs: %w", err)
	}
	return j.rescueTx(ctx, tx, rows, func(string) string {
		return fmt.Sprintf("tributary: the database lost this attempt's outcome (a failover or a restore); client %s, which worked it, made it available again", client)
	})
}

// RescueLostCompletionsTx makes available again, as RescueTx does, those of
// jobIDs, workflow jobs River's completer has just completed itself, whose
// run is unfinished: the engine had completed the run with its job, and the
// database lost that commit (a failover to a standby that had not received
// it), so River's completer, holding the job, found it running and
// completed it without its run. The run replays from its memos, as after
// any lost attempt. It returns what it rescued, by client (the one that
// worked the attempt).
func (j *Jobs) RescueLostCompletionsTx(ctx context.Context, tx pgx.Tx, jobIDs []int64, client string) (*RescuedJobs, error) {
	rows, err := tx.Query(ctx, j.q.sql(lostCompletionsStmt), jobIDs)
	if err != nil {
		return nil, fmt.Errorf("find the workflow jobs completed without their run: %w", err)
	}
	return j.rescueTx(ctx, tx, rows, func(string) string {
		return fmt.Sprintf("tributary: the database lost this attempt's completion (a failover to a standby that had not received it) and River's completer completed the job without its run; client %s made it available again to replay", client)
	})
}

// rescueTx rescues the jobs of rows (id, attempt, max_attempts, queue,
// client), with errorText(client) as the attempt's error.
func (j *Jobs) rescueTx(ctx context.Context, tx pgx.Tx, rows pgx.Rows, errorText func(client string) string) (*RescuedJobs, error) {
	var (
		now         = j.time.Now().UTC()
		params      = &riverdriver.JobRescueManyParams{Schema: j.schema, StuckHorizon: now.Add(time.Minute)}
		res         = &RescuedJobs{ByClient: map[string]int{}}
		id          int64
		attempt     int
		maxAttempts int
		queue       string
		client      string
	)
	_, err := pgx.ForEachRow(rows, []any{&id, &attempt, &maxAttempts, &queue, &client}, func() error {
		res.ByClient[client]++
		state, finalizedAt := rivertype.JobStateAvailable, (*time.Time)(nil)
		if attempt >= maxAttempts {
			state, finalizedAt = rivertype.JobStateDiscarded, &now
		}
		errData, err := json.Marshal(rivertype.AttemptError{At: now, Attempt: attempt, Error: errorText(client)})
		if err != nil {
			return err
		}
		params.ID = append(params.ID, id)
		params.Error = append(params.Error, errData)
		params.FinalizedAt = append(params.FinalizedAt, finalizedAt)
		params.ScheduledAt = append(params.ScheduledAt, now)
		params.State = append(params.State, string(state))
		if state == rivertype.JobStateAvailable && !slices.Contains(res.Queues, queue) {
			res.Queues = append(res.Queues, queue)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the running jobs to rescue: %w", err)
	}
	if len(params.ID) == 0 {
		return res, nil
	}
	if _, err := j.driver.UnwrapExecutor(tx).JobRescueMany(ctx, params); err != nil {
		return nil, fmt.Errorf("rescue %d jobs: %w", len(params.ID), err)
	}
	for _, queue := range res.Queues {
		if err := j.NotifyQueueTx(ctx, tx, queue); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// ResignLeaderTx ends the term of River's leader if it is one of clientIDs,
// the way a leader resigns when it stops: the other clients hear of it and
// elect a new leader within milliseconds instead of after the term's
// expiry. It returns the resigned leader's id, or "" when none of clientIDs
// leads.
func (j *Jobs) ResignLeaderTx(ctx context.Context, tx pgx.Tx, clientIDs []string) (string, error) {
	var (
		leaderID  string
		electedAt time.Time
	)
	err := tx.QueryRow(ctx, j.q.sql(leaderOfStmt), clientIDs).Scan(&leaderID, &electedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read River's leader: %w", err)
	}
	if _, err := j.driver.UnwrapExecutor(tx).LeaderResign(ctx, &riverdriver.LeaderResignParams{
		ElectedAt:       electedAt,
		LeaderID:        leaderID,
		LeadershipTopic: leadershipTopic,
		Schema:          j.schema,
	}); err != nil {
		return "", fmt.Errorf("resign the leader %s: %w", leaderID, err)
	}
	return leaderID, nil
}

// leadershipTopic is the notification topic of River's leader elections
// (notifier.NotificationTopicLeadership, internal to River).
const leadershipTopic = "river_leadership"
