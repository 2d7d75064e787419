package schedule

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/runmeta"
	"github.com/tributary-go/tributary/internal/wfruntime"
	"github.com/tributary-go/tributary/workflow"
)

// UpdateParams change a schedule; nil fields stay as they are. A
// schedule's Key never changes, and neither does the Owner of a schedule
// that has a key: the two are its name (create a schedule under the other
// owner, and delete this one).
type UpdateParams struct {
	Name        *string
	Description *string
	// Workflow changes the workflow type the next slots start.
	Workflow      *string
	Cron          *string
	TimeZone      *string
	Input         any // nil: unchanged; json.RawMessage("null") for null
	Overlap       *OverlapPolicy
	CatchUpWindow *time.Duration
	MaxAttempts   *int
	Priority      *int
	Queue         *string
	Timeout       *time.Duration
	Owner         *string
	CatchUp       *CatchUpPolicy
	// StartAt and EndAt replace the schedule's range; a zero time clears it.
	StartAt *time.Time
	EndAt   *time.Time
	// GrantID replaces the execution grant; uuid.Nil removes it.
	GrantID *uuid.UUID
	// RRule replaces the schedule's rule with an RRULE (Params.RRule),
	// and Cron with a cron expression: either, set alone and not empty,
	// takes the place of the other. Both set and not empty is a
	// *ValidationError.
	RRule *string
	// KeepRuns replaces how many of the latest runs retention keeps.
	KeepRuns *int
	// Retry replaces the retry policy of the runs started from now on
	// (Params.Retry); the zero RetryPolicy removes it, leaving the
	// workflow type's. Runs started before keep theirs.
	Retry *workflow.RetryPolicy
	// Calendars and OnExcluded replace the holiday calendars the schedule
	// excludes and what their slots do (Params.Calendars, OnExcluded); an
	// empty slice removes them all. Like a new cron expression, they apply
	// from the next slot they compute.
	Calendars  *[]string
	OnExcluded *OnExcluded
	// DSTGap and DSTFold replace the DST policy (Params.DSTGap, DSTFold);
	// like a new cron expression, a new policy applies from the next slot
	// it computes.
	DSTGap  *DSTGap
	DSTFold *DSTFold
	// Tenant replaces the tenant of the runs the schedule starts from now
	// on (Params.Tenant); "" makes it the owner's again. Runs started
	// before keep theirs.
	Tenant *string
}

// Update changes a schedule. A new cron expression, time zone, start or end
// takes effect at once: the pending slot is replaced by the first slot of the new timing
// after now (the old slot's job finds itself stale and fires nothing). Other
// changes apply from the next slot, which reads the schedule when it fires.
// Validation errors match ErrInvalid and change nothing.
func (c *Client) Update(ctx context.Context, ref Ref, p *UpdateParams) (*Schedule, error) {
	return c.inTx(ctx, func(tx pgx.Tx) (*Schedule, error) { return c.UpdateTx(ctx, tx, ref, p) })
}

// UpdateTx is like Update, within tx; the caller commits or rolls back.
func (c *Client) UpdateTx(ctx context.Context, tx pgx.Tx, ref Ref, p *UpdateParams) (*Schedule, error) {
	id, err := c.id(ctx, tx, ref)
	if err != nil {
		return nil, err
	}
	s, err := scheduleOf(c.q.ScheduleByIDForUpdateTx(ctx, tx, id))
	if err != nil {
		return nil, err
	}
	if p == nil {
		return s, nil
	}
	params := &Params{
		Name: s.Name, Description: s.Description, Owner: s.Owner, Workflow: s.Workflow, Input: s.Input,
		Cron: s.Cron, RRule: s.RRule, TimeZone: s.TimeZone, StartAt: deref(s.StartAt), EndAt: deref(s.EndAt),
		Overlap: s.Overlap, CatchUpWindow: storedWindow(s.CatchUpWindow), CatchUp: s.CatchUp, MaxAttempts: s.MaxAttempts, Priority: s.Priority,
		Queue: s.Queue, Timeout: s.Timeout, KeepRuns: s.KeepRuns, Tenant: s.Tenant, DSTGap: s.DSTGap, DSTFold: s.DSTFold,
		Calendars: s.Calendars, OnExcluded: s.OnExcluded, Retry: s.Retry,
	}
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&params.Name, p.Name)
	set(&params.Description, p.Description)
	set(&params.Cron, p.Cron)
	set(&params.RRule, p.RRule)
	switch {
	case p.Cron != nil && *p.Cron != "" && p.RRule == nil:
		params.RRule = "" // a cron expression in place of the RRULE
	case p.RRule != nil && *p.RRule != "" && p.Cron == nil:
		params.Cron = "" // and the other way round
	}
	set(&params.TimeZone, p.TimeZone)
	set(&params.Queue, p.Queue)
	set(&params.Owner, p.Owner)
	set(&params.Workflow, p.Workflow)
	set(&params.Tenant, p.Tenant)
	if s.Key != "" && params.Owner != s.Owner {
		return nil, &ValidationError{Field: "Owner", Problem: fmt.Sprintf(
			"cannot move the schedule from owner %q to %q: its key %q is unique per owner, and owner and key are its name; create a schedule with that key under owner %q, then delete this one",
			s.Owner, params.Owner, s.Key, params.Owner)}
	}
	if p.CatchUp != nil {
		params.CatchUp = *p.CatchUp
	}
	if p.StartAt != nil {
		params.StartAt = *p.StartAt
	}
	if p.EndAt != nil {
		params.EndAt = *p.EndAt
	}
	grantID := s.GrantID
	if p.GrantID != nil {
		grantID = nil
		if *p.GrantID != uuid.Nil {
			grantID = p.GrantID
		}
	}
	newGrant := grantID != nil && (s.GrantID == nil || *grantID != *s.GrantID)
	if grantID != nil && (newGrant || params.Workflow != s.Workflow) {
		// A new grant, or the schedule's under a new workflow type (the
		// grant it has already applies at fire time: one revoked since
		// skips the slots, and an Update of another field goes through).
		if err := c.requireUsableGrant(ctx, tx, *grantID, params.Workflow); err != nil {
			return nil, err
		}
	}
	if p.Input != nil {
		params.Input = p.Input
	}
	if p.Overlap != nil {
		params.Overlap = *p.Overlap
	}
	if p.CatchUpWindow != nil {
		params.CatchUpWindow = *p.CatchUpWindow
	}
	if p.MaxAttempts != nil {
		params.MaxAttempts = *p.MaxAttempts
	}
	if p.Priority != nil {
		params.Priority = *p.Priority
	}
	if p.Timeout != nil {
		params.Timeout = *p.Timeout
	}
	if p.KeepRuns != nil {
		params.KeepRuns = *p.KeepRuns
	}
	if p.Retry != nil {
		params.Retry = p.Retry
	}
	if p.DSTGap != nil {
		params.DSTGap = *p.DSTGap
	}
	if p.DSTFold != nil {
		params.DSTFold = *p.DSTFold
	}
	if p.Calendars != nil {
		params.Calendars = *p.Calendars
	}
	if p.OnExcluded != nil {
		params.OnExcluded = *p.OnExcluded
	}
	v, err := c.validate(ctx, tx, params)
	if err != nil {
		return nil, err
	}
	if err := c.checkInput(ctx, tx, params.Workflow, v.input, "Input"); err != nil {
		return nil, err
	}
	retimed := v.spec.Expr() != s.rule() || v.spec.Zone() != s.TimeZone || v.spec.DST() != s.dst() ||
		!slices.Equal(v.calendars, s.Calendars) || v.onExcluded != s.OnExcluded || p.StartAt != nil || p.EndAt != nil
	next := s.NextFireAt
	if retimed && !s.Paused {
		next = &v.first
	}
	if err := c.dropPreparedTx(ctx, tx, id); err != nil {
		return nil, err
	}
	updated, err := scheduleOf(c.q.UpdateScheduleTx(ctx, tx, &engine.UpdateScheduleParams{
		ID: id, Name: params.Name, Description: params.Description, Input: v.input, Cron: v.spec.Expr(),
		TimeZone: v.spec.Zone(), OverlapPolicy: string(v.overlap), CatchUpWindowMS: v.catchUp.Milliseconds(),
		MaxAttempts: params.MaxAttempts, TimeoutMS: params.Timeout.Milliseconds(), Queue: params.Queue,
		Priority: params.Priority, NextFireAt: next, CatchUpPolicy: string(v.catchUpPolicy), Owner: params.Owner,
		StartAt: nullTime(params.StartAt), EndAt: nullTime(params.EndAt), GrantID: grantID, KeepRuns: params.KeepRuns,
		Type: params.Workflow, RunTenant: params.Tenant, Now: c.sqlNow(),
		DSTGap: string(v.spec.DST().Gap), DSTFold: string(v.spec.DST().Fold),
		Calendars: v.calendars, OnExcluded: string(v.onExcluded), Retry: v.retry,
	}))
	if err != nil {
		return nil, fmt.Errorf("schedule: update %s: %w", id, err)
	}
	if retimed && next != nil {
		if err := c.seedTx(ctx, tx, *next); err != nil {
			return nil, err
		}
	}
	return c.preparedTx(ctx, tx, updated)
}

// TriggerOpts override, for one triggered run, the schedule's input and
// overlap policy. A nil *TriggerOpts uses the schedule's.
type TriggerOpts struct {
	Input   any
	Overlap OverlapPolicy
}

// Trigger starts a run of the schedule now, outside its cron; the chain of
// slots is not affected. Under OverlapSkip, a trigger while a run is
// unfinished records a skipped run (reason "overlap"). It returns the run's
// id.
func (c *Client) Trigger(ctx context.Context, ref Ref, opts *TriggerOpts) (uuid.UUID, error) {
	var runID uuid.UUID
	err := pgx.BeginFunc(ctx, c.rt.Pool(), func(tx pgx.Tx) error {
		var err error
		runID, err = c.TriggerTx(ctx, tx, ref, opts)
		return err
	})
	return runID, err
}

// TriggerTx is like Trigger, within tx; the caller commits or rolls back.
func (c *Client) TriggerTx(ctx context.Context, tx pgx.Tx, ref Ref, opts *TriggerOpts) (uuid.UUID, error) {
	if opts == nil {
		opts = &TriggerOpts{}
	}
	id, err := c.id(ctx, tx, ref)
	if err != nil {
		return uuid.Nil, err
	}
	s, err := c.lockToStart(ctx, tx, id, opts.Overlap)
	if err != nil {
		return uuid.Nil, err
	}
	input := []byte(s.Input)
	if opts.Input != nil {
		if input, err = json.Marshal(opts.Input); err != nil {
			return uuid.Nil, &ValidationError{Field: "TriggerOpts.Input", Problem: fmt.Sprintf("cannot be encoded as JSON: %v", err)}
		}
	}
	overlap, err := overlapOverride("TriggerOpts.Overlap", s.Overlap, opts.Overlap)
	if err != nil {
		return uuid.Nil, err
	}
	meta := runmeta.Meta{Trigger: true}
	skip, startAt, err := c.admit(ctx, tx, s, overlap, &meta)
	if err != nil {
		return uuid.Nil, err
	}
	// A triggered run is keyed on the moment it was triggered, to the
	// microsecond Postgres keeps.
	at := c.now().UTC().Truncate(time.Microsecond)
	started, err := c.rt.StartScheduledTx(ctx, tx, &wfruntime.ScheduledStart{
		FireAt: at, Input: input, MaxAttempts: s.MaxAttempts, Retry: s.retryJSON, Metadata: meta, Priority: s.Priority,
		Queue: s.Queue, ScheduleID: s.ID, Skip: skip, StartAt: startAt, Timeout: s.Timeout, Trigger: wfruntime.TriggerAPI, Type: s.Workflow,
		Tenant: s.RunTenant(),
	})
	if err != nil {
		return uuid.Nil, err
	}
	if skip == "" {
		if err := c.q.CountScheduleRunTx(ctx, tx, s.ID, c.sqlNow()); err != nil {
			return uuid.Nil, err
		}
	}
	return started.RunID, nil
}

// admit applies the schedule's execution grant, then the overlap policy, to
// a run about to start (a slot, a trigger, a backfilled or resumed slot).
func (c *Client) admit(ctx context.Context, tx pgx.Tx, s *Schedule, policy OverlapPolicy, meta *runmeta.Meta) (string, time.Time, error) {
	skip, err := c.checkGrant(ctx, tx, s, c.now(), meta)
	if err != nil || skip != "" {
		return skip, time.Time{}, err
	}
	return c.overlap(ctx, tx, s.ID, policy, meta)
}

// lockToStart locks schedule id, within tx, to start runs of it under the
// overlap policy override, or the schedule's own when override is "". Under
// OverlapReplace, which cancels the schedule's unfinished runs, it locks
// those runs first: a finishing run's status trigger locks the run, then
// the schedule, and taking them in the other order deadlocks.
func (c *Client) lockToStart(ctx context.Context, tx pgx.Tx, id uuid.UUID, override OverlapPolicy) (*Schedule, error) {
	return scheduleOf(c.q.LockScheduleToStartTx(ctx, tx, id, string(override)))
}

// overlap applies the overlap policy to a slot about to start: it returns
// the skip reason (none: start it) and, for a queued run, when its job may
// start (far in the future: a finishing run releases it).
func (c *Client) overlap(ctx context.Context, tx pgx.Tx, id uuid.UUID, policy OverlapPolicy, meta *runmeta.Meta) (skip string, startAt time.Time, err error) {
	switch policy {
	case OverlapAllow:
		return "", time.Time{}, nil
	case OverlapReplace:
		_, err := c.rt.CancelScheduleRunsTx(ctx, tx, &wfruntime.ScheduleRuns{ScheduleID: id})
		return "", time.Time{}, err
	}
	busy, queued, err := c.q.ScheduleRunsUnfinished(ctx, tx, id)
	if err != nil {
		return "", time.Time{}, err
	}
	switch {
	case !busy:
		return "", time.Time{}, nil
	case policy == OverlapQueue && !queued:
		meta.Queued = true
		return "", c.now().Add(queuedHold), nil
	}
	return SkipReasonOverlap, time.Time{}, nil
}

// queuedHold is how far ahead a queued run's job is held until its
// predecessor finishes and releases it.
const queuedHold = 100 * 365 * 24 * time.Hour

// MaxBackfill bounds the slots one Backfill may start.
const MaxBackfill = 1000

// OverlapBuffer is a backfill's default overlap policy, and a backfill's
// only: every slot of the range runs, one after the other, oldest first (as
// Temporal's BufferAll). The first starts at once unless a run of the
// schedule is unfinished; each of the others is queued behind the one
// before it and released when that one finishes (completed, failed or
// cancelled). Schedules themselves cannot use it: an unbounded queue of
// future slots would only grow.
const OverlapBuffer OverlapPolicy = "buffer"

// History is the schedule's run ledger, newest first: one run per slot that
// fired (completed, failed, cancelled, running, …) or was skipped, with the
// skip reason, and the slot's nominal time and DST note in the run's
// metadata. It pages like workflow.Client.ListRuns.
func (c *Client) History(ctx context.Context, ref Ref, params *workflow.ListParams) ([]*workflow.Run, error) {
	id, err := c.id(ctx, c.rt.Pool(), ref)
	if err != nil {
		return nil, err
	}
	p := workflow.ListParams{}
	if params != nil {
		p = *params
	}
	p.ScheduleID = &id
	return c.wf.ListRuns(ctx, &p)
}

// storedWindow turns a stored catch-up window back into a Params value: a
// stored 0 (no window) is -1 there, since 0 means the default.
func storedWindow(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
