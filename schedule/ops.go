package schedule

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/wfhook"
	"github.com/tributary-go/tributary/workflow"
)

// UpdateParams change a schedule; nil fields stay as they are.
type UpdateParams struct {
	Name          *string
	Description   *string
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
}

// Update changes a schedule. A new cron expression, time zone, start or end
// takes effect at once: the pending slot is replaced by the first slot of the new timing
// after now (the old slot's job finds itself stale and fires nothing). Other
// changes apply from the next slot, which reads the schedule when it fires.
// Validation errors match ErrInvalid and change nothing.
func (c *Client) Update(ctx context.Context, id uuid.UUID, p *UpdateParams) (*Schedule, error) {
	return c.inTx(ctx, func(tx pgx.Tx) (*Schedule, error) { return c.UpdateTx(ctx, tx, id, p) })
}

// UpdateTx is like Update, within tx; the caller commits or rolls back.
func (c *Client) UpdateTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, p *UpdateParams) (*Schedule, error) {
	if err := c.bound(); err != nil {
		return nil, err
	}
	s, err := scanSchedule(tx.QueryRow(ctx, c.q.getForUpdate, id))
	if err != nil {
		return nil, err
	}
	if p == nil {
		return s, nil
	}
	params := &Params{
		Name: s.Name, Description: s.Description, Owner: s.Owner, Workflow: s.Workflow, Input: s.Input,
		Cron: s.Cron, TimeZone: s.TimeZone, StartAt: deref(s.StartAt), EndAt: deref(s.EndAt),
		Overlap: s.Overlap, CatchUpWindow: storedWindow(s.CatchUpWindow), CatchUp: s.CatchUp, MaxAttempts: s.MaxAttempts, Priority: s.Priority,
		Queue: s.Queue, Timeout: s.Timeout,
	}
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&params.Name, p.Name)
	set(&params.Description, p.Description)
	set(&params.Cron, p.Cron)
	set(&params.TimeZone, p.TimeZone)
	set(&params.Queue, p.Queue)
	set(&params.Owner, p.Owner)
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
			if err := c.requireUsableGrant(ctx, tx, *p.GrantID, s.Workflow); err != nil {
				return nil, err
			}
			grantID = p.GrantID
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
	v, err := c.validate(params)
	if err != nil {
		return nil, err
	}
	retimed := v.spec.Expr() != s.Cron || v.spec.Zone() != s.TimeZone || p.StartAt != nil || p.EndAt != nil
	next := s.NextFireAt
	if retimed && !s.Paused {
		next = &v.first
	}
	updated, err := scanSchedule(tx.QueryRow(ctx, c.q.update, id, params.Name, params.Description, v.input,
		v.spec.Expr(), v.spec.Zone(), string(v.overlap), v.catchUp.Milliseconds(), params.MaxAttempts,
		params.Timeout.Milliseconds(), params.Queue, params.Priority, next, string(v.catchUpPolicy),
		params.Owner, nullTime(params.StartAt), nullTime(params.EndAt), grantID))
	if err != nil {
		return nil, fmt.Errorf("schedule: update %s: %w", id, err)
	}
	if retimed && next != nil {
		if err := c.seedTx(ctx, tx, *next); err != nil {
			return nil, err
		}
	}
	return updated, nil
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
func (c *Client) Trigger(ctx context.Context, id uuid.UUID, opts *TriggerOpts) (uuid.UUID, error) {
	if err := c.bound(); err != nil {
		return uuid.Nil, err
	}
	var runID uuid.UUID
	err := pgx.BeginFunc(ctx, c.wf.Pool(), func(tx pgx.Tx) error {
		var err error
		runID, err = c.TriggerTx(ctx, tx, id, opts)
		return err
	})
	return runID, err
}

// TriggerTx is like Trigger, within tx; the caller commits or rolls back.
func (c *Client) TriggerTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, opts *TriggerOpts) (uuid.UUID, error) {
	if err := c.bound(); err != nil {
		return uuid.Nil, err
	}
	if opts == nil {
		opts = &TriggerOpts{}
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
	meta := map[string]any{"schedule_trigger": true}
	skip, startAt, err := c.admit(ctx, tx, s, overlap, meta)
	if err != nil {
		return uuid.Nil, err
	}
	// A triggered run is keyed on the moment it was triggered, to the
	// microsecond Postgres keeps.
	at := c.now().UTC().Truncate(time.Microsecond)
	started, err := c.wf.StartScheduledTx(ctx, tx, &wfhook.ScheduledStart{
		FireAt: at, Input: input, MaxAttempts: s.MaxAttempts, Metadata: meta, Priority: s.Priority,
		Queue: s.Queue, ScheduleID: s.ID, Skip: skip, StartAt: startAt, Timeout: s.Timeout, Type: s.Workflow,
	})
	if err != nil {
		return uuid.Nil, err
	}
	if skip == "" {
		if _, err := tx.Exec(ctx, c.q.countRun, s.ID); err != nil {
			return uuid.Nil, err
		}
	}
	return started.RunID, nil
}

// admit applies the schedule's execution grant, then the overlap policy, to
// a run about to start (a slot, a trigger, a backfilled or resumed slot).
func (c *Client) admit(ctx context.Context, tx pgx.Tx, s *Schedule, policy OverlapPolicy, meta map[string]any) (string, time.Time, error) {
	skip, err := c.checkGrant(ctx, tx, s, c.now(), meta)
	if err != nil || skip != "" {
		return skip, time.Time{}, err
	}
	return c.overlap(ctx, tx, s.ID, policy, meta)
}

// overlap applies the overlap policy to a slot about to start: it returns
// the skip reason (none: start it) and, for a queued run, when its job may
// start (far in the future: a finishing run releases it).
// lockToStart locks schedule id, within tx, to start runs of it under the
// overlap policy override, or the schedule's own when override is "". Under
// OverlapReplace, which cancels the schedule's unfinished runs, it locks
// those runs first: a finishing run's status trigger locks the run, then
// the schedule, and taking them in the other order deadlocks.
func (c *Client) lockToStart(ctx context.Context, tx pgx.Tx, id uuid.UUID, override OverlapPolicy) (*Schedule, error) {
	return scanSchedule(tx.QueryRow(ctx, c.q.lockToStart, id, string(override)))
}

func (c *Client) overlap(ctx context.Context, tx pgx.Tx, id uuid.UUID, policy OverlapPolicy, meta map[string]any) (skip string, startAt time.Time, err error) {
	switch policy {
	case OverlapAllow:
		return "", time.Time{}, nil
	case OverlapReplace:
		_, err := c.wf.CancelScheduleRunsTx(ctx, tx, &wfhook.ScheduleRuns{ScheduleID: id})
		return "", time.Time{}, err
	}
	var busy, queued bool
	if err := tx.QueryRow(ctx, c.q.unfinishedRuns, id).Scan(&busy, &queued); err != nil {
		return "", time.Time{}, err
	}
	switch {
	case !busy:
		return "", time.Time{}, nil
	case policy == OverlapQueue && !queued:
		meta["schedule_queued"] = true
		return "", c.now().Add(queuedHold), nil
	}
	return SkipReasonOverlap, time.Time{}, nil
}

// queuedHold is how far ahead a queued run's job is held until its
// predecessor finishes and releases it.
const queuedHold = 100 * 365 * 24 * time.Hour

// MaxBackfill bounds the slots one Backfill may start.
const MaxBackfill = 1000

// BackfillOpts override, for the backfilled runs, the schedule's input and
// overlap policy. A nil *BackfillOpts uses the schedule's.
type BackfillOpts struct {
	Input   any
	Overlap OverlapPolicy
}

// Backfill runs the schedule's slots in [from, to) that have not run: each
// slot at most once (a slot that already has its run is left alone), oldest
// first, honouring the overlap policy (under OverlapSkip only the first
// starts while it is unfinished; the others are recorded as skipped) and the
// execution grant. It returns how many slots it started or recorded.
func (c *Client) Backfill(ctx context.Context, id uuid.UUID, from, to time.Time, opts *BackfillOpts) (int, error) {
	if err := c.bound(); err != nil {
		return 0, err
	}
	n := 0
	err := pgx.BeginFunc(ctx, c.wf.Pool(), func(tx pgx.Tx) error {
		var err error
		n, err = c.BackfillTx(ctx, tx, id, from, to, opts)
		return err
	})
	return n, err
}

// BackfillTx is like Backfill, within tx; the caller commits or rolls back.
func (c *Client) BackfillTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, from, to time.Time, opts *BackfillOpts) (int, error) {
	if err := c.bound(); err != nil {
		return 0, err
	}
	if !to.After(from) {
		return 0, &ValidationError{Field: "to", Problem: "is not after from"}
	}
	var override OverlapPolicy
	if opts != nil {
		override = opts.Overlap
	}
	s, err := c.lockToStart(ctx, tx, id, override)
	if err != nil {
		return 0, err
	}
	if opts != nil {
		if opts.Input != nil {
			input, err := json.Marshal(opts.Input)
			if err != nil {
				return 0, &ValidationError{Field: "BackfillOpts.Input", Problem: fmt.Sprintf("cannot be encoded as JSON: %v", err)}
			}
			s.Input = input
		}
		if s.Overlap, err = overlapOverride("BackfillOpts.Overlap", s.Overlap, opts.Overlap); err != nil {
			return 0, err
		}
	}
	spec, err := s.Spec()
	if err != nil {
		return 0, err
	}
	var due []Occurrence
	for _, occ := range spec.NextN(from.Add(-time.Second), MaxBackfill+1) {
		if !occ.At.Before(to) {
			break
		}
		due = append(due, occ)
	}
	if len(due) > MaxBackfill {
		return 0, &ValidationError{Field: "range", Problem: fmt.Sprintf("holds more than %d slots; backfill a shorter range at a time", MaxBackfill)}
	}
	return c.startSlotsTx(ctx, tx, s, spec, due)
}

// startSlotsTx starts the runs of slots (oldest first), each at most once,
// honouring the overlap policy, and counts the runs it started. It returns
// how many slots it started or recorded as skipped.
func (c *Client) startSlotsTx(ctx context.Context, tx pgx.Tx, s *Schedule, spec *Spec, slots []Occurrence) (int, error) {
	// Leave out the slots that have their run already, before anything
	// else: their overlap policy must not act again (replace would cancel a
	// run), and inserting a run that conflicts with one that is finishing
	// would wait for it while this transaction holds the schedule, which
	// that run's status trigger needs: a deadlock.
	at := make([]time.Time, len(slots))
	for i, occ := range slots {
		at[i] = occ.At
	}
	rows, err := tx.Query(ctx, c.q.slotsWithRuns, s.ID, at)
	if err != nil {
		return 0, fmt.Errorf("schedule: find the slots of %s that have run: %w", s.ID, err)
	}
	done, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	if err != nil {
		return 0, fmt.Errorf("schedule: find the slots of %s that have run: %w", s.ID, err)
	}
	n, ran := 0, 0
	for _, occ := range slots {
		if slices.ContainsFunc(done, occ.At.Equal) {
			continue
		}
		meta := slotMetadata(spec, occ.At)
		skip, startAt, err := c.admit(ctx, tx, s, s.Overlap, meta)
		if err != nil {
			return 0, err
		}
		started, err := c.wf.StartScheduledTx(ctx, tx, &wfhook.ScheduledStart{
			FireAt: occ.At, Input: s.Input, MaxAttempts: s.MaxAttempts, Metadata: meta, Priority: s.Priority,
			Queue: s.Queue, ScheduleID: s.ID, Skip: skip, StartAt: startAt, Timeout: s.Timeout, Type: s.Workflow,
		})
		if err != nil {
			return 0, err
		}
		if !started.Existing {
			n++
			if skip == "" {
				ran++
			}
		}
	}
	if _, err := tx.Exec(ctx, c.q.addRuns, s.ID, ran); err != nil {
		return 0, err
	}
	return n, nil
}

// History is the schedule's run ledger, newest first: one run per slot that
// fired (completed, failed, cancelled, running, …) or was skipped, with the
// skip reason, and the slot's nominal time and DST note in the run's
// metadata. It pages like workflow.Client.ListRuns.
func (c *Client) History(ctx context.Context, id uuid.UUID, params *workflow.ListParams) ([]*workflow.Run, error) {
	if err := c.bound(); err != nil {
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
