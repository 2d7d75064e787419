package schedule

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
)

// Declaration is the set of schedules a service declares in its code, for
// Declare to make true in the database at start-up.
type Declaration struct {
	// Service names the declaring service, such as "billing". Each service's
	// declared schedules are its own: Declare creates, updates, pauses and
	// deletes only schedules that Service declared, never one made by
	// Create (by hand from the CLI, the API or the dashboard, or by code)
	// nor one another service declared. Required, at most 200 bytes.
	Service string

	// Version orders the declarations of Service, so that an old build
	// never undoes a new one's: a Declare whose Version is lower than the
	// newest one applied changes nothing (DeclareResult.Superseded). Give
	// each deploy a larger number, such as a release number or the build's
	// Unix time; during a rolling deploy the old replicas, restarting, then
	// leave the new declaration alone. Among declarations of one Version
	// the newest call wins.
	//
	// Defaults to 0: every declaration has the same version and the newest
	// call wins, so an old replica restarting in the middle of a rolling
	// deploy puts its own spec back until a new replica starts. At least 0.
	Version int64

	// Schedules are the schedules, each with a Key, unique per Owner among
	// them (the Owner may differ between them). Every field of Params is
	// the code's, and Declare makes the stored schedule match it, but
	// Paused and PauseNote: those apply when Declare creates the schedule,
	// and afterwards pausing and resuming are the operator's (Pause,
	// Resume), which a declaration never undoes. CreatedBy must be empty.
	// RequireWorker is not supported here. At most MaxCreateMany.
	Schedules []*Params

	// Undeclared is what becomes of a schedule Service declared before and
	// declares no longer. Defaults to UndeclaredPause.
	Undeclared UndeclaredPolicy
}

// UndeclaredPolicy says what Declare does with a schedule its service no
// longer declares.
type UndeclaredPolicy string

// Undeclared-schedule policies.
const (
	// UndeclaredPause pauses it, with a note saying why; its runs and
	// history stay, and declaring its key again resumes it (skipping the
	// slots missed meanwhile). Nothing is lost to a declaration that
	// forgot a schedule by mistake. A schedule an operator had paused
	// keeps that pause and its note, and stays paused when declared again.
	UndeclaredPause UndeclaredPolicy = "pause"
	// UndeclaredDelete deletes it, as Delete does: its past runs stay,
	// with no schedule.
	UndeclaredDelete UndeclaredPolicy = "delete"
)

// DeclareAction is what Declare did with one schedule.
type DeclareAction string

// Declare's actions.
const (
	DeclareCreated   DeclareAction = "created"
	DeclareUpdated   DeclareAction = "updated"
	DeclareUnchanged DeclareAction = "unchanged"
	// DeclareResumed: declared again after a declaration had paused it as
	// undeclared (with its spec updated when Changes is not empty).
	DeclareResumed DeclareAction = "resumed"
	// DeclarePaused and DeclareDeleted: no longer declared.
	DeclarePaused  DeclareAction = "paused"
	DeclareDeleted DeclareAction = "deleted"
)

// Decision is what Declare did with one schedule.
type Decision struct {
	Action DeclareAction `json:"action"`
	// Schedule is the schedule as it is now (as it was, once deleted).
	Schedule *Schedule `json:"schedule"`
	// Changes are the fields an update changed, from the stored value to
	// the declared one.
	Changes []FieldDiff `json:"changes,omitempty"`
}

// String is "created nightly-report", `updated digest: Cron "0 8 * * *"
// → "0 9 * * *"`; a key with an owner reads "acme/digest".
func (d Decision) String() string {
	name := d.Schedule.Key
	if d.Schedule.Owner != "" {
		name = d.Schedule.Owner + "/" + name
	}
	out := string(d.Action) + " " + name
	if len(d.Changes) > 0 {
		changes := make([]string, len(d.Changes))
		for i, ch := range d.Changes {
			changes[i] = ch.String()
		}
		out += ": " + strings.Join(changes, ", ")
	}
	return out
}

// DeclareResult says what Declare did.
type DeclareResult struct {
	Service string `json:"service"`
	Version int64  `json:"version"`
	// Superseded is set when a declaration of Service with a higher
	// version (AppliedVersion) was applied before: this one changed
	// nothing, and Decisions is empty.
	Superseded     bool  `json:"superseded,omitempty"`
	AppliedVersion int64 `json:"applied_version"`
	// Decisions holds one decision per declared schedule, in the order of
	// Declaration.Schedules, then one per schedule no longer declared
	// (paused, deleted) in id order; a schedule undeclared and paused by
	// an earlier call has none.
	Decisions []Decision `json:"decisions"`
}

// String lists what changed, for a log line: "created nightly-report;
// updated digest: Cron "0 8 * * *" → "0 9 * * *"; 3 unchanged".
func (r *DeclareResult) String() string {
	if r.Superseded {
		return fmt.Sprintf("changed nothing: version %d of service %s is applied, newer than this version %d", r.AppliedVersion, r.Service, r.Version)
	}
	var parts []string
	unchanged := 0
	for _, d := range r.Decisions {
		if d.Action == DeclareUnchanged {
			unchanged++
			continue
		}
		parts = append(parts, d.String())
	}
	if unchanged > 0 || len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("%d unchanged", unchanged))
	}
	return strings.Join(parts, "; ")
}

// Declare makes the schedules of decl true in the database, in one
// transaction: it creates the declared schedules that are missing, updates
// those whose stored spec differs from the code's, and pauses or deletes
// (decl.Undeclared) those decl.Service declared before and no longer
// declares. Call it at start-up, from every replica: declarations of one
// service take turns on a row lock, the first makes the changes, and the
// others find nothing to do, so replicas deploying at once make no
// duplicate. During a rolling deploy a declaration with a lower Version than
// one applied changes nothing, so the old and the new code never flap a
// schedule between two specs (see Declaration.Version). Each decision is
// logged ("created nightly-report"; `updated digest: Cron "0 8 * * *" → "0 9
// * * *"`) to the client's Logger once committed.
//
// Declare never touches a schedule it did not create: a declared key that
// its owner has already on a schedule made by Create or declared by another
// service is refused (an *ItemError wrapping a *ValidationError of field
// Key), as are an item without a key, two items with one key under one
// owner, and every item Create would refuse. When it returns an error
// nothing was written.
//
// An operator may still pause, resume, trigger or backfill a declared
// schedule; an Update of its spec lasts until the next Declare puts the
// code's spec back, and a deleted one is created again by the next
// Declare. The code is the source of a declared schedule's spec.
func (c *Client) Declare(ctx context.Context, decl *Declaration) (*DeclareResult, error) {
	var res *DeclareResult
	err := pgx.BeginFunc(ctx, c.rt.Pool(), func(tx pgx.Tx) error {
		var err error
		res, err = c.DeclareTx(ctx, tx, decl)
		return err
	})
	if err != nil {
		return nil, err
	}
	c.logDeclared(ctx, res)
	return res, nil
}

// DeclareTx is like Declare, within tx; the caller commits or rolls back,
// and must roll back when it returns an error (an item refused only once
// others were written, a database error). It logs nothing: log the result
// (its String) once tx commits. tx holds the service's declaration lock
// until it ends.
func (c *Client) DeclareTx(ctx context.Context, tx pgx.Tx, decl *Declaration) (*DeclareResult, error) {
	if err := checkDeclaration(decl); err != nil {
		return nil, err
	}
	res := &DeclareResult{Service: decl.Service, Version: decl.Version, Decisions: []Decision{}}
	applied, err := c.q.LockDeclarationTx(ctx, tx, decl.Service)
	if err != nil {
		return nil, fmt.Errorf("schedule: lock the declaration of service %s: %w", decl.Service, err)
	}
	res.AppliedVersion = applied
	if applied > decl.Version {
		res.Superseded = true
		return res, nil
	}

	owners, keys := make([]string, len(decl.Schedules)), make([]string, len(decl.Schedules))
	for i, p := range decl.Schedules {
		owners[i], keys[i] = p.Owner, p.Key
	}
	// A plain read: the service's lock keeps its declared rows from other
	// declarations, and the writes below lock each row they change (an
	// operator's concurrent Update of one is overwritten: the code wins).
	rows, err := c.q.DeclaredSchedules(ctx, tx, decl.Service, owners, keys)
	if err != nil {
		return nil, fmt.Errorf("schedule: read the schedules of service %s: %w", decl.Service, err)
	}
	stored := make(map[[2]string]*engine.Schedule, len(rows))
	for i := range rows {
		if rows[i].Key != "" {
			stored[[2]string{rows[i].Owner, rows[i].Key}] = &rows[i]
		}
	}

	// Check every item against what is stored before writing anything.
	now := c.now()
	cal, err := c.paramsCalendars(ctx, tx, decl.Schedules)
	if err != nil {
		return nil, err
	}
	type change struct {
		i      int
		row    *engine.Schedule
		diffs  []FieldDiff
		update *UpdateParams
	}
	var creates []*Params
	var createAt []int
	var changes []change
	declared := make(map[uuid.UUID]bool, len(decl.Schedules))
	for i, p := range decl.Schedules {
		row := stored[[2]string{p.Owner, p.Key}]
		if row == nil {
			creates, createAt = append(creates, p), append(createAt, i)
			continue
		}
		if row.DeclaredBy != decl.Service {
			taken, _ := scheduleOf(row, nil)
			return nil, itemError(i, p, takenKey(decl.Service, taken))
		}
		declared[row.ID] = true
		v, err := c.validateAt(p, now, c.specs.parse, cal)
		if err != nil {
			return nil, itemError(i, p, err)
		}
		given := insertParams(row.ID, p, v, nil)
		ch := change{i: i, row: row, diffs: specDiff(row, &given)}
		if len(ch.diffs) > 0 {
			ch.update = declaredUpdate(p, v)
		}
		changes = append(changes, ch)
	}

	decisions := make([]Decision, len(decl.Schedules))
	if len(creates) > 0 {
		made, err := c.createManyTx(ctx, tx, creates, decl.Service)
		if err != nil {
			return nil, reindex(err, createAt)
		}
		for n, s := range made {
			if s.Existing {
				// Made by Create, by a racing transaction, since the read.
				return nil, itemError(createAt[n], creates[n], takenKey(decl.Service, s))
			}
			decisions[createAt[n]] = Decision{Action: DeclareCreated, Schedule: s}
		}
	}
	var redeclared []uuid.UUID
	for _, ch := range changes {
		d := Decision{Action: DeclareUnchanged, Changes: ch.diffs}
		var s *Schedule
		if ch.update != nil {
			d.Action = DeclareUpdated
			if s, err = c.UpdateTx(ctx, tx, ByID(ch.row.ID), ch.update); err != nil {
				return nil, itemError(ch.i, decl.Schedules[ch.i], err)
			}
		}
		if ch.row.UndeclaredAt != nil {
			redeclared = append(redeclared, ch.row.ID)
			if pausedByDeclaration(ch.row) {
				d.Action = DeclareResumed
				if s, err = c.ResumeTx(ctx, tx, ByID(ch.row.ID), nil); err != nil {
					return nil, itemError(ch.i, decl.Schedules[ch.i], err)
				}
			}
		}
		if s == nil {
			s, _ = scheduleOf(ch.row, nil)
		}
		s.UndeclaredAt = nil
		d.Schedule = s
		decisions[ch.i] = d
	}
	if len(redeclared) > 0 {
		if err := c.q.RedeclareSchedulesTx(ctx, tx, redeclared, c.sqlNow()); err != nil {
			return nil, fmt.Errorf("schedule: mark %d schedules declared again: %w", len(redeclared), err)
		}
	}
	res.Decisions = decisions

	undeclared, err := c.undeclareTx(ctx, tx, decl, rows, declared)
	if err != nil {
		return nil, err
	}
	res.Decisions = append(res.Decisions, undeclared...)
	if err := c.q.SetDeclarationTx(ctx, tx, decl.Service, decl.Version, len(decl.Schedules), c.sqlNow()); err != nil {
		return nil, fmt.Errorf("schedule: record the declaration of service %s: %w", decl.Service, err)
	}
	res.AppliedVersion = decl.Version
	return res, nil
}

// undeclareTx pauses or deletes, by decl.Undeclared, the schedules of rows
// that decl.Service declared and decl no longer declares (declared holds
// the ids it does); one paused already as undeclared is left alone.
func (c *Client) undeclareTx(ctx context.Context, tx pgx.Tx, decl *Declaration, rows []engine.Schedule, declared map[uuid.UUID]bool) ([]Decision, error) {
	var out []Decision
	var pause []uuid.UUID
	note := fmt.Sprintf("no longer declared by service %s (version %d)", decl.Service, decl.Version)
	for i := range rows {
		row := &rows[i]
		if row.DeclaredBy != decl.Service || declared[row.ID] {
			continue
		}
		s, _ := scheduleOf(row, nil)
		switch {
		case decl.Undeclared == UndeclaredDelete:
			if err := c.delete(ctx, tx, ByID(row.ID)); err != nil {
				return nil, fmt.Errorf("schedule: delete undeclared %s: %w", row.Key, err)
			}
			out = append(out, Decision{Action: DeclareDeleted, Schedule: s})
		case row.UndeclaredAt == nil:
			pause = append(pause, row.ID)
			s.Paused, s.PauseNote, s.NextFireAt = true, note, nil
			out = append(out, Decision{Action: DeclarePaused, Schedule: s})
		}
	}
	if len(pause) > 0 {
		if err := c.q.UndeclareSchedulesTx(ctx, tx, pause, note, c.sqlNow()); err != nil {
			return nil, fmt.Errorf("schedule: pause %d undeclared schedules: %w", len(pause), err)
		}
	}
	return out, nil
}

// pausedByDeclaration reports whether row was paused by its service's
// declaration when it stopped declaring it, and not by an operator, before
// (UndeclareSchedulesTx keeps an earlier pause) or since.
func pausedByDeclaration(row *engine.Schedule) bool {
	return row.Paused && row.PausedAt != nil && row.UndeclaredAt != nil && row.PausedAt.Equal(*row.UndeclaredAt)
}

// declaredUpdate is the UpdateParams that give a schedule every field of
// p (validated as v), for a declaration: all of them but Paused, PauseNote,
// Owner and Key.
func declaredUpdate(p *Params, v *validated) *UpdateParams {
	grant := uuid.Nil
	if p.GrantID != nil {
		grant = *p.GrantID
	}
	window := v.catchUp
	if window == 0 {
		window = -1 // a stored 0 is no window; 0 here is the default
	}
	return &UpdateParams{
		Name: &p.Name, Description: &p.Description, Workflow: &p.Workflow, Input: json.RawMessage(v.input),
		Cron: &p.Cron, RRule: &p.RRule, TimeZone: &p.TimeZone, StartAt: &p.StartAt, EndAt: &p.EndAt, Overlap: &v.overlap,
		CatchUpWindow: &window, CatchUp: &v.catchUpPolicy, MaxAttempts: &p.MaxAttempts, Priority: &p.Priority,
		Queue: &p.Queue, Timeout: &p.Timeout, GrantID: &grant, KeepRuns: &p.KeepRuns, Tenant: &p.Tenant,
		DSTGap: &v.spec.dst.Gap, DSTFold: &v.spec.dst.Fold, Calendars: &v.calendars, OnExcluded: &v.onExcluded,
		Retry: orZeroRetry(p.Retry),
	}
}

// takenKey is the *ValidationError of a declared key whose owner has it on
// schedule s, which service did not declare.
func takenKey(service string, s *Schedule) error {
	return &ValidationError{Field: "Key", Problem: fmt.Sprintf(
		"%s is schedule %s, %s; a declaration never takes over a schedule service %s did not declare: delete that one (tributary schedule delete %s), or declare another key",
		ByKey(s.Owner, s.Key), s.ID, s.Origin(), service, keyArgs(s.Owner, s.Key))}
}

// keyArgs are the CLI's arguments naming owner's key.
func keyArgs(owner, key string) string {
	if owner == "" {
		return key
	}
	return key + " --owner " + owner
}

// reindex maps the index of createManyTx's *ItemError, an index into the
// items it was given, back to Declaration.Schedules by at.
func reindex(err error, at []int) error {
	if ie, ok := err.(*ItemError); ok {
		return &ItemError{Index: at[ie.Index], Name: ie.Name, Err: ie.Err}
	}
	return err
}

// checkDeclaration refuses, before anything is read, a declaration
// without a service, with a bad version or policy, an item without a key
// or with another item's key, or more items than MaxCreateMany.
func checkDeclaration(decl *Declaration) error {
	switch {
	case decl == nil:
		return &ValidationError{Field: "Declaration", Problem: "is nil"}
	case strings.TrimSpace(decl.Service) == "":
		return &ValidationError{Field: "Service", Problem: "is empty; name the service that declares these schedules, such as \"billing\""}
	case len(decl.Service) > 200:
		return &ValidationError{Field: "Service", Problem: fmt.Sprintf("is %d bytes, the limit is 200", len(decl.Service))}
	case decl.Version < 0:
		return &ValidationError{Field: "Version", Problem: fmt.Sprintf("is %d; use 0 or more, larger for each deploy", decl.Version)}
	case len(decl.Schedules) > MaxCreateMany:
		return &ValidationError{Field: "Schedules", Problem: fmt.Sprintf("holds %d schedules, the limit is MaxCreateMany (%d)", len(decl.Schedules), MaxCreateMany)}
	}
	switch decl.Undeclared {
	case "", UndeclaredPause, UndeclaredDelete:
	default:
		return &ValidationError{Field: "Undeclared", Problem: fmt.Sprintf("%q is not a policy; use pause or delete", decl.Undeclared)}
	}
	keys := make(map[[2]string]int, len(decl.Schedules))
	for i, p := range decl.Schedules {
		var err error
		switch {
		case p == nil:
			err = &ValidationError{Field: "Params", Problem: "is nil"}
		case p.Key == "":
			err = &ValidationError{Field: "Key", Problem: "is empty; a declared schedule needs a key, its name from one deploy to the next"}
		case p.CreatedBy != "":
			err = &ValidationError{Field: "CreatedBy", Problem: fmt.Sprintf("is %q; a declared schedule says which service declared it instead, leave CreatedBy empty", p.CreatedBy)}
		case p.RequireWorker:
			err = &ValidationError{Field: "RequireWorker", Problem: "is not supported by Declare: a service declares its schedules before its workers are live; `schedule get` and the dashboard flag a type no live client serves"}
		}
		if err == nil {
			err = checkKey("Key", p.Key)
		}
		if err == nil {
			if j, ok := keys[[2]string{p.Owner, p.Key}]; ok {
				err = &ValidationError{Field: "Key", Problem: fmt.Sprintf("%q is the key of Schedules[%d] too, under the same owner %q; keys are unique per owner", p.Key, j, p.Owner)}
			}
			keys[[2]string{p.Owner, p.Key}] = i
		}
		if err != nil {
			return itemError(i, p, err)
		}
	}
	return nil
}

// logDeclared logs what a committed declaration did: one line, at Info, or
// at Warn when a newer one was in place.
func (c *Client) logDeclared(ctx context.Context, res *DeclareResult) {
	attrs := []slog.Attr{slog.String("service", res.Service), slog.Int64("version", res.Version)}
	if res.Superseded {
		c.logger.LogAttrs(ctx, slog.LevelWarn, "tributary: Declared schedules "+res.String(),
			append(attrs, slog.Int64("applied_version", res.AppliedVersion))...)
		return
	}
	c.logger.LogAttrs(ctx, slog.LevelInfo, "tributary: Declared schedules: "+res.String(), attrs...)
}
