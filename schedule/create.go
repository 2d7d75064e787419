package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/workflow"
)

// Create validates p, then inserts the schedule and its first slot's fire
// job in one transaction. Validation errors (a bad cron, an unknown zone, an
// end before the start, no occurrence in range, an unknown workflow type,
// bad input) match ErrInvalid and write nothing.
func (c *Client) Create(ctx context.Context, p *Params) (*Schedule, error) {
	var s *Schedule
	err := pgx.BeginFunc(ctx, c.rt.Pool(), func(tx pgx.Tx) error {
		var err error
		s, err = c.CreateTx(ctx, tx, p)
		return err
	})
	return s, err
}

// checkInput checks a schedule's input, encoded, against what the workers
// of typ accept (wfruntime.Runtime.InputChecker), reading their limits in tx,
// as a *ValidationError of field.
func (c *Client) checkInput(ctx context.Context, tx pgx.Tx, typ string, input []byte, field string) error {
	check, err := c.rt.InputChecker(ctx, tx)
	if err != nil {
		return err
	}
	return inputError(check(typ, input), field)
}

// inputError turns the workflow engine's refusal of an input into a
// *ValidationError of field.
func inputError(err error, field string) error {
	var verr *workflow.ValidationError
	if errors.As(err, &verr) {
		return &ValidationError{Field: field, Problem: verr.Problem}
	}
	return err
}

// CreateTx is like Create, within tx; the caller commits or rolls back.
func (c *Client) CreateTx(ctx context.Context, tx pgx.Tx, p *Params) (*Schedule, error) {
	v, err := c.validate(ctx, c.db(tx), p)
	if err != nil {
		return nil, err
	}
	if p.GrantID != nil {
		if err := c.requireUsableGrant(ctx, tx, *p.GrantID, p.Workflow); err != nil {
			return nil, err
		}
	}
	if err := c.checkInput(ctx, tx, p.Workflow, v.input, "Input"); err != nil {
		return nil, err
	}
	if p.RequireWorker {
		served, err := c.rt.TypeServed(ctx, tx, p.Workflow)
		if err != nil {
			return nil, err
		}
		if !served {
			return nil, &workflow.NoWorkerError{WorkflowType: p.Workflow}
		}
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var next *time.Time
	if !p.Paused {
		next = &v.first
	}
	row := insertParams(id, p, v, next)
	row.Now = c.sqlNow()
	inserted, err := c.q.InsertScheduleTx(ctx, tx, &row)
	if errors.Is(err, engine.ErrKeyExists) {
		return c.existingTx(ctx, tx, &row)
	}
	s, err := scheduleOf(inserted, err)
	if err != nil {
		return nil, fmt.Errorf("schedule: insert schedule: %w", err)
	}
	if next != nil {
		if err := c.seedTx(ctx, tx, *next); err != nil {
			return nil, err
		}
	}
	return c.preparedTx(ctx, tx, s)
}

// existingTx is what Create returns when row's owner has its key already:
// that schedule, marked Existing, when its spec is row's, or a
// *KeyConflictError naming the fields that differ.
func (c *Client) existingTx(ctx context.Context, tx pgx.Tx, row *engine.InsertScheduleParams) (*Schedule, error) {
	stored, err := c.q.ScheduleByKey(ctx, tx, row.Owner, row.Key)
	if errors.Is(err, engine.ErrNotFound) {
		// The key's schedule was inserted after this transaction's
		// snapshot was taken (REPEATABLE READ or SERIALIZABLE).
		return nil, keyNotVisible(row.Owner, row.Key)
	}
	if err != nil {
		return nil, fmt.Errorf("schedule: read %s: %w", ByKey(row.Owner, row.Key), err)
	}
	return matchExisting(stored, row)
}

// keyNotVisible is the error of a key that exists (an insert of it found
// it) but that the caller's transaction cannot read.
func keyNotVisible(owner, key string) error {
	return fmt.Errorf("schedule: %s exists but this transaction cannot see it yet; retry in a new transaction", ByKey(owner, key))
}

// matchExisting is the schedule stored, marked Existing, when it has the
// spec of row (which has its owner and key), or a *KeyConflictError.
func matchExisting(stored *engine.Schedule, row *engine.InsertScheduleParams) (*Schedule, error) {
	if diffs := specDiff(stored, row); len(diffs) > 0 {
		return nil, &KeyConflictError{Owner: row.Owner, Key: row.Key, ID: stored.ID, DeclaredBy: stored.DeclaredBy, Diffs: diffs}
	}
	s, _ := scheduleOf(stored, nil)
	s.Existing = true
	return s, nil
}

// insertParams are the columns CreateTx inserts for p, validated as v, as
// schedule id with next slot next (nil for a paused schedule).
func insertParams(id uuid.UUID, p *Params, v *validated, next *time.Time) engine.InsertScheduleParams {
	return engine.InsertScheduleParams{
		ID: id, Name: p.Name, Description: p.Description, Owner: p.Owner, Type: p.Workflow, Input: v.input,
		Cron: v.spec.Expr(), TimeZone: v.spec.Zone(), StartAt: nullTime(p.StartAt), EndAt: nullTime(p.EndAt),
		OverlapPolicy: string(v.overlap), CatchUpWindowMS: v.catchUp.Milliseconds(), MaxAttempts: p.MaxAttempts,
		TimeoutMS: p.Timeout.Milliseconds(), Queue: p.Queue, Priority: p.Priority, Paused: p.Paused,
		PauseNote: p.PauseNote, NextFireAt: next, CatchUpPolicy: string(v.catchUpPolicy), GrantID: p.GrantID,
		KeepRuns: p.KeepRuns, Key: p.Key, CreatedBy: p.CreatedBy, RunTenant: p.Tenant,
		DSTGap: string(v.spec.DST().Gap), DSTFold: string(v.spec.DST().Fold),
		Calendars: v.calendars, OnExcluded: string(v.onExcluded), Retry: v.retry,
	}
}

type validated struct {
	calendars     []string   // Params.Calendars, checked, each once, in order
	onExcluded    OnExcluded // with its default
	catchUp       time.Duration
	catchUpPolicy CatchUpPolicy
	first         time.Time
	input         []byte
	overlap       OverlapPolicy
	retry         []byte // Params.Retry's JSON, nil for none
	spec          *Spec
}

func (c *Client) validate(ctx context.Context, db engine.DBTX, p *Params) (*validated, error) {
	var names []string
	if p != nil {
		names = p.Calendars
	}
	cal, err := c.calendarDates(ctx, db, names)
	if err != nil {
		return nil, err
	}
	return c.validateAt(p, c.now(), parseRule, cal)
}

// paramsCalendars reads the dates of every calendar that params name.
func (c *Client) paramsCalendars(ctx context.Context, db engine.DBTX, params []*Params) (map[string][]ExcludedDate, error) {
	var names []string
	for _, p := range params {
		if p != nil {
			for _, name := range p.Calendars {
				if !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
	}
	return c.calendarDates(ctx, db, names)
}

// validateAt is validate with the first slot taken after now (or StartAt)
// and parse in place of ParseSpec: CreateManyTx gives a batch one now, and
// parses each distinct expression and zone once.
// cal holds the dates of the calendars p names (calendarDates).
func (c *Client) validateAt(p *Params, now time.Time, parse func(expr, zone string) (*Spec, error), cal map[string][]ExcludedDate) (*validated, error) {
	if p == nil {
		return nil, &ValidationError{Field: "Params", Problem: "is nil"}
	}
	switch {
	case strings.TrimSpace(p.Name) == "":
		return nil, &ValidationError{Field: "Name", Problem: "is empty; give the schedule a name operators recognize"}
	case len(p.Name) > 200:
		return nil, &ValidationError{Field: "Name", Problem: fmt.Sprintf("is %d bytes, the limit is 200", len(p.Name))}
	case p.Workflow == "":
		return nil, &ValidationError{Field: "Workflow", Problem: "is empty; name the workflow type each slot starts"}
	case len(p.CreatedBy) > 200:
		return nil, &ValidationError{Field: "CreatedBy", Problem: fmt.Sprintf("is %d bytes, the limit is 200", len(p.CreatedBy))}
	}
	if err := checkKey("Key", p.Key); err != nil {
		return nil, err
	}
	if p.Tenant != "" {
		if err := checkTenant("Tenant", p.Tenant); err != nil {
			return nil, err
		}
	}
	if err := c.rt.ValidateTypeName(p.Workflow); err != nil {
		return nil, &ValidationError{Field: "Workflow", Problem: err.Error()}
	}
	switch {
	case p.KeepRuns < 0 || p.KeepRuns > MaxKeepRuns:
		return nil, &ValidationError{Field: "KeepRuns", Problem: fmt.Sprintf("is %d; use 0 (retention applies to every run) to %d", p.KeepRuns, MaxKeepRuns)}
	case p.MaxAttempts < 0:
		return nil, &ValidationError{Field: "MaxAttempts", Problem: fmt.Sprintf("is %d; use 0 for the workflow's default, or at least 1", p.MaxAttempts)}
	case p.Priority < 0 || p.Priority > 4:
		return nil, &ValidationError{Field: "Priority", Problem: fmt.Sprintf("is %d; use 0 for the workflow's default, or 1 (highest) to 4", p.Priority)}
	case p.Queue != "" && !queueRE.MatchString(p.Queue):
		return nil, &ValidationError{Field: "Queue", Problem: fmt.Sprintf("%q is not a valid River queue name; use lowercase letters, digits, _ and -", p.Queue)}
	}
	retry, err := retryJSON(p.Retry)
	if err != nil {
		return nil, err
	}
	if types := c.wf.Types(); len(types) > 0 && !slices.Contains(types, p.Workflow) {
		return nil, &ValidationError{Field: "Workflow", Problem: fmt.Sprintf("%q is not a workflow type of this client (registered: %v)", p.Workflow, types)}
	}
	rule := p.Cron
	if p.RRule == "" && strings.HasPrefix(strings.ToUpper(strings.TrimSpace(p.Cron)), rrulePrefix) {
		return nil, &ValidationError{Field: "Cron", Problem: "is an RRULE (it begins with DTSTART:); set it as RRule"}
	}
	if p.RRule != "" {
		if strings.TrimSpace(p.Cron) != "" {
			return nil, &ValidationError{Field: "RRule", Problem: "is set with Cron; a schedule has one rule: set Cron or RRule"}
		}
		if rule = strings.TrimSpace(p.RRule); !strings.HasPrefix(strings.ToUpper(rule), rrulePrefix) {
			return nil, &RRuleError{Rule: p.RRule, Part: "DTSTART", Reason: "the rule must begin with its DTSTART line",
				hint: "write the first occurrence's local time first, such as DTSTART:20270105T090000, then the RRULE line"}
		}
		rule = rrulePrefix + rule[len(rrulePrefix):]
	}
	spec, err := parse(rule, p.TimeZone)
	if err != nil {
		return nil, err
	}
	if spec, err = spec.WithDST(DSTPolicy{Gap: p.DSTGap, Fold: p.DSTFold}); err != nil {
		return nil, err
	}
	calendars, excluded, err := checkCalendars(p.Calendars, cal)
	if err != nil {
		return nil, err
	}
	if spec, err = spec.WithExclusions(excluded, p.OnExcluded); err != nil {
		return nil, err
	}
	onExcluded := p.OnExcluded
	if onExcluded == "" {
		onExcluded = ExcludedSkip
	}
	overlap, err := overlapOverride("Overlap", OverlapSkip, p.Overlap)
	if err != nil {
		return nil, err
	}
	if !p.StartAt.IsZero() && !p.EndAt.IsZero() && !p.EndAt.After(p.StartAt) {
		return nil, &ValidationError{Field: "EndAt", Problem: fmt.Sprintf("%s is not after StartAt %s", p.EndAt.Format(time.RFC3339), p.StartAt.Format(time.RFC3339))}
	}
	input, err := json.Marshal(p.Input)
	if err != nil {
		return nil, &ValidationError{Field: "Input", Problem: fmt.Sprintf("cannot be encoded as JSON: %v", err)}
	}
	catchUp := p.CatchUpWindow
	if catchUp == 0 {
		catchUp = DefaultCatchUpWindow
	}
	catchUpPolicy := p.CatchUp
	switch catchUpPolicy {
	case "":
		catchUpPolicy = CatchUpWindow
	case CatchUpWindow, CatchUpLatest:
	default:
		return nil, &ValidationError{Field: "CatchUp", Problem: fmt.Sprintf("%q is not a catch-up policy; use window or latest", catchUpPolicy)}
	}
	if !p.EndAt.IsZero() && !p.EndAt.After(now) {
		return nil, &ValidationError{Field: "EndAt", Problem: fmt.Sprintf("%s is in the past, so no slot would ever fire; give a later end, or none", p.EndAt.UTC().Format(time.RFC3339))}
	}
	first, ok := firstSlot(spec, p.StartAt, p.EndAt, now)
	if !ok {
		if p.RRule != "" {
			return nil, &ValidationError{Field: "RRule", Problem: "has no occurrence between now (or StartAt) and EndAt; widen the range, or change the rule's DTSTART, COUNT or UNTIL"}
		}
		return nil, &ValidationError{Field: "Cron", Problem: fmt.Sprintf("%q has no occurrence between now (or StartAt) and EndAt; widen the range or change the expression", p.Cron)}
	}
	return &validated{catchUp: max(catchUp, 0), catchUpPolicy: catchUpPolicy, first: first, input: input, overlap: overlap, spec: spec,
		calendars: calendars, onExcluded: onExcluded, retry: retry}, nil
}

// firstSlot is the first occurrence after max(now, start) and before end.
func firstSlot(spec *Spec, start, end, now time.Time) (time.Time, bool) {
	after := now
	if start.After(after) {
		after = start.Add(-time.Second) // StartAt itself may be a slot
	}
	occ, ok := spec.Next(after)
	if !ok || (!end.IsZero() && !occ.At.Before(end)) {
		return time.Time{}, false
	}
	return occ.At, true
}
