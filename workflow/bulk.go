package workflow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
)

// Bulk actions: CancelRuns, RetryRuns and ForkRuns act on every run a
// filter matches, as Cancel, Retry and Fork act on one.

// BulkAction is what a bulk action does to each run it matches.
type BulkAction string

const (
	// BulkCancel cancels each run, as Cancel does.
	BulkCancel BulkAction = "cancel"
	// BulkRetry retries each run, as Retry does.
	BulkRetry BulkAction = "retry"
	// BulkFork forks each run from a step, as Fork does.
	BulkFork BulkAction = "fork"
)

// Defaults of BulkParams.
const (
	// DefaultBulkMaxRuns is BulkParams.MaxRuns's default.
	DefaultBulkMaxRuns = 100_000
	// DefaultBulkBatchSize is BulkParams.BatchSize's default.
	DefaultBulkBatchSize = 500
	// maxBulkBatchSize is the largest BulkParams.BatchSize.
	maxBulkBatchSize = 5000
)

// Reasons a bulk action gives for a run it matched and left as it was
// (SkippedRun.Reason).
const (
	// SkipFinished: cancel found the run completed, failed, cancelled or
	// skipped already (ErrRunFinished).
	SkipFinished = "already finished"
	// SkipNotRetryable: retry found the run neither failed nor cancelled
	// (ErrRunNotRetryable).
	SkipNotRetryable = "not failed or cancelled"
	// SkipNotFinished: fork found the run not finished (ErrRunNotFinished).
	SkipNotFinished = "not finished"
	// SkipStepNotRecorded: fork found no record of the step in the run
	// (*StepNotRecordedError): it never reached the step.
	SkipStepNotRecorded = "never reached the step"
	// SkipGone: the run was deleted (by retention, say) between the match
	// and the action.
	SkipGone = "deleted"
)

var (
	// ErrNoRunsMatch is returned by CancelRuns, RetryRuns and ForkRuns
	// (not by a dry run) when their filter matches no run: nothing was done, and that is
	// most often a mistyped filter.
	ErrNoRunsMatch = errors.New("workflow: no run matches the filter")

	// ErrTooManyRuns is matched by every *TooManyRunsError.
	ErrTooManyRuns = errors.New("workflow: the filter matches more runs than BulkParams.MaxRuns")
)

// TooManyRunsError is returned by CancelRuns, RetryRuns and ForkRuns when their
// filter matches more runs than BulkParams.MaxRuns. Nothing was done.
type TooManyRunsError struct {
	Action  BulkAction
	Matched int // the runs the filter matched
	MaxRuns int // the cap they exceed
}

func (e *TooManyRunsError) Error() string {
	return fmt.Sprintf("workflow: the filter matches %d runs, more than the %d a bulk %s may act on; nothing was done: narrow the filter, or raise BulkParams.MaxRuns to at least %d",
		e.Matched, e.MaxRuns, e.Action, e.Matched)
}

// Is makes errors.Is(err, ErrTooManyRuns) true.
func (e *TooManyRunsError) Is(target error) bool { return target == ErrTooManyRuns }

// BulkParams select the runs of a bulk action and say how it goes.
type BulkParams struct {
	// Filter selects the runs, as it would list them with ListRuns: type,
	// status, schedule, idempotency key, tenant, metadata, creation time.
	// Its After and Limit must be unset (the action pages by itself).
	Filter ListParams
	// ErrorContains keeps runs whose error message contains this text,
	// ignoring case.
	ErrorContains string
	// FinishedAfter keeps runs that finished at or after this time;
	// FinishedBefore, runs that finished before it. Either excludes runs
	// that have not finished.
	FinishedAfter  time.Time
	FinishedBefore time.Time

	// DryRun counts the matching runs, by status, and changes nothing; it
	// is not capped by MaxRuns.
	DryRun bool
	// MaxRuns is the most runs the filter may match: over it, the action
	// is refused with a *TooManyRunsError before it changes anything.
	// Defaults to DefaultBulkMaxRuns (100,000).
	MaxRuns int
	// BatchSize is the number of runs acted on in one transaction.
	// Defaults to DefaultBulkBatchSize (500); at most 5,000.
	BatchSize int
	// Progress, when set, is called after each batch commits with the
	// result so far (not to be kept: the action goes on changing it).
	Progress func(*BulkResult)
}

// SkippedRun is a run a bulk action matched and left as it was.
type SkippedRun struct {
	ID     uuid.UUID `json:"id"`
	Status Status    `json:"status"`
	Reason string    `json:"reason"`
}

// BulkResult is what a bulk action did. When the action stops midway (its
// context cancelled, an error), CancelRuns, RetryRuns and ForkRuns return
// the result so far with the error: Changed lists exactly the runs changed by
// the batches that committed; the batch that failed changed nothing.
type BulkResult struct {
	Action BulkAction `json:"action"`
	// FromStep is the step a bulk fork forks from ("" for cancel, retry).
	FromStep string `json:"from_step,omitempty"`
	DryRun   bool   `json:"dry_run"`
	// Matched is the number of runs the filter matched when the action
	// began, and ByStatus the same by status.
	Matched  int            `json:"matched"`
	ByStatus map[Status]int `json:"by_status"`
	// Eligible is the number of matched runs the action would change as
	// they stood when it began: those not finished for cancel, the failed
	// and cancelled ones for retry, the finished ones with a record of
	// FromStep for fork.
	Eligible int `json:"eligible"`
	// Changed are the ids of the runs cancelled (or whose cancellation was
	// requested, for a running run: it stops at its next step boundary),
	// retried or forked, newest first.
	Changed []uuid.UUID `json:"changed"`
	// Forks are, for a bulk fork, the new runs, in the order of Changed:
	// Forks[i] is the fork of Changed[i].
	Forks []uuid.UUID `json:"forks,omitempty"`
	// Skipped are the matched runs left as they were, with the reason.
	Skipped []SkippedRun `json:"skipped"`
	// Batches is the number of batches committed.
	Batches int `json:"batches"`
}

// CancelRuns cancels every run that p selects, as Cancel cancels one (the
// same code, so that the same rules hold: a pending, sleeping or waiting
// run is cancelled at once, a running one at its next step boundary), in
// batches of p.BatchSize runs, each in a transaction of its own. A run
// found finished is skipped (SkipFinished). No lock is held between
// batches, and ctx is checked between them.
//
// It first counts the runs that match: none is ErrNoRunsMatch, more than
// p.MaxRuns a *TooManyRunsError; a dry run returns the count. Runs are
// then matched again, batch by batch, newest first: a run started after
// the action began may be among them; one whose status changed in the
// meantime is acted on as it is then (or skipped).
//
// There is no Tx twin: a bulk action over many runs commits as it goes,
// so that it never holds many locks for long. To cancel a few runs within
// a transaction of your own, call CancelTx for each.
func (c *Client) CancelRuns(ctx context.Context, p *BulkParams) (*BulkResult, error) {
	return c.bulk(ctx, BulkCancel, "", p)
}

// RetryRuns retries every run that p selects, as Retry retries one, in
// batches as CancelRuns does; a run that is neither failed nor cancelled
// is skipped (SkipNotRetryable). Each run retried gets a new River job
// and continues from the step that failed.
func (c *Client) RetryRuns(ctx context.Context, p *BulkParams) (*BulkResult, error) {
	return c.bulk(ctx, BulkRetry, "", p)
}

// ForkRuns forks every run that p selects from its step fromStep, as Fork
// forks one (each fork a new pending run; the originals are left as they
// are), in batches as CancelRuns does. A run not finished is skipped
// (SkipNotFinished), and so is one with no record of fromStep
// (SkipStepNotRecorded: it never reached the step, or failed before it).
// BulkResult.Forks are the new runs; a fork the action made is never
// matched by it, even if the filter selects it.
//
// An empty fromStep is a *ValidationError. The count before the action
// (and a dry run's) tells the finished runs that recorded fromStep
// (Eligible) from the rest.
func (c *Client) ForkRuns(ctx context.Context, p *BulkParams, fromStep string) (*BulkResult, error) {
	if fromStep == "" {
		return nil, &ValidationError{Field: "fromStep", Problem: "is empty; name the step to fork from, as GetRun's Steps show it"}
	}
	return c.bulk(ctx, BulkFork, fromStep, p)
}

func (c *Client) bulk(ctx context.Context, action BulkAction, fromStep string, p *BulkParams) (*BulkResult, error) {
	if p == nil {
		p = &BulkParams{}
	}
	mp, err := matchRunsParams(p, c.listCeiling())
	if err != nil {
		return nil, err
	}
	maxRuns := orDefault(p.MaxRuns, DefaultBulkMaxRuns)
	batchSize := orDefault(p.BatchSize, DefaultBulkBatchSize)
	switch {
	case maxRuns < 1:
		return nil, &ValidationError{Field: "BulkParams.MaxRuns", Problem: fmt.Sprintf("is %d; use a positive number", maxRuns)}
	case batchSize < 1 || batchSize > maxBulkBatchSize:
		return nil, &ValidationError{Field: "BulkParams.BatchSize", Problem: fmt.Sprintf("is %d; use 1 to %d", batchSize, maxBulkBatchSize)}
	}

	counts, err := c.db.CountMatchingRuns(ctx, c.pool, mp)
	if err != nil {
		return nil, fmt.Errorf("workflow: count the runs to %s: %w", action, err)
	}
	res := &BulkResult{Action: action, FromStep: fromStep, DryRun: p.DryRun, ByStatus: map[Status]int{}, Changed: []uuid.UUID{}, Skipped: []SkippedRun{}}
	for status, n := range counts {
		res.ByStatus[Status(status)] = int(n)
		res.Matched += int(n)
		if action != BulkFork && bulkEligible(action, Status(status)) {
			res.Eligible += int(n)
		}
	}
	if action == BulkFork && res.Matched > 0 {
		// Of the finished runs, those that recorded the step.
		withStep := *mp
		withStep.RecordedStep = fromStep
		counts, err := c.db.CountMatchingRuns(ctx, c.pool, &withStep)
		if err != nil {
			return nil, fmt.Errorf("workflow: count the runs to %s: %w", action, err)
		}
		for status, n := range counts {
			if Status(status).Finished() {
				res.Eligible += int(n)
			}
		}
		res.Forks = []uuid.UUID{}
	}
	switch {
	case p.DryRun:
		return res, nil
	case res.Matched == 0:
		return res, fmt.Errorf("%w; nothing to %s", ErrNoRunsMatch, action)
	case res.Matched > maxRuns:
		return res, &TooManyRunsError{Action: action, Matched: res.Matched, MaxRuns: maxRuns}
	}

	mp.Limit = batchSize
	forked := map[uuid.UUID]bool{} // the forks made so far, not to be matched
	for {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("workflow: bulk %s stopped after %d batches (%d runs changed): %w", action, res.Batches, len(res.Changed), err)
		}
		var changed, forks []uuid.UUID
		var skipped []SkippedRun
		var last *uuid.UUID
		err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
			changed, forks, skipped, last = nil, nil, nil, nil
			matched, err := c.db.MatchRuns(ctx, tx, mp)
			if err != nil {
				return fmt.Errorf("workflow: match the runs to %s: %w", action, err)
			}
			for _, m := range matched {
				if forked[m.ID] {
					continue
				}
				if fork, reason, err := c.bulkOneTx(ctx, tx, action, fromStep, m.ID); err != nil {
					return err
				} else if reason != "" {
					skipped = append(skipped, SkippedRun{ID: m.ID, Status: Status(m.Status), Reason: reason})
				} else {
					changed = append(changed, m.ID)
					if fork != nil {
						forks = append(forks, *fork)
					}
				}
			}
			if len(matched) > 0 {
				last = &matched[len(matched)-1].ID
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("workflow: bulk %s stopped after %d batches (%d runs changed; the batch that failed changed nothing): %w",
				action, res.Batches, len(res.Changed), err)
		}
		if last == nil {
			return res, nil
		}
		res.Batches++
		res.Changed = append(res.Changed, changed...)
		if action == BulkFork {
			res.Forks = append(res.Forks, forks...)
			for _, id := range forks {
				forked[id] = true
			}
		}
		res.Skipped = append(res.Skipped, skipped...)
		mp.After = last
		if p.Progress != nil {
			p.Progress(res)
		}
	}
}

// bulkOneTx applies action to run id within tx, by the code of the single
// action (CancelTx, RetryTx, ForkTx from fromStep): "" when it changed the
// run (and, for a fork, the new run's id), else the reason it left it as
// it was. Any other error ends the batch.
func (c *Client) bulkOneTx(ctx context.Context, tx pgx.Tx, action BulkAction, fromStep string, id uuid.UUID) (*uuid.UUID, string, error) {
	var fork *uuid.UUID
	var err error
	switch action {
	case BulkCancel:
		err = c.CancelTx(ctx, tx, id)
	case BulkRetry:
		err = c.RetryTx(ctx, tx, id)
	case BulkFork:
		var run *Run
		if run, err = c.ForkTx(ctx, tx, id, fromStep); err == nil {
			fork = &run.ID
		}
	}
	switch {
	case err == nil:
		return fork, "", nil
	case errors.Is(err, ErrRunFinished):
		return nil, SkipFinished, nil
	case errors.Is(err, ErrRunNotRetryable):
		return nil, SkipNotRetryable, nil
	case errors.Is(err, ErrRunNotFinished):
		return nil, SkipNotFinished, nil
	case errors.Is(err, ErrStepNotRecorded):
		return nil, SkipStepNotRecorded, nil
	case errors.Is(err, ErrNotFound):
		return nil, SkipGone, nil
	}
	return nil, "", err
}

// bulkEligible reports whether cancel or retry changes a run in status.
func bulkEligible(action BulkAction, status Status) bool {
	if action == BulkCancel {
		return !status.Finished()
	}
	return status == StatusFailed || status == StatusCancelled
}

// matchRunsParams are the engine's parameters of p's filter, below
// ceiling (listCeiling).
func matchRunsParams(p *BulkParams, ceiling uuid.UUID) (*engine.MatchRunsParams, error) {
	switch {
	case p.Filter.After != nil:
		return nil, &ValidationError{Field: "BulkParams.Filter.After", Problem: "is set; a bulk action pages by itself: leave it unset"}
	case p.Filter.Limit != 0:
		return nil, &ValidationError{Field: "BulkParams.Filter.Limit", Problem: "is set; a bulk action acts on every run that matches (see MaxRuns): leave it unset"}
	case p.Filter.Status != "" && !validStatus(p.Filter.Status):
		return nil, &ValidationError{Field: "BulkParams.Filter.Status", Problem: fmt.Sprintf("%q is not a run status", p.Filter.Status)}
	}
	lp, err := listRunsParams(&p.Filter, 0, ceiling)
	if err != nil {
		return nil, err
	}
	mp := &engine.MatchRunsParams{ListRunsParams: *lp, ErrorContains: p.ErrorContains}
	if !p.FinishedAfter.IsZero() {
		mp.FinishedFrom = &p.FinishedAfter
	}
	if !p.FinishedBefore.IsZero() {
		mp.FinishedBefore = &p.FinishedBefore
	}
	return mp, nil
}

// validStatus reports whether s is a run status.
func validStatus(s Status) bool {
	switch s {
	case StatusPending, StatusRunning, StatusSleeping, StatusWaiting, StatusCompleted, StatusFailed, StatusCancelled, StatusSkipped:
		return true
	}
	return false
}

// bulkStatusOrder is the order Left counts statuses in: the order a run
// goes through them.
var bulkStatusOrder = []Status{StatusPending, StatusRunning, StatusSleeping, StatusWaiting,
	StatusCompleted, StatusFailed, StatusCancelled, StatusSkipped}

// BulkCount is a number of runs and why they are counted: a status, or a
// skip reason.
type BulkCount struct {
	Why string
	N   int
}

// Left counts the matched runs the action would leave as they are
// (Matched less Eligible), by why: for cancel and retry by status, in the
// order a run goes through them; for fork SkipNotFinished, then
// SkipStepNotRecorded (a finished run that never reached FromStep). What a
// dry run's answer says beside its count.
func (r *BulkResult) Left() []BulkCount {
	var out []BulkCount
	if r.Action == BulkFork {
		unfinished := 0
		for s, n := range r.ByStatus {
			if !s.Finished() {
				unfinished += n
			}
		}
		if unfinished > 0 {
			out = append(out, BulkCount{SkipNotFinished, unfinished})
		}
		if n := r.Matched - r.Eligible - unfinished; n > 0 {
			out = append(out, BulkCount{SkipStepNotRecorded, n})
		}
		return out
	}
	for _, s := range bulkStatusOrder {
		if n := r.ByStatus[s]; n > 0 && !bulkEligible(r.Action, s) {
			out = append(out, BulkCount{string(s), n})
		}
	}
	return out
}

// SkippedByReason counts Skipped by reason, the reasons in text order.
func (r *BulkResult) SkippedByReason() []BulkCount {
	counts := map[string]int{}
	for _, s := range r.Skipped {
		counts[s.Reason]++
	}
	out := make([]BulkCount, 0, len(counts))
	for _, why := range slices.Sorted(maps.Keys(counts)) {
		out = append(out, BulkCount{why, counts[why]})
	}
	return out
}
