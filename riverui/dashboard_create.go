package riverui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
)

// The new schedule form, GET and POST /schedules/new, creates a schedule
// with schedule.Client.Create, the call behind POST /api/schedules, so it
// refuses what the API refuses with the same message. A refused form is
// shown again as typed, with the error above it and beside the field it
// is about, and nothing is written; a created schedule's page opens. With
// a key its owner has already, it creates nothing: the schedule with the
// key opens when its spec is the form's, and the form is refused, linking
// it, when the spec differs.

// newView is the page that creates a schedule.
type newView struct {
	chrome
	scheduleFormView
	// Conflict is the path of the schedule whose key the form gave, when
	// its spec differs from the form's.
	Conflict string
}

// newFields are the new form's fields before anything is typed: the
// defaults of schedule.Params.
func newFields() scheduleFields {
	return scheduleFields{
		Overlap: string(schedule.OverlapSkip), CatchUp: string(schedule.CatchUpWindow),
		DSTGap: string(schedule.DSTGapJump), DSTFold: string(schedule.DSTFoldFirst),
		CalendarsPosted: true, OnExcluded: string(schedule.ExcludedSkip), Retry: retryFields{Posted: true},
	}
}

func (h *Handler) newSchedulePage(w http.ResponseWriter, r *http.Request) {
	if h.sc == nil {
		h.failPage(w, r, errNoSchedules)
		return
	}
	h.showNew(w, r, http.StatusOK, "", newFields(), nil, "")
}

// showNew renders the new form with fields, and errMsg above it and
// fieldErrs beside the fields; conflict links the schedule that has the
// form's key.
func (h *Handler) showNew(w http.ResponseWriter, r *http.Request, status int, errMsg string, f scheduleFields, fieldErrs map[string]string, conflict string) {
	names, err := h.calendarNames(r.Context())
	if err != nil {
		h.failPage(w, r, err)
		return
	}
	zone := "UTC"
	if f.TimeZone != "" {
		zone = f.TimeZone
		if _, err := schedule.LoadZone(f.TimeZone); err != nil {
			zone = "the time zone above"
		}
	}
	v := &newView{
		chrome: h.chrome(r, "New schedule", "schedules"),
		scheduleFormView: scheduleFormView{
			New: true, Zone: zone, Form: f, Overlaps: overlapPolicies, CatchUps: catchUpPolicies, DSTGaps: dstGaps, DSTFolds: dstFolds,
			CalendarNames: names, OnExcludeds: onExcludedPolicies, Types: h.wf.Types(), FieldErrors: fieldErrs,
		},
		Conflict: conflict,
	}
	v.Error = errMsg
	h.render(w, r, status, newScheduleTemplate, v)
}

// createForm creates the schedule of the new form and opens its page, or
// the page of the schedule that has the form's key and spec. The schedule
// records that it was created in the dashboard (CreatedBy "dashboard").
func (h *Handler) createForm(w http.ResponseWriter, r *http.Request) {
	if h.sc == nil {
		h.failPage(w, r, errNoSchedules)
		return
	}
	if err := parseForm(r); err != nil {
		h.failPage(w, r, err)
		return
	}
	f := postedFields(r)
	p, err := createParams(f)
	if err == nil {
		var s *schedule.Schedule
		s, err = h.sc.Create(r.Context(), p)
		if p.RRule != "" {
			err = rruleError(err)
		}
		if err == nil {
			notice := "created"
			if s.Existing {
				notice = "existing"
			}
			h.seeOther(w, r, refPath(refOf(s), ""), notice, nil)
			return
		}
	}
	conflictPath := ""
	var conflict *schedule.KeyConflictError
	if errors.As(err, &conflict) {
		conflictPath = h.prefix + refPath(refOf(&schedule.Schedule{ID: conflict.ID, Owner: conflict.Owner, Key: conflict.Key}), "")
		err = inField("key", &apiError{status: http.StatusConflict, msg: conflictMessage(conflict)})
	}
	status, msg := h.statusOf(err)
	field := fieldOf(err)
	h.showNew(w, r, status, msg, f, map[string]string{field: msg}, conflictPath)
}

// conflictMessage says, for the new form, that its key names a schedule
// with another spec, and what to do.
func conflictMessage(e *schedule.KeyConflictError) string {
	rule := ruleDiffs(e.Diffs)
	diffs := make([]string, len(rule))
	for i, d := range rule {
		diffs[i] = d.String()
	}
	todo := "Edit that schedule, or give this one another key."
	if e.DeclaredBy != "" {
		todo = fmt.Sprintf("Service %s declares that schedule in its code: change it there (an edit lasts only until its next declaration), or give this one another key.", e.DeclaredBy)
	}
	return fmt.Sprintf("Owner %q has a schedule with the key %q already, whose spec differs from this form's (stored → given): %s. Nothing was created. %s",
		e.Owner, e.Key, strings.Join(diffs, "; "), todo)
}

// createParams reads the new form's fields into the parameters of
// schedule.Client.Create. The start and end are wall times in the form's
// time zone (or RFC 3339 times); an unknown zone is left for Create to
// refuse. Empty fields are the defaults the form's labels name.
func createParams(f scheduleFields) (*schedule.Params, error) {
	cron, rrule, err := f.rule()
	if err != nil {
		return nil, err
	}
	p := &schedule.Params{
		Name: f.Name, Description: f.Description, Owner: f.Owner, Key: f.Key, Tenant: f.Tenant, CreatedBy: "dashboard",
		Workflow: f.Workflow, Cron: cron, RRule: rrule, TimeZone: f.TimeZone,
		Overlap: schedule.OverlapPolicy(f.Overlap), CatchUp: schedule.CatchUpPolicy(f.CatchUp), Queue: f.Queue,
		DSTGap: schedule.DSTGap(f.DSTGap), DSTFold: schedule.DSTFold(f.DSTFold),
		Calendars: f.Calendars, OnExcluded: schedule.OnExcluded(f.OnExcluded),
		Paused: f.Paused, PauseNote: f.PauseNote,
	}
	if p.Retry, err = f.Retry.policy(); err != nil {
		return nil, err
	}
	if f.CatchUpWindow != "" {
		window, err := formDuration("catch-up window", f.CatchUpWindow, "0s for none, or empty for the default (1m)")
		if err != nil {
			return nil, inField("catch_up_window", err)
		}
		if p.CatchUpWindow = window; window == 0 {
			p.CatchUpWindow = -1 // none; 0 is the default in Params
		}
	}
	if f.Timeout != "" {
		timeout, err := formDuration("timeout", f.Timeout, "empty for the workflow's default")
		if err != nil {
			return nil, inField("timeout", err)
		}
		p.Timeout = timeout
	}
	for _, field := range []struct {
		name, form string
		text       string
		dst        *int
		empty      string
	}{
		{"max_attempts", f.MaxAttempts, "max attempts", &p.MaxAttempts, "the workflow's default"},
		{"priority", f.Priority, "priority", &p.Priority, "the workflow's default"},
		{"keep_runs", f.KeepRuns, "runs to keep", &p.KeepRuns, "the run retention for all"},
	} {
		if field.form == "" {
			continue
		}
		n, err := strconv.Atoi(field.form)
		if err != nil {
			return nil, inField(field.name, badRequest("%s %q is not a whole number; leave it empty for %s", field.text, field.form, field.empty))
		}
		*field.dst = n
	}
	loc, zoneErr := schedule.LoadZone(f.TimeZone)
	for _, field := range []struct {
		name, form, text string
		dst              *time.Time
	}{
		{"start_at", f.StartAt, "start", &p.StartAt},
		{"end_at", f.EndAt, "end", &p.EndAt},
	} {
		if field.form == "" || zoneErr != nil {
			continue
		}
		at, err := formTime(field.text, field.form, loc)
		if err != nil {
			return nil, inField(field.name, err)
		}
		*field.dst = at
	}
	if f.Input != "" {
		if !json.Valid([]byte(f.Input)) {
			return nil, inField("input", badRequest("the input is not valid JSON; leave it empty for none or write a JSON value such as {\"user\": \"ada\"}"))
		}
		p.Input = json.RawMessage(f.Input)
	}
	if f.GrantID != "" {
		id, err := parseGrantID(f.GrantID)
		if err != nil {
			return nil, inField("grant_id", err)
		}
		p.GrantID = &id
	}
	return p, nil
}

// parseGrantID reads a form's grant id.
func parseGrantID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, badRequest("grant %q is not an id; ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e, or leave it empty for none", s)
	}
	return id, nil
}

// fieldError is an error about one field of a form, named as the form
// names it.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// inField marks err as the error of the form's field.
func inField(field string, err error) error { return &fieldError{field: field, err: err} }

// paramFields are the form names of the fields of schedule.Params and
// UpdateParams, as a schedule.ValidationError names them.
var paramFields = map[string]string{
	"Name": "name", "Description": "description", "Owner": "owner", "Key": "key", "Tenant": "tenant", "Workflow": "workflow", "Input": "input",
	"Cron": "cron", "RRule": "rrule", "TimeZone": "time_zone", "StartAt": "start_at", "EndAt": "end_at", "Overlap": "overlap",
	"CatchUpWindow": "catch_up_window", "CatchUp": "catch_up", "DSTGap": "dst_gap", "DSTFold": "dst_fold", "Calendars": "calendars", "OnExcluded": "on_excluded", "MaxAttempts": "max_attempts", "KeepRuns": "keep_runs", "Priority": "priority",
	"Queue": "queue", "Timeout": "timeout", "GrantID": "grant_id", "PauseNote": "pause_note",
	"Retry.Delay": "retry_delay", "Retry.Base": "retry_base", "Retry.Factor": "retry_factor", "Retry.Max": "retry_max", "Retry.Jitter": "retry_jitter",
}

// fieldOf is the form name of the field err is about, or "".
func fieldOf(err error) string {
	var (
		fieldErr  *fieldError
		invalid   *schedule.ValidationError
		cronErr   *schedule.CronError
		rruleErr  *schedule.RRuleError
		neverErr  *schedule.NoOccurrenceError
		zoneErr   *schedule.ZoneError
		fieldName string
	)
	switch {
	case errors.As(err, &fieldErr):
		fieldName = fieldErr.field
	case errors.As(err, &cronErr), errors.As(err, &neverErr):
		fieldName = "cron"
	case errors.As(err, &rruleErr):
		fieldName = "rrule"
	case errors.As(err, &zoneErr):
		fieldName = "time_zone"
	case errors.As(err, &invalid):
		fieldName = paramFields[invalid.Field]
	}
	return fieldName
}

// fieldErrorKey carries the field errors of a refused edit form to
// showEdit, which scheduleForm calls with the message alone.
type fieldErrorKey struct{}

// withFieldError returns r carrying err's field error for fieldErrors.
func withFieldError(r *http.Request, err error) *http.Request {
	field := fieldOf(err)
	if field == "" {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), fieldErrorKey{}, map[string]string{field: err.Error()}))
}

// fieldErrors are the field errors withFieldError put in r, or nil.
func fieldErrors(r *http.Request) map[string]string {
	errs, _ := r.Context().Value(fieldErrorKey{}).(map[string]string)
	return errs
}
