package riverui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// Bulk actions: POST /api/runs/bulk cancels, retries or forks every run a
// filter matches (workflow.Client.CancelRuns, RetryRuns, ForkRuns), POST
// /api/schedules/bulk pauses or resumes every schedule of an owner
// (schedule.Client.PauseOwner, ResumeOwner). The dashboard's bulk forms
// call the same code (runBulk, scheduleBulk).

// runBulkBody is the body of POST /api/runs/bulk: the action, and the
// filters, named as the run listing's query parameters are and as a run's
// fields (idempotency_key, metadata).
type runBulkBody struct {
	Action, FromStep              opt[string]
	DryRun                        opt[bool]
	MaxRuns                       opt[int]
	Type, Tenant, IdempotencyKey  opt[string]
	Status                        opt[workflow.Status]
	ScheduleID, ForkedFrom        opt[uuid.UUID]
	Metadata                      opt[map[string]any]
	CreatedAfter, CreatedBefore   opt[time.Time]
	ErrorContains                 opt[string]
	FinishedAfter, FinishedBefore opt[time.Time]
}

func (b *runBulkBody) spec() *bodySpec {
	return &bodySpec{what: "a bulk action", required: true, members: []member{
		{name: "action", dst: &b.Action}, {name: "from_step", dst: &b.FromStep},
		{name: "dry_run", dst: &b.DryRun}, {name: "max_runs", dst: &b.MaxRuns},
		{name: "type", dst: &b.Type}, {name: "status", dst: &b.Status}, {name: "tenant", dst: &b.Tenant},
		{name: "schedule_id", dst: &b.ScheduleID}, {name: "forked_from", dst: &b.ForkedFrom},
		{name: "idempotency_key", dst: &b.IdempotencyKey}, {name: "metadata", dst: &b.Metadata},
		{name: "created_after", dst: &b.CreatedAfter}, {name: "created_before", dst: &b.CreatedBefore},
		{name: "error_contains", dst: &b.ErrorContains},
		{name: "finished_after", dst: &b.FinishedAfter}, {name: "finished_before", dst: &b.FinishedBefore},
	}}
}

// bulkActions are the actions of POST /api/runs/bulk.
var bulkActions = []workflow.BulkAction{workflow.BulkCancel, workflow.BulkRetry, workflow.BulkFork}

// params are the body's workflow.BulkParams.
func (b *runBulkBody) params() *workflow.BulkParams {
	p := &workflow.BulkParams{
		Filter: workflow.ListParams{
			Type: b.Type.value(), Status: b.Status.value(), Tenant: b.Tenant.value(), IdempotencyKey: b.IdempotencyKey.value(),
			ScheduleID: b.ScheduleID.ptr(), ForkedFrom: b.ForkedFrom.ptr(), Metadata: b.Metadata.value(),
			CreatedAfter: b.CreatedAfter.value(), CreatedBefore: b.CreatedBefore.value(),
		},
		ErrorContains: b.ErrorContains.value(), FinishedAfter: b.FinishedAfter.value(), FinishedBefore: b.FinishedBefore.value(),
		DryRun: b.DryRun.value(), MaxRuns: b.MaxRuns.value(),
	}
	return p
}

// checkBulkAction checks a bulk action's name and its from_step (which a
// fork needs and the others refuse).
func checkBulkAction(action workflow.BulkAction, fromStep string) error {
	switch {
	case action == "":
		return badField("action", `is missing; send "cancel", "retry" or "fork"`)
	case !slices.Contains(bulkActions, action):
		return badField("action", `%q is not a bulk action; send "cancel", "retry" or "fork"`, action)
	case action == workflow.BulkFork && fromStep == "":
		return badField("from_step", `is missing; a fork names the step to fork each run from, as a run's steps name it: {"action": "fork", "from_step": "charge"}`)
	case action != workflow.BulkFork && fromStep != "":
		return badField("from_step", "is a fork's; a %s takes no step: leave it out", action)
	}
	return nil
}

// runBulk runs a bulk action over the runs p selects, with its errors in
// the API's words: no run is a 404, too many a 409 naming max_runs.
func (h *Handler) runBulk(ctx context.Context, action workflow.BulkAction, fromStep string, p *workflow.BulkParams) (*workflow.BulkResult, error) {
	var res *workflow.BulkResult
	var err error
	switch action {
	case workflow.BulkCancel:
		res, err = h.wf.CancelRuns(ctx, p)
	case workflow.BulkRetry:
		res, err = h.wf.RetryRuns(ctx, p)
	default:
		res, err = h.wf.ForkRuns(ctx, p, fromStep)
	}
	var tooMany *workflow.TooManyRunsError
	switch {
	case errors.Is(err, workflow.ErrNoRunsMatch):
		return res, &apiError{status: http.StatusNotFound, msg: fmt.Sprintf("no run matches the filter, so nothing to %s; check the filter with GET /api/runs and the same parameters", action)}
	case errors.As(err, &tooMany):
		return res, &apiError{status: http.StatusConflict, field: "max_runs", msg: fmt.Sprintf("the filter matches %d runs, more than max_runs (%d), so nothing was done; narrow the filter, or send max_runs of at least %d",
			tooMany.Matched, tooMany.MaxRuns, tooMany.Matched)}
	}
	return res, err
}

// bulkRuns answers POST /api/runs/bulk: 200 and what the action did (or,
// for a dry run, would do). An action that stopped midway answers its
// error with the result so far (bulkStoppedJSON): the runs it changed.
func (h *Handler) bulkRuns(w http.ResponseWriter, r *http.Request) {
	var b runBulkBody
	err := func() error {
		if _, err := b.spec().read(r); err != nil {
			return err
		}
		return checkBulkAction(workflow.BulkAction(b.Action.value()), b.FromStep.value())
	}()
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	action := workflow.BulkAction(b.Action.value())
	res, err := h.runBulk(r.Context(), action, b.FromStep.value(), b.params())
	switch {
	case err != nil && res != nil && res.Batches > 0:
		writeBulkStopped(h, w, err, fmt.Sprintf("the bulk %s stopped after %d batches: %d runs changed", action, res.Batches, len(res.Changed)),
			wire.NewBulk(res))
	case err != nil:
		h.failJSON(w, r, err)
	default:
		writeJSON(w, http.StatusOK, wire.NewBulk(res))
	}
}

// bulkStoppedJSON is the answer of a bulk action that stopped midway: the
// error, and what it did before it (a *wire.Bulk or a *wire.OwnerBulk).
type bulkStoppedJSON[R any] struct {
	apiErrorBody
	Result R `json:"result"`
}

// writeBulkStopped answers err of a bulk action that stopped midway, with
// result, what it did before: the error says what (done: "… stopped after
// 2 batches: 1,000 runs changed"), that result.changed lists it, and that
// the batch that failed changed nothing.
func writeBulkStopped[R any](h *Handler, w http.ResponseWriter, err error, done string, result R) {
	status, body := h.apiErrorOf(err)
	body.Error = fmt.Sprintf("%s (result.changed), the batch that failed changed nothing: %s", done, body.Error)
	writeJSON(w, status, bulkStoppedJSON[R]{apiErrorBody: body, Result: result})
}

// scheduleBulkBody is the body of POST /api/schedules/bulk.
type scheduleBulkBody struct {
	Action, Owner, Note opt[string]
	Missed              opt[schedule.MissedPolicy]
	DryRun              opt[bool]
}

func (b *scheduleBulkBody) spec() *bodySpec {
	return &bodySpec{what: "a bulk action", required: true, members: []member{
		{name: "action", dst: &b.Action}, {name: "owner", dst: &b.Owner}, {name: "note", dst: &b.Note},
		{name: "missed", dst: &b.Missed}, {name: "dry_run", dst: &b.DryRun},
	}}
}

// check checks the body's action and the fields that go with it.
func (b *scheduleBulkBody) check() error {
	switch action := b.Action.value(); {
	case action == "":
		return badField("action", `is missing; send "pause" or "resume"`)
	case action != "pause" && action != "resume":
		return badField("action", `%q is not a bulk action on schedules; send "pause" or "resume"`, action)
	case b.Owner.value() == "":
		return badField("owner", "is missing; name the owner whose schedules to %s", action)
	case action == "resume" && b.Note.set:
		return badField("note", "is a pause's; a resume takes none: leave it out")
	case action == "pause" && b.Missed.set:
		return badField("missed", "is a resume's; a pause takes none: leave it out")
	case b.Missed.set && !slices.Contains([]schedule.MissedPolicy{schedule.MissedSkip, schedule.MissedLatest, schedule.MissedBackfill}, b.Missed.value()):
		return badField("missed", `%q is not "skip", "latest" or "backfill"`, b.Missed.value())
	}
	return nil
}

// scheduleBulk pauses or resumes every schedule of owner (a dry run
// counts them, and changes nothing). An owner without schedules is a 404.
func (h *Handler) scheduleBulk(ctx context.Context, action, owner, note string, missed schedule.MissedPolicy, dryRun bool) (*wire.OwnerBulk, error) {
	if dryRun {
		out := wire.NewOwnerBulk(owner, action, nil)
		out.DryRun = true
		paused := action == "resume"
		var err error
		if out.Schedules, err = h.sc.Count(ctx, &schedule.ListParams{Owner: owner}); err != nil {
			return nil, err
		}
		if out.Schedules == 0 {
			return nil, ownerNotFound(owner)
		}
		if out.Eligible, err = h.sc.Count(ctx, &schedule.ListParams{Owner: owner, Paused: &paused}); err != nil {
			return nil, err
		}
		return out, nil
	}
	var res *schedule.OwnerResult
	var err error
	if action == "pause" {
		res, err = h.sc.PauseOwner(ctx, owner, note)
	} else {
		res, err = h.sc.ResumeOwner(ctx, owner, &schedule.ResumeOpts{Missed: missed})
	}
	if errors.Is(err, schedule.ErrNotFound) && res != nil && res.Batches == 0 {
		return nil, ownerNotFound(owner)
	}
	out := wire.NewOwnerBulk(owner, action, res)
	if err != nil {
		return out, fmt.Errorf("%s stopped after %d schedules changed: %w", action, len(out.Changed), err)
	}
	return out, nil
}

func ownerNotFound(owner string) error {
	return &apiError{status: http.StatusNotFound, field: "owner", msg: fmt.Sprintf("owner %q has no schedules; GET /api/schedules?owner= lists an owner's schedules", owner)}
}

// bulkSchedules answers POST /api/schedules/bulk: 200 and what the action
// did (or would do). An action that stopped midway answers its error with
// the result so far (bulkStoppedJSON): the schedules its committed batches
// changed, and those they left as they were; the batch that failed
// changed nothing.
func (h *Handler) bulkSchedules(w http.ResponseWriter, r *http.Request) {
	if h.sc == nil {
		h.failJSON(w, r, errNoSchedules)
		return
	}
	var b scheduleBulkBody
	err := func() error {
		if _, err := b.spec().read(r); err != nil {
			return err
		}
		return b.check()
	}()
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	out, err := h.scheduleBulk(r.Context(), b.Action.value(), b.Owner.value(), b.Note.value(), b.Missed.value(), b.DryRun.value())
	switch {
	case err != nil && out != nil && out.Batches > 0:
		writeBulkStopped(h, w, err, fmt.Sprintf("the %s of owner %q's schedules stopped after %d batches: %d schedules changed",
			out.Action, out.Owner, out.Batches, len(out.Changed)), out)
	case err != nil:
		h.failJSON(w, r, err)
	default:
		writeJSON(w, http.StatusOK, out)
	}
}
