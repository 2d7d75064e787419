package riverui

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// The edit page of a schedule has its own URL, GET and POST
// /schedules/{id}/edit, like the confirmation of a delete: its dozen fields
// would bury the schedule's page, and a submit that fails shows them again,
// as typed, under the error at the top of the page rather than below the
// run ledger.

// editView is the page that edits a schedule.
type editView struct {
	chrome
	scheduleFormView
	S *schedule.Schedule
}

// scheduleFormView is what the fields of the new and edit forms show
// (templates/schedule_fields.html).
type scheduleFormView struct {
	// New adds the fields only a new schedule has: its key and whether it
	// starts paused.
	New bool
	// Key is the key of the keyed schedule the edit form changes: shown,
	// with its owner, as what does not change.
	Key string
	// Zone is the zone the start and end are read in: the schedule's, or
	// for a new one the form's.
	Zone     string
	Form     scheduleFields
	Overlaps []schedule.OverlapPolicy
	CatchUps []schedule.CatchUpPolicy
	DSTGaps  []schedule.DSTGap
	DSTFolds []schedule.DSTFold
	// CalendarNames are the holiday calendars, offered for the
	// schedule's calendars; OnExcludeds the policies for their dates.
	CalendarNames []string
	OnExcludeds   []schedule.OnExcluded
	// Types are the workflow types this server runs, offered for the
	// workflow type.
	Types []string
	// FieldErrors holds the error of the field it names (by its form
	// name), shown beside it.
	FieldErrors map[string]string
}

// catchUpPolicies are the catch-up policies, as the forms list them.
var catchUpPolicies = []schedule.CatchUpPolicy{schedule.CatchUpWindow, schedule.CatchUpLatest}

// dstGaps and dstFolds are the DST policies, as the forms list them: the
// default first.
var (
	dstGaps  = []schedule.DSTGap{schedule.DSTGapJump, schedule.DSTGapShift, schedule.DSTGapSkip}
	dstFolds = []schedule.DSTFold{schedule.DSTFoldFirst, schedule.DSTFoldLast, schedule.DSTFoldBoth}
)

// scheduleFields are the fields of the edit form, as the form holds them.
// Empty run policy fields (attempts, priority, queue, timeout) leave the
// workflow type's default; an empty catch-up window is the default one
// (schedule.DefaultCatchUpWindow) and "0s" is none; empty input is null;
// an empty start, end or grant removes it. An empty DST policy is the
// default on the new form and unchanged on the edit form (a form loaded
// before the field existed does not post it). Rule is the rule chosen,
// "cron" (Cron) or "rrule" (RRule); "", a form posted without the choice,
// takes the one filled in. Calendars are the calendars checked; a form
// loaded before the field existed does not post calendars_field
// (CalendarsPosted false), and leaves them unchanged, as it leaves an empty
// OnExcluded.
type scheduleFields struct {
	Name          string
	Description   string
	Owner         string
	Tenant        string
	Rule          string
	Cron          string
	RRule         string
	TimeZone      string
	StartAt       string
	EndAt         string
	Overlap       string
	CatchUp       string
	CatchUpWindow string
	DSTGap        string
	DSTFold       string
	Calendars     []string
	// CalendarsPosted says the form has the calendars' checkboxes.
	CalendarsPosted bool
	OnExcluded      string
	MaxAttempts     string
	KeepRuns        string
	Priority        string
	Queue           string
	Timeout         string
	Input           string
	GrantID         string
	Workflow        string
	// Retry is the retry policy's fields; all empty: none, the workflow
	// type's.
	Retry retryFields
	// Only on the new form.
	Key       string
	Paused    bool
	PauseNote string
}

// fieldsOf fills the edit form with the schedule as stored, its start and
// end as wall times in loc.
func fieldsOf(s *schedule.Schedule, loc *time.Location) scheduleFields {
	f := scheduleFields{
		Name: s.Name, Description: s.Description, Owner: s.Owner, Tenant: s.Tenant, Workflow: s.Workflow, Rule: "cron", Cron: s.Cron, RRule: s.RRule,
		TimeZone: s.TimeZone, StartAt: wallTime(s.StartAt, loc), EndAt: wallTime(s.EndAt, loc),
		Overlap: string(s.Overlap), CatchUp: string(s.CatchUp), CatchUpWindow: s.CatchUpWindow.String(),
		DSTGap: string(s.DSTGap), DSTFold: string(s.DSTFold),
		Calendars: s.Calendars, CalendarsPosted: true, OnExcluded: string(s.OnExcluded),
		Queue: s.Queue, Input: prettyJSON(s.Input), Retry: retryFieldsOf(s.Retry),
	}
	if s.RRule != "" {
		f.Rule = "rrule"
	}
	if string(s.Input) == "null" {
		f.Input = ""
	}
	if s.MaxAttempts != 0 {
		f.MaxAttempts = strconv.Itoa(s.MaxAttempts)
	}
	if s.Priority != 0 {
		f.Priority = strconv.Itoa(s.Priority)
	}
	if s.KeepRuns != 0 {
		f.KeepRuns = strconv.Itoa(s.KeepRuns)
	}
	if s.Timeout != 0 {
		f.Timeout = s.Timeout.String()
	}
	if s.GrantID != nil {
		f.GrantID = s.GrantID.String()
	}
	return f
}

// postedFields reads the edit form as posted, with a textarea's line breaks
// (CRLF in a form) as LF, as they are stored.
func postedFields(r *http.Request) scheduleFields {
	v := func(name string) string {
		return strings.ReplaceAll(strings.TrimSpace(r.PostFormValue(name)), "\r\n", "\n")
	}
	var calendars []string
	for _, name := range r.PostForm["calendars"] {
		if name = strings.TrimSpace(name); name != "" {
			calendars = append(calendars, name)
		}
	}
	return scheduleFields{
		Calendars: calendars, CalendarsPosted: r.PostFormValue("calendars_field") != "", OnExcluded: v("on_excluded"),
		Name: v("name"), Description: v("description"), Owner: v("owner"), Tenant: v("tenant"), Rule: v("rule"), Cron: v("cron"), RRule: v("rrule"), TimeZone: v("time_zone"),
		StartAt: v("start_at"), EndAt: v("end_at"), Overlap: v("overlap"), CatchUp: v("catch_up"),
		CatchUpWindow: v("catch_up_window"), DSTGap: v("dst_gap"), DSTFold: v("dst_fold"), MaxAttempts: v("max_attempts"), KeepRuns: v("keep_runs"), Priority: v("priority"),
		Queue: v("queue"), Timeout: v("timeout"), Input: v("input"), GrantID: v("grant_id"),
		Workflow: v("workflow"), Key: v("key"), Paused: r.PostFormValue("paused") != "", PauseNote: v("pause_note"),
		Retry: retryFields{
			Posted: r.PostFormValue("retry_field") != "", Delay: v("retry_delay"), Base: v("retry_base"),
			Factor: v("retry_factor"), Max: v("retry_max"), Jitter: v("retry_jitter"),
		},
	}
}

// showEdit renders the edit page of the schedule ref names with status and
// errMsg: the form as posted when the request is a POST, or else the
// schedule as stored. When it returns an error, it has written nothing.
func (h *Handler) showEdit(w http.ResponseWriter, r *http.Request, ref schedule.Ref, status int, errMsg string) error {
	s, err := h.sc.Get(r.Context(), ref)
	if err != nil {
		return err
	}
	names, err := h.calendarNames(r.Context())
	if err != nil {
		return err
	}
	_, loc := describe(s)
	v := &editView{
		chrome: h.chrome(r, "Edit "+s.Name, "schedules"), S: s,
		scheduleFormView: scheduleFormView{
			Key: s.Key, Zone: loc.String(), Form: fieldsOf(s, loc), Overlaps: overlapPolicies, CatchUps: catchUpPolicies,
			DSTGaps: dstGaps, DSTFolds: dstFolds, CalendarNames: names, OnExcludeds: onExcludedPolicies, Types: h.wf.Types(),
		},
	}
	v.Error = errMsg
	if r.Method == http.MethodPost {
		v.Form = postedFields(r)
		v.FieldErrors = fieldErrors(r)
	}
	h.render(w, r, status, editScheduleTemplate, v)
	return nil
}

// editForm updates the schedule with schedule.Client.Update, as PATCH
// /api/schedules/{id} does. Like a PATCH naming only some fields, it passes
// only the fields that differ from the schedule as it is now (a workflow
// type left empty is unchanged): an unchanged start or end does not re-time
// the pending slot, and an unchanged grant is not checked again (a revoked
// one would refuse every edit). Nothing guards against a concurrent edit: a
// form loaded before another operator changed a field puts the field's old
// value back. A field that cannot be read, or that Update refuses, shows
// the form again with the error; nothing is written then.
func (h *Handler) editForm(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
	err := h.edit(w, r, ref)
	if err == nil || fieldOf(err) == "" {
		return err
	}
	// An error about a field is shown beside it too.
	status, msg := h.statusOf(err)
	if h.showEdit(w, withFieldError(r, err), ref, status, msg) != nil {
		return err
	}
	return nil
}

func (h *Handler) edit(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
	s, err := h.sc.Get(r.Context(), ref)
	if err != nil {
		return err
	}
	p, changed, err := updateParams(s, postedFields(r))
	if err != nil {
		return err
	}
	if !changed {
		h.seeOther(w, r, refPath(ref, ""), "unchanged", nil)
		return nil
	}
	if _, err := h.sc.Update(r.Context(), schedule.ByID(s.ID), p); err != nil {
		if _, rrule := ruleAfter(s, p); rrule != "" {
			err = rruleError(err)
		}
		return err
	}
	h.seeOther(w, r, refPath(ref, ""), "updated", nil)
	return nil
}

// updateParams reads the form's fields and returns the update of those that
// differ from s, and whether there is any.
func updateParams(s *schedule.Schedule, f scheduleFields) (*schedule.UpdateParams, bool, error) {
	_, loc := describe(s)
	p := &schedule.UpdateParams{}
	changed := false
	str := func(dst **string, form, stored string) {
		if form != stored {
			*dst, changed = &form, true
		}
	}
	str(&p.Name, f.Name, s.Name)
	str(&p.Description, f.Description, s.Description)
	str(&p.Owner, f.Owner, s.Owner)
	str(&p.Tenant, f.Tenant, s.Tenant)
	if f.Workflow != "" {
		str(&p.Workflow, f.Workflow, s.Workflow)
	}
	cron, rrule, err := f.rule()
	if err != nil {
		return nil, false, err
	}
	str(&p.Cron, cron, s.Cron) // either replaces the other
	str(&p.RRule, rrule, s.RRule)
	if p.Cron != nil && p.RRule != nil {
		p.Cron, p.RRule = nil, nil
		if cron != "" {
			p.Cron = &cron
		} else {
			p.RRule = &rrule
		}
	}
	str(&p.TimeZone, f.TimeZone, s.TimeZone)
	str(&p.Queue, f.Queue, s.Queue)
	if overlap := schedule.OverlapPolicy(f.Overlap); overlap != s.Overlap {
		p.Overlap, changed = &overlap, true
	}
	if catchUp := schedule.CatchUpPolicy(f.CatchUp); catchUp != s.CatchUp {
		p.CatchUp, changed = &catchUp, true
	}
	if gap := schedule.DSTGap(f.DSTGap); gap != "" && gap != s.DSTGap {
		p.DSTGap, changed = &gap, true
	}
	if fold := schedule.DSTFold(f.DSTFold); fold != "" && fold != s.DSTFold {
		p.DSTFold, changed = &fold, true
	}
	if f.CalendarsPosted && !slices.Equal(f.Calendars, s.Calendars) && (len(f.Calendars) > 0 || len(s.Calendars) > 0) {
		calendars := append([]string{}, f.Calendars...) // empty: none
		p.Calendars, changed = &calendars, true
	}
	if on := schedule.OnExcluded(f.OnExcluded); on != "" && on != s.OnExcluded {
		p.OnExcluded, changed = &on, true
	}
	if f.Retry.Posted {
		retry, err := f.Retry.policy()
		if err != nil {
			return nil, false, err
		}
		if !sameRetry(retry, s.Retry) {
			if retry == nil {
				retry = &workflow.RetryPolicy{} // removes it
			}
			p.Retry, changed = retry, true
		}
	}

	window := schedule.DefaultCatchUpWindow
	if f.CatchUpWindow != "" {
		var err error
		if window, err = formDuration("catch-up window", f.CatchUpWindow, "0s for none, or empty for the default (1m)"); err != nil {
			return nil, false, inField("catch_up_window", err)
		}
	}
	if window != s.CatchUpWindow {
		if window == 0 {
			window = -1 // no window; 0 is the default one in UpdateParams
		}
		p.CatchUpWindow, changed = &window, true
	}
	var timeout time.Duration
	if f.Timeout != "" {
		var err error
		if timeout, err = formDuration("timeout", f.Timeout, "empty for the workflow's default"); err != nil {
			return nil, false, inField("timeout", err)
		}
	}
	if timeout != s.Timeout {
		p.Timeout, changed = &timeout, true
	}
	for _, field := range []struct {
		name   string
		input  string
		form   string
		stored int
		dst    **int
		empty  string
	}{
		{"max attempts", "max_attempts", f.MaxAttempts, s.MaxAttempts, &p.MaxAttempts, "the workflow's default"},
		{"priority", "priority", f.Priority, s.Priority, &p.Priority, "the workflow's default"},
		{"runs to keep", "keep_runs", f.KeepRuns, s.KeepRuns, &p.KeepRuns, "the run retention for all"},
	} {
		n := 0
		if field.form != "" {
			var err error
			if n, err = strconv.Atoi(field.form); err != nil {
				return nil, false, inField(field.input, badRequest("%s %q is not a whole number; leave it empty for %s", field.name, field.form, field.empty))
			}
		}
		if n != field.stored {
			*field.dst, changed = &n, true
		}
	}

	for _, field := range []struct {
		name   string
		input  string
		form   string
		stored *time.Time
		dst    **time.Time
	}{
		{"start", "start_at", f.StartAt, s.StartAt, &p.StartAt},
		{"end", "end_at", f.EndAt, s.EndAt, &p.EndAt},
	} {
		var at time.Time // zero: none
		if field.form != "" {
			var err error
			if at, err = formTime(field.name, field.form, loc); err != nil {
				return nil, false, inField(field.input, err)
			}
		}
		var stored time.Time
		if field.stored != nil {
			stored = field.stored.Truncate(time.Second) // the form shows whole seconds
		}
		if !at.Equal(stored) {
			*field.dst, changed = &at, true
		}
	}

	input := []byte("null")
	if f.Input != "" {
		if !json.Valid([]byte(f.Input)) {
			return nil, false, inField("input", badRequest("the input is not valid JSON; leave it empty for none or write a JSON value such as {\"user\": \"ada\"}"))
		}
		var buf bytes.Buffer
		_ = json.Compact(&buf, []byte(f.Input)) // valid
		input = buf.Bytes()
	}
	var stored bytes.Buffer
	if json.Compact(&stored, s.Input) != nil || !bytes.Equal(input, stored.Bytes()) {
		p.Input, changed = json.RawMessage(input), true
	}

	grantID := uuid.Nil
	if f.GrantID != "" {
		var err error
		if grantID, err = parseGrantID(f.GrantID); err != nil {
			return nil, false, inField("grant_id", err)
		}
	}
	storedGrant := uuid.Nil
	if s.GrantID != nil {
		storedGrant = *s.GrantID
	}
	if grantID != storedGrant {
		p.GrantID, changed = &grantID, true
	}
	return p, changed, nil
}

// formDuration reads a form's duration field, a Go duration such as "90s"
// or "1h30m"; empty means hints at what else to write.
func formDuration(name, s, empty string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, badRequest("%s %q is not a duration; write one like 90s, 15m or 1h30m, or %s", name, s, empty)
	case d < 0:
		return 0, badRequest("%s %q is negative; write one like 90s, 15m or 1h30m, or %s", name, s, empty)
	}
	return d, nil
}

// wallTimeLayouts are the layouts of a datetime-local input's value, with
// and without seconds.
var wallTimeLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04"}

// formTime reads a form's time field: an RFC 3339 time, or a wall time as a
// datetime-local input sends it (2026-11-01T09:00, seconds optional) in loc.
// A wall time that a DST change skips or repeats is read as time.Date reads
// it.
func formTime(name, s string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range wallTimeLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, badRequest("%s %q is not a time; write it like 2026-11-01T09:00 (in %s) or as RFC 3339, like 2026-11-01T09:00:00Z", name, s, loc)
}

// wallTime shows t as a datetime-local input's value in loc, or "" for nil.
func wallTime(t *time.Time, loc *time.Location) string {
	if t == nil || t.IsZero() {
		return ""
	}
	in := t.In(loc)
	if in.Second() == 0 {
		return in.Format(wallTimeLayouts[1])
	}
	return in.Format(wallTimeLayouts[0])
}
