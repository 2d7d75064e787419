package schedule

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/runmeta"
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
	return updated, c.loadCalendarsTx(ctx, tx, updated)
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
	err := pgx.BeginFunc(ctx, c.wf.Pool(), func(tx pgx.Tx) error {
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
	started, err := c.engine.StartScheduledTx(ctx, tx, &engine.ScheduledStart{
		FireAt: at, Input: input, MaxAttempts: s.MaxAttempts, Retry: s.retryJSON, Metadata: meta, Priority: s.Priority,
		Queue: s.Queue, ScheduleID: s.ID, Skip: skip, StartAt: startAt, Timeout: s.Timeout, Trigger: engine.TriggerAPI, Type: s.Workflow,
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
		_, err := c.engine.CancelScheduleRunsTx(ctx, tx, &engine.ScheduleRuns{ScheduleID: id})
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

// BackfillOpts override, for the backfilled runs, the schedule's input, and
// choose the overlap policy and whether slots skipped before run now. A nil
// *BackfillOpts backfills with OverlapBuffer and leaves skipped slots as
// they are.
type BackfillOpts struct {
	// Input replaces the schedule's input for these runs.
	Input any
	// Overlap is how the backfilled runs overlap each other and the
	// schedule's unfinished runs: OverlapBuffer (the default) runs them
	// all, one after the other; OverlapAllow starts them all at once;
	// OverlapSkip and OverlapQueue apply the schedule policies of those
	// names slot by slot, so they skip slots while one runs (the result
	// says how many); OverlapReplace cancels the schedule's unfinished
	// runs, then starts them all.
	Overlap OverlapPolicy
	// RerunSkipped runs the slots of the range that were recorded as
	// skipped (overlap, missed, a grant, a refused start): their skip
	// record is replaced by the new run, whose metadata keeps the old
	// reason as schedule_rerun_of. Without it, a skipped slot counts as
	// having run, like any other slot with a record.
	RerunSkipped bool
}

// BackfillResult says what a backfill did with each slot of its range:
// Slots = Started + Queued + Existing + the sum of Skipped.
type BackfillResult struct {
	// Slots is how many slots the range holds.
	Slots int `json:"slots"`
	// Started is how many runs started at once.
	Started int `json:"started"`
	// Queued is how many runs wait for the one before them (OverlapBuffer,
	// OverlapQueue) and start when it finishes.
	Queued int `json:"queued"`
	// Existing is how many slots had their run, or their skip record,
	// already and were left alone.
	Existing int `json:"existing"`
	// Rerun is how many of the started and queued runs replaced a skip
	// record (BackfillOpts.RerunSkipped).
	Rerun int `json:"rerun"`
	// Skipped counts the slots recorded as skipped now, by reason:
	// "overlap" under OverlapSkip or OverlapQueue, a grant's reason.
	Skipped map[string]int `json:"skipped,omitempty"`
}

// String says what became of the slots, for people: "20 slots: 1 started,
// 19 queued to run one after the other", then what was skipped and why,
// what had run already and what ran again after a skip.
func (r *BackfillResult) String() string {
	if r.Slots == 0 {
		return "no slot in this range"
	}
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(r.Started, "started")
	add(r.Queued, "queued to run one after the other")
	for _, reason := range slices.Sorted(maps.Keys(r.Skipped)) {
		add(r.Skipped[reason], "skipped ("+reason+")")
	}
	add(r.Existing, "had run (or been skipped) already")
	add(r.Rerun, "of them run again after a skip")
	slots := fmt.Sprintf("%d slots", r.Slots)
	if r.Slots == 1 {
		slots = "1 slot"
	}
	return slots + ": " + strings.Join(parts, ", ")
}

// Backfill runs the schedule's slots in [from, to) that have no run yet,
// oldest first, each at most once: a slot that has its run, or a record of
// why it was skipped, is left alone (see BackfillOpts.RerunSkipped). A
// backfill is an explicit request to run those slots, so by default it
// runs all of them, one after the other (OverlapBuffer), whatever the
// schedule's own overlap policy; the execution grant applies as at fire
// time. It is one transaction: all of it or none. The result counts what
// happened to every slot of the range. A start the workflow engine refuses
// (an Input over its limit) is an error, and nothing is written.
func (c *Client) Backfill(ctx context.Context, ref Ref, from, to time.Time, opts *BackfillOpts) (*BackfillResult, error) {
	var res *BackfillResult
	err := pgx.BeginFunc(ctx, c.wf.Pool(), func(tx pgx.Tx) error {
		var err error
		res, err = c.BackfillTx(ctx, tx, ref, from, to, opts)
		return err
	})
	return res, err
}

// BackfillTx is like Backfill, within tx; the caller commits or rolls back.
func (c *Client) BackfillTx(ctx context.Context, tx pgx.Tx, ref Ref, from, to time.Time, opts *BackfillOpts) (*BackfillResult, error) {
	if !to.After(from) {
		return nil, &ValidationError{Field: "to", Problem: "is not after from"}
	}
	if opts == nil {
		opts = &BackfillOpts{}
	}
	policy := cmp.Or(opts.Overlap, OverlapBuffer)
	lockPolicy := policy
	if policy == OverlapBuffer {
		lockPolicy = ""
	} else if _, err := overlapOverride("BackfillOpts.Overlap", OverlapSkip, policy); err != nil {
		return nil, &ValidationError{Field: "BackfillOpts.Overlap", Problem: fmt.Sprintf("%q is not an overlap policy; use buffer (the default: all, one after the other), allow, skip, queue or replace", policy)}
	}
	id, err := c.id(ctx, tx, ref)
	if err != nil {
		return nil, err
	}
	s, err := c.lockToStart(ctx, tx, id, lockPolicy)
	if err != nil {
		return nil, err
	}
	if opts.Input != nil {
		input, err := json.Marshal(opts.Input)
		if err != nil {
			return nil, &ValidationError{Field: "BackfillOpts.Input", Problem: fmt.Sprintf("cannot be encoded as JSON: %v", err)}
		}
		s.Input = input
		if err := c.checkInput(ctx, tx, s.Workflow, s.Input, "BackfillOpts.Input"); err != nil {
			return nil, err
		}
	} else if err := c.checkInput(ctx, tx, s.Workflow, s.Input, "Input"); err != nil {
		return nil, fmt.Errorf("%w (the schedule's input; pass BackfillOpts.Input, or Update the schedule)", err)
	}
	if err := c.loadCalendarsTx(ctx, tx, s); err != nil {
		return nil, err
	}
	spec, err := s.Spec()
	if err != nil {
		return nil, err
	}
	var due []Occurrence
	for _, occ := range spec.NextN(from.Add(-time.Second), MaxBackfill+1) {
		if !occ.At.Before(to) {
			break
		}
		due = append(due, occ)
	}
	if len(due) > MaxBackfill {
		return nil, &ValidationError{Field: "range", Problem: fmt.Sprintf("holds more than %d slots; backfill a shorter range at a time", MaxBackfill)}
	}
	return c.startSlotsTx(ctx, tx, s, spec, due, policy, opts.RerunSkipped)
}

// startSlotsTx starts the runs of slots (oldest first), each at most once,
// under policy (OverlapBuffer or a schedule policy), in one
// StartScheduledManyTx, and counts what it did with each slot. With
// rerunSkipped, the slots' skip records are deleted first and their slots
// run like the others.
func (c *Client) startSlotsTx(ctx context.Context, tx pgx.Tx, s *Schedule, spec *Spec, slots []Occurrence, policy OverlapPolicy, rerunSkipped bool) (*BackfillResult, error) {
	res := &BackfillResult{Slots: len(slots)}
	if len(slots) == 0 {
		return res, nil
	}
	at := make([]time.Time, len(slots))
	for i, occ := range slots {
		at[i] = occ.At
	}
	rerunOf := map[int64]string{}
	if rerunSkipped {
		skipped, err := c.q.DeleteSkippedSlotsTx(ctx, tx, s.ID, at)
		if err != nil {
			return nil, fmt.Errorf("schedule: delete the skip records of %s to run them: %w", s.ID, err)
		}
		for _, sk := range skipped {
			rerunOf[sk.FireAt.UnixMicro()] = sk.Reason
		}
	}
	// Leave out the slots that have their run already, with a plain read
	// (see StartScheduledManyTx): their overlap policy must not act again.
	done, err := c.q.SlotsWithRuns(ctx, tx, s.ID, at)
	if err != nil {
		return nil, fmt.Errorf("schedule: find the slots of %s that have run: %w", s.ID, err)
	}

	now := c.now()
	var grantMeta runmeta.Meta
	grantSkip, err := c.checkGrant(ctx, tx, s, now, &grantMeta)
	if err != nil {
		return nil, err
	}
	var busy, queued bool
	switch {
	case grantSkip != "" || policy == OverlapAllow:
	case policy == OverlapReplace:
		if _, err := c.engine.CancelScheduleRunsTx(ctx, tx, &engine.ScheduleRuns{ScheduleID: s.ID}); err != nil {
			return nil, err
		}
	default:
		if busy, queued, err = c.q.ScheduleRunsUnfinished(ctx, tx, s.ID); err != nil {
			return nil, err
		}
		busy = busy || queued
	}

	var starts []*engine.ScheduledStart
	tenant := s.RunTenant()
	for _, occ := range slots {
		if slices.ContainsFunc(done, occ.At.Equal) {
			res.Existing++
			continue
		}
		meta, dstSkipped := slotMetadata(spec, occ.At)
		meta.Backfill = true
		meta.GrantSubject, meta.GrantID = grantMeta.GrantSubject, grantMeta.GrantID
		if reason, ok := rerunOf[occ.At.UnixMicro()]; ok {
			meta.RerunOf = reason
		}
		skip, startAt := grantSkip, time.Time{}
		if skip == "" {
			skip = dstSkipped
		}
		if skip == "" {
			switch policy {
			case OverlapBuffer:
				if busy {
					meta.Queued = true
					startAt = now.Add(queuedHold)
				}
				busy = true
			case OverlapQueue:
				switch {
				case !busy:
					busy = true
				case !queued:
					meta.Queued = true
					startAt, queued = now.Add(queuedHold), true
				default:
					skip = SkipReasonOverlap
				}
			case OverlapSkip:
				if busy {
					skip = SkipReasonOverlap
				}
				busy = true
			}
		}
		starts = append(starts, &engine.ScheduledStart{
			FireAt: occ.At, Input: s.Input, MaxAttempts: s.MaxAttempts, Retry: s.retryJSON, Metadata: meta, Priority: s.Priority,
			Queue: s.Queue, ScheduleID: s.ID, Skip: skip, StartAt: startAt, Timeout: s.Timeout, Trigger: engine.TriggerBackfill, Type: s.Workflow,
			Tenant: tenant,
		})
	}
	started, err := c.engine.StartScheduledManyTx(ctx, tx, starts)
	if err != nil {
		return nil, err
	}
	for i, st := range started {
		switch {
		case st.Existing:
			res.Existing++
		case st.Skip != "" && starts[i].Skip == "":
			// The engine refused the run (an input over its limit): an
			// operator's explicit start says so instead of recording it.
			return nil, &ValidationError{Field: "run", Problem: strings.TrimPrefix(st.Skip, engine.SkipCannotStart) + " (nothing was backfilled)"}
		case st.Skip != "":
			if res.Skipped == nil {
				res.Skipped = map[string]int{}
			}
			res.Skipped[skipKind(st.Skip)]++
		case !starts[i].StartAt.IsZero():
			res.Queued++
		default:
			res.Started++
		}
		if _, ok := rerunOf[starts[i].FireAt.UnixMicro()]; ok && st.Skip == "" && !st.Existing {
			res.Rerun++
		}
	}
	if ran := res.Started + res.Queued; ran > 0 {
		if err := c.q.AddScheduleRunsTx(ctx, tx, s.ID, ran, c.sqlNow()); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// History is the schedule's run ledger, newest first: one run per slot that
// fired (completed, failed, cancelled, running, …) or was skipped, with the
// skip reason, and the slot's nominal time and DST note in the run's
// metadata. It pages like workflow.Client.ListRuns.
func (c *Client) History(ctx context.Context, ref Ref, params *workflow.ListParams) ([]*workflow.Run, error) {
	id, err := c.id(ctx, c.wf.Pool(), ref)
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
