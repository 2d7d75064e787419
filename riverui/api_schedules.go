package riverui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/wfruntime"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// scheduleBody is the JSON body of POST /api/schedules and PATCH
// /api/schedules/{id}: the writable fields of a schedule, as GET answers
// them. A PATCH changes the fields it names that differ from the schedule.
type scheduleBody struct {
	Name, Description, Owner, Key, Tenant, Workflow, Cron, RRule, TimeZone, Queue, PauseNote opt[string]

	Input          opt[json.RawMessage]
	StartAt, EndAt opt[time.Time]
	Overlap        opt[schedule.OverlapPolicy]
	CatchUp        opt[schedule.CatchUpPolicy]
	DSTGap         opt[schedule.DSTGap]
	DSTFold        opt[schedule.DSTFold]
	Calendars      opt[[]string]
	OnExcluded     opt[schedule.OnExcluded]
	CatchUpWindow  opt[wire.Duration]
	Timeout        opt[wire.Duration]
	MaxAttempts    opt[int]
	KeepRuns       opt[int]
	Priority       opt[int]
	Paused         opt[bool]
	GrantID        opt[uuid.UUID]
	RequireWorker  opt[bool]
	Retry          opt[retryBody]
}

// scheduleReadOnly are the fields of a schedule that only the server sets.
var scheduleReadOnly = []string{
	"id", "run_tenant", "declared_by", "undeclared_at", "created_by", "origin", "paused_at", "next_fire_at", "last_fire_at",
	"run_count", "failure_count", "last_run_status", "created_at", "updated_at", "next_fire_times", "worker_live", "existing",
}

// spec describes the body; patch says it is a PATCH's, which takes the
// read-only fields and ignores them.
func (b *scheduleBody) spec(patch bool) *bodySpec {
	members := []member{
		{name: "name", dst: &b.Name}, {name: "description", dst: &b.Description}, {name: "owner", dst: &b.Owner},
		{name: "key", dst: &b.Key}, {name: "tenant", dst: &b.Tenant}, {name: "workflow", dst: &b.Workflow}, {name: "input", dst: &b.Input, nullable: true},
		{name: "cron", dst: &b.Cron}, {name: "rrule", dst: &b.RRule}, {name: "time_zone", dst: &b.TimeZone},
		{name: "start_at", dst: &b.StartAt, nullable: true}, {name: "end_at", dst: &b.EndAt, nullable: true},
		{name: "overlap", dst: &b.Overlap}, {name: "catch_up_window", dst: &b.CatchUpWindow},
		{name: "catch_up", dst: &b.CatchUp}, {name: "dst_gap", dst: &b.DSTGap}, {name: "dst_fold", dst: &b.DSTFold},
		{name: "calendars", dst: &b.Calendars}, {name: "on_excluded", dst: &b.OnExcluded},
		{name: "max_attempts", dst: &b.MaxAttempts}, {name: "keep_runs", dst: &b.KeepRuns},
		{name: "priority", dst: &b.Priority}, {name: "queue", dst: &b.Queue}, {name: "timeout", dst: &b.Timeout},
		{name: "paused", dst: &b.Paused}, {name: "pause_note", dst: &b.PauseNote},
		{name: "grant_id", dst: &b.GrantID, nullable: true}, {name: "retry", dst: &b.Retry, nullable: true},
	}
	if !patch {
		// Not stored: it applies to the create only.
		members = append(members, member{name: "require_worker", dst: &b.RequireWorker})
	}
	return &bodySpec{what: "a schedule", required: true, readOnly: scheduleReadOnly, ignoreReadOnly: patch, members: members}
}

// input is the body's input as the Go API takes it: nil when not sent,
// JSON null when sent as null.
func (b *scheduleBody) input() any {
	if !b.Input.set {
		return nil
	}
	return rawOrNull(&b.Input)
}

// window is a catch-up window as schedule.Params and UpdateParams take it:
// there, 0 is the default window (a minute) and a negative one is none.
func window(d wire.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return time.Duration(d)
}

// createSchedule answers POST /api/schedules: 201 with the schedule and its
// next fire times, and "existing": false. The body has a cron expression
// ("cron") or an RRULE ("rrule"): both, or neither, is a 400. With a key the owner has already
// (schedule.Params.Key), it writes nothing: when the schedule's spec is
// the one sent, it answers 200 with that schedule and "existing": true;
// when it differs, 409 with a KeyConflict naming the fields that differ.
// require_worker (not stored) refuses with 409 when no live client serves
// the workflow type, as schedule.Params.RequireWorker does. Fields left
// out take schedule.Params' defaults (a catch-up window of a minute,
// overlap skip, DST policy jump and first, the workflow's run policy);
// "catch_up_window": "0s" is no window; "retry" left out, null or {} is
// no retry policy (the workflow type's). The schedule records that it was
// created through the API (created_by "api").
func (h *Handler) createSchedule(w http.ResponseWriter, r *http.Request) {
	if h.sc == nil {
		h.failJSON(w, r, errNoSchedules)
		return
	}
	var b scheduleBody
	if _, err := b.spec(false).read(r); err != nil {
		h.failJSON(w, r, err)
		return
	}
	retry := retryPolicy(&b.Retry, true)
	if err := checkRetry(retry); err != nil {
		h.failJSON(w, r, err)
		return
	}
	cron, rrule := strings.TrimSpace(b.Cron.value()), strings.TrimSpace(b.RRule.value())
	switch {
	case cron != "" && rrule != "":
		h.failJSON(w, r, bothRules(cron))
		return
	case cron == "" && rrule == "":
		h.failJSON(w, r, errNoRule)
		return
	}
	p := &schedule.Params{
		Name: b.Name.value(), Description: b.Description.value(), Owner: b.Owner.value(), Key: b.Key.value(), CreatedBy: "api",
		Workflow: b.Workflow.value(), Input: b.input(), Cron: b.Cron.value(), RRule: b.RRule.value(), TimeZone: b.TimeZone.value(), StartAt: b.StartAt.value(), EndAt: b.EndAt.value(),
		Overlap: b.Overlap.value(), CatchUp: b.CatchUp.value(), DSTGap: b.DSTGap.value(), DSTFold: b.DSTFold.value(), MaxAttempts: b.MaxAttempts.value(), Priority: b.Priority.value(),
		Queue: b.Queue.value(), Timeout: time.Duration(b.Timeout.value()), Paused: b.Paused.value(), PauseNote: b.PauseNote.value(),
		RequireWorker: b.RequireWorker.value(), KeepRuns: b.KeepRuns.value(), Tenant: b.Tenant.value(),
		Calendars: b.Calendars.value(), OnExcluded: b.OnExcluded.value(), Retry: retry,
	}
	if b.CatchUpWindow.set {
		p.CatchUpWindow = window(b.CatchUpWindow.value())
	}
	if b.GrantID.set && !b.GrantID.null {
		p.GrantID = b.GrantID.ptr()
	}
	s, err := h.sc.Create(r.Context(), p)
	if rrule != "" {
		err = rruleError(err)
	}
	var conflict *schedule.KeyConflictError
	if errors.As(err, &conflict) {
		writeJSON(w, http.StatusConflict, h.keyConflictWire(conflict))
		return
	}
	var out *wire.Schedule
	if err == nil {
		out, err = h.scheduleAnswer(r.Context(), schedule.ByID(s.ID))
	}
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	status := http.StatusCreated
	if s.Existing {
		status = http.StatusOK
	}
	out.Existing = &s.Existing
	writeJSON(w, status, out)
}

// updateSchedule answers PATCH /api/schedules/{id}: it changes the fields
// the body names whose value differs from the schedule's, in one
// transaction with the schedule locked, and writes nothing when none does.
// A GET's body sent back as it is therefore changes nothing: its read-only
// fields are ignored (its id must be the schedule's), its key, paused and
// pause_note must be the schedule's (a key never changes; pause and resume
// have their routes), and an unchanged start or end does not re-time the
// pending slot. The owner of a keyed schedule does not change either
// (schedule.UpdateParams). A new "rrule" replaces the cron expression, and
// a new "cron" the RRULE. "retry": null (or {}) removes the retry policy.
func (h *Handler) updateSchedule(r *http.Request, ref schedule.Ref) error {
	var b scheduleBody
	ignored, err := b.spec(true).read(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	return pgx.BeginFunc(ctx, wfruntime.Of(h.wf).Pool(), func(tx pgx.Tx) error {
		s, err := h.sc.UpdateTx(ctx, tx, ref, nil) // locks the schedule
		if err != nil {
			return err
		}
		if raw, ok := ignored["id"]; ok {
			var sent uuid.UUID
			if json.Unmarshal(raw, &sent) != nil || sent != s.ID {
				return badField("id", "%s is not the id of the schedule the path names (%s); send a schedule's body to its own URL, or leave id out", clip(raw), s.ID)
			}
		}
		p, changed, err := b.changes(s)
		if err != nil || !changed {
			return err
		}
		_, err = h.sc.UpdateTx(ctx, tx, schedule.ByID(s.ID), p)
		if _, rrule := ruleAfter(s, p); rrule != "" {
			err = rruleError(err)
		}
		return err
	})
}

// changes returns the update of the body's fields that differ from s, and
// whether there is any.
func (b *scheduleBody) changes(s *schedule.Schedule) (*schedule.UpdateParams, bool, error) {
	switch {
	case b.Key.set && b.Key.value() != s.Key && s.Key == "":
		return nil, false, badField("key", "this schedule has no key, and a key is given only when a schedule is created; create a schedule with the key, then delete this one")
	case b.Key.set && b.Key.value() != s.Key:
		return nil, false, badField("key", "a schedule's key never changes (it is %q): with its owner, it names the schedule; create a schedule with the new key, then delete this one", s.Key)
	case b.Paused.set && b.Paused.value() != s.Paused:
		return nil, false, badField("paused", "pause and resume with POST /api/schedules/{id}/pause and /resume (the schedule is %s)", map[bool]string{true: "paused", false: "not paused"}[s.Paused])
	case b.PauseNote.set && b.PauseNote.value() != s.PauseNote:
		return nil, false, badField("pause_note", "the note is set by POST /api/schedules/{id}/pause {\"note\": …}")
	}
	p := &schedule.UpdateParams{}
	changed := false
	str := func(dst **string, o *opt[string], stored string) {
		if o.set && o.value() != stored {
			v := o.value()
			*dst, changed = &v, true
		}
	}
	str(&p.Name, &b.Name, s.Name)
	str(&p.Description, &b.Description, s.Description)
	str(&p.Owner, &b.Owner, s.Owner)
	str(&p.Tenant, &b.Tenant, s.Tenant)
	str(&p.Workflow, &b.Workflow, s.Workflow)
	str(&p.Cron, &b.Cron, s.Cron)
	str(&p.RRule, &b.RRule, s.RRule)
	switch cron, rrule := ruleAfter(s, p); {
	case p.Cron != nil && p.RRule != nil && cron != "" && rrule != "":
		return nil, false, bothRules(cron)
	case cron == "" && rrule == "":
		field := "cron"
		if p.RRule != nil {
			field = "rrule"
		}
		return nil, false, badField(field, "is \"\", which would leave the schedule without a rule; send cron, a cron expression such as \"0 9 * * 1-5\", or rrule, an RFC 5545 recurrence rule such as %q", rruleExample)
	}
	str(&p.TimeZone, &b.TimeZone, s.TimeZone)
	str(&p.Queue, &b.Queue, s.Queue)
	if b.Overlap.set && b.Overlap.value() != s.Overlap {
		p.Overlap, changed = b.Overlap.ptr(), true
	}
	if b.CatchUp.set && b.CatchUp.value() != s.CatchUp {
		p.CatchUp, changed = b.CatchUp.ptr(), true
	}
	if b.DSTGap.set && b.DSTGap.value() != s.DSTGap {
		p.DSTGap, changed = b.DSTGap.ptr(), true
	}
	if b.DSTFold.set && b.DSTFold.value() != s.DSTFold {
		p.DSTFold, changed = b.DSTFold.ptr(), true
	}
	if b.Calendars.set && !slices.Equal(b.Calendars.value(), s.Calendars) && (len(b.Calendars.value()) > 0 || len(s.Calendars) > 0) {
		v := b.Calendars.value()
		if v == nil {
			v = []string{}
		}
		p.Calendars, changed = &v, true
	}
	if b.OnExcluded.set && b.OnExcluded.value() != s.OnExcluded {
		p.OnExcluded, changed = b.OnExcluded.ptr(), true
	}
	if b.CatchUpWindow.set && time.Duration(b.CatchUpWindow.value()) != s.CatchUpWindow {
		v := window(b.CatchUpWindow.value())
		p.CatchUpWindow, changed = &v, true
	}
	if b.Timeout.set && time.Duration(b.Timeout.value()) != s.Timeout {
		v := time.Duration(b.Timeout.value())
		p.Timeout, changed = &v, true
	}
	if b.MaxAttempts.set && b.MaxAttempts.value() != s.MaxAttempts {
		p.MaxAttempts, changed = b.MaxAttempts.ptr(), true
	}
	if b.KeepRuns.set && b.KeepRuns.value() != s.KeepRuns {
		p.KeepRuns, changed = b.KeepRuns.ptr(), true
	}
	if b.Priority.set && b.Priority.value() != s.Priority {
		p.Priority, changed = b.Priority.ptr(), true
	}
	// A null time is none, which UpdateParams spells as the zero time.
	for _, t := range []struct {
		o      *opt[time.Time]
		stored *time.Time
		dst    **time.Time
	}{{&b.StartAt, s.StartAt, &p.StartAt}, {&b.EndAt, s.EndAt, &p.EndAt}} {
		if !t.o.set {
			continue
		}
		var stored time.Time
		if t.stored != nil {
			stored = *t.stored
		}
		if !t.o.value().Equal(stored) {
			*t.dst, changed = t.o.ptr(), true
		}
	}
	if b.GrantID.set {
		var stored uuid.UUID
		if s.GrantID != nil {
			stored = *s.GrantID
		}
		if b.GrantID.value() != stored { // null is uuid.Nil: no grant
			p.GrantID, changed = b.GrantID.ptr(), true
		}
	}
	if b.Retry.set {
		retry := retryPolicy(&b.Retry, true)
		if err := checkRetry(retry); err != nil {
			return nil, false, err
		}
		if !sameRetry(retry, s.Retry) {
			if retry == nil {
				retry = &workflow.RetryPolicy{} // removes it
			}
			p.Retry, changed = retry, true
		}
	}
	if b.Input.set {
		in, _ := b.input().(json.RawMessage)
		if !sameJSON(in, s.Input) {
			p.Input, changed = in, true
		}
	}
	return p, changed, nil
}

// ruleAfter is the cron expression and the RRULE s has after the update
// p, as schedule.Client.Update applies it: a new rule of either kind
// replaces the other.
func ruleAfter(s *schedule.Schedule, p *schedule.UpdateParams) (cron, rrule string) {
	cron, rrule = s.Cron, s.RRule
	switch {
	case p.Cron != nil && p.RRule != nil:
		cron, rrule = *p.Cron, *p.RRule
	case p.Cron != nil && *p.Cron != "":
		cron, rrule = *p.Cron, ""
	case p.Cron != nil:
		cron = ""
	case p.RRule != nil && *p.RRule != "":
		cron, rrule = "", *p.RRule
	case p.RRule != nil:
		rrule = ""
	}
	return strings.TrimSpace(cron), strings.TrimSpace(rrule)
}

// sameJSON reports whether a and b encode the same JSON value (jsonb
// stores an input with its keys reordered and its spaces changed).
func sameJSON(a, b json.RawMessage) bool {
	decode := func(raw json.RawMessage) (any, bool) {
		if len(raw) == 0 {
			raw = json.RawMessage("null")
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		return v, dec.Decode(&v) == nil
	}
	va, okA := decode(a)
	vb, okB := decode(b)
	return okA && okB && reflect.DeepEqual(va, vb)
}

// writeSchedule answers the schedule with its next fire times.
func (h *Handler) writeSchedule(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
	out, err := h.scheduleAnswer(r.Context(), ref)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// scheduleAnswer is the answer about one schedule: the schedule with its
// next fire times and whether a live client serves its workflow type.
func (h *Handler) scheduleAnswer(ctx context.Context, ref schedule.Ref) (*wire.Schedule, error) {
	s, err := h.sc.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	return wire.ScheduleAnswer(ctx, h.sc, h.wf, s)
}

func (h *Handler) deleteSchedule(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
	if err := h.sc.Delete(r.Context(), ref); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// pauseBody, resumeBody, triggerBody and backfillBody are the bodies of
// POST /api/schedules/{id}/pause, …/resume, …/trigger and …/backfill.
type (
	pauseBody   struct{ Note opt[string] }
	resumeBody  struct{ Missed opt[schedule.MissedPolicy] }
	triggerBody struct {
		Input   opt[json.RawMessage]
		Overlap opt[schedule.OverlapPolicy]
	}
	backfillBody struct {
		From, To     opt[time.Time]
		Input        opt[json.RawMessage]
		Overlap      opt[schedule.OverlapPolicy]
		RerunSkipped opt[bool]
	}
)

func (b *pauseBody) spec() *bodySpec {
	return &bodySpec{what: "a pause", members: []member{{name: "note", dst: &b.Note}}}
}

func (b *resumeBody) spec() *bodySpec {
	return &bodySpec{what: "a resume", members: []member{{name: "missed", dst: &b.Missed}}}
}

func (b *triggerBody) spec() *bodySpec {
	return &bodySpec{what: "a trigger", members: []member{
		{name: "input", dst: &b.Input, nullable: true}, {name: "overlap", dst: &b.Overlap},
	}}
}

func (b *backfillBody) spec() *bodySpec {
	return &bodySpec{what: "a backfill", required: true, members: []member{
		{name: "from", dst: &b.From}, {name: "to", dst: &b.To}, {name: "input", dst: &b.Input, nullable: true},
		{name: "overlap", dst: &b.Overlap}, {name: "rerun_skipped", dst: &b.RerunSkipped},
	}}
}

// rawOrNull is a JSON field's value for the Go API: JSON null when sent as
// null.
func rawOrNull(o *opt[json.RawMessage]) json.RawMessage {
	if o.null {
		return json.RawMessage("null")
	}
	return o.value()
}

// pauseJSON pauses with the note of an optional {"note": …} body.
func (h *Handler) pauseJSON(r *http.Request, ref schedule.Ref) error {
	var b pauseBody
	if _, err := b.spec().read(r); err != nil {
		return err
	}
	_, err := h.sc.Pause(r.Context(), ref, b.Note.value())
	return err
}

// resumeJSON resumes with the policy of an optional {"missed": …} body.
func (h *Handler) resumeJSON(r *http.Request, ref schedule.Ref) error {
	var b resumeBody
	if _, err := b.spec().read(r); err != nil {
		return err
	}
	_, err := h.sc.Resume(r.Context(), ref, &schedule.ResumeOpts{Missed: b.Missed.value()})
	return err
}

// triggerSchedule starts a run now with the optional {"input": …,
// "overlap": …} overrides, and answers {"run_id": …}.
func (h *Handler) triggerSchedule(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
	var b triggerBody
	if _, err := b.spec().read(r); err != nil {
		return err
	}
	opts := &schedule.TriggerOpts{Overlap: b.Overlap.value()}
	if b.Input.set {
		opts.Input = rawOrNull(&b.Input)
	}
	runID, err := h.sc.Trigger(r.Context(), ref, opts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.Triggered{RunID: runID})
	return nil
}

// backfillSchedule answers POST /api/schedules/{id}/backfill with
// {"from": …, "to": …, "input": …, "overlap": …, "rerun_skipped": …}: the
// slots in [from, to) that have not run, in one transaction; the answer is
// the schedule.BackfillResult with the schedule's id and the range,
// {"schedule_id", "from", "to", "slots", "started", "queued", "existing",
// "rerun", "skipped": {reason: n}}.
func (h *Handler) backfillSchedule(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
	var b backfillBody
	if _, err := b.spec().read(r); err != nil {
		return err
	}
	for _, end := range []struct {
		name string
		o    *opt[time.Time]
	}{{"from", &b.From}, {"to", &b.To}} {
		if !end.o.set {
			return badField(end.name, `is missing; send "from" and "to" as RFC 3339 times, e.g. {"from": "2026-11-01T00:00:00Z", "to": "2026-11-02T00:00:00Z"}`)
		}
	}
	opts := &schedule.BackfillOpts{Overlap: b.Overlap.value(), RerunSkipped: b.RerunSkipped.value()}
	if b.Input.set {
		opts.Input = rawOrNull(&b.Input)
	}
	id := ref.ID
	if id == uuid.Nil { // named by its key: the answer names it by its id
		s, err := h.sc.Get(r.Context(), ref)
		if err != nil {
			return err
		}
		id = s.ID
	}
	res, err := h.sc.Backfill(r.Context(), schedule.ByID(id), b.From.value(), b.To.value(), opts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.NewBackfill(id, b.From.value(), b.To.value(), res))
	return nil
}
