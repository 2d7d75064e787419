package riverui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
)

// scheduleBody is the JSON body of POST /api/schedules and PATCH
// /api/schedules/{id}: schedule.Params in snake case, durations as Go
// duration strings ("90s", "1h"). A PATCH changes the fields it names.
type scheduleBody struct {
	Name          *string                 `json:"name"`
	Description   *string                 `json:"description"`
	Owner         *string                 `json:"owner"`
	Workflow      *string                 `json:"workflow"`
	Input         json.RawMessage         `json:"input"`
	Cron          *string                 `json:"cron"`
	TimeZone      *string                 `json:"time_zone"`
	StartAt       *time.Time              `json:"start_at"`
	EndAt         *time.Time              `json:"end_at"`
	Overlap       *schedule.OverlapPolicy `json:"overlap"`
	CatchUpWindow *duration               `json:"catch_up_window"`
	CatchUp       *schedule.CatchUpPolicy `json:"catch_up"`
	MaxAttempts   *int                    `json:"max_attempts"`
	Priority      *int                    `json:"priority"`
	Queue         *string                 `json:"queue"`
	Timeout       *duration               `json:"timeout"`
	Paused        *bool                   `json:"paused"`
	PauseNote     *string                 `json:"pause_note"`
	GrantID       *uuid.UUID              `json:"grant_id"`
}

// duration is a time.Duration written as a Go duration string.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"90s\" or \"1h\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = duration(v)
	return nil
}

func val[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func durationPtr(d *duration) *time.Duration {
	if d == nil {
		return nil
	}
	v := time.Duration(*d)
	return &v
}

// createSchedule answers POST /api/schedules: 201 with the schedule and its
// next fire times.
func (h *Handler) createSchedule(w http.ResponseWriter, r *http.Request) {
	if h.sc == nil {
		h.failJSON(w, r, errNoSchedules)
		return
	}
	var body scheduleBody
	if err := readBody(r, &body, true); err != nil {
		h.failJSON(w, r, err)
		return
	}
	p := &schedule.Params{
		Name: val(body.Name), Description: val(body.Description), Owner: val(body.Owner), Workflow: val(body.Workflow),
		Cron: val(body.Cron), TimeZone: val(body.TimeZone), StartAt: val(body.StartAt), EndAt: val(body.EndAt),
		Overlap: val(body.Overlap), CatchUpWindow: time.Duration(val(body.CatchUpWindow)), CatchUp: val(body.CatchUp),
		MaxAttempts: val(body.MaxAttempts), Priority: val(body.Priority), Queue: val(body.Queue), Timeout: time.Duration(val(body.Timeout)),
		Paused: val(body.Paused), PauseNote: val(body.PauseNote), GrantID: body.GrantID,
	}
	if len(body.Input) > 0 {
		p.Input = body.Input
	}
	s, err := h.sc.Create(r.Context(), p)
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	if err := h.writeScheduleStatus(w, r, s.ID, http.StatusCreated); err != nil {
		h.failJSON(w, r, err)
	}
}

// updateSchedule answers PATCH /api/schedules/{id}.
func (h *Handler) updateSchedule(r *http.Request, id uuid.UUID) error {
	var body scheduleBody
	if err := readBody(r, &body, true); err != nil {
		return err
	}
	switch {
	case body.Workflow != nil:
		return badRequest("a schedule's workflow type cannot change; create a new schedule")
	case body.Paused != nil || body.PauseNote != nil:
		return badRequest("pause and resume with POST .../pause and .../resume")
	}
	p := &schedule.UpdateParams{
		Name: body.Name, Description: body.Description, Owner: body.Owner, Cron: body.Cron, TimeZone: body.TimeZone,
		StartAt: body.StartAt, EndAt: body.EndAt, Overlap: body.Overlap, CatchUpWindow: durationPtr(body.CatchUpWindow),
		CatchUp: body.CatchUp, MaxAttempts: body.MaxAttempts, Priority: body.Priority, Queue: body.Queue,
		Timeout: durationPtr(body.Timeout), GrantID: body.GrantID,
	}
	if len(body.Input) > 0 {
		p.Input = body.Input
	}
	_, err := h.sc.Update(r.Context(), id, p)
	return err
}

// backfillSchedule answers POST /api/schedules/{id}/backfill with
// {"from": …, "to": …, "input": …, "overlap": …, "rerun_skipped": …}: the
// slots in [from, to) that have not run, in one transaction; the answer is
// the schedule.BackfillResult, {"slots", "started", "queued", "existing",
// "rerun", "skipped": {reason: n}}.
func (h *Handler) backfillSchedule(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	var body struct {
		From         time.Time              `json:"from"`
		To           time.Time              `json:"to"`
		Input        json.RawMessage        `json:"input"`
		Overlap      schedule.OverlapPolicy `json:"overlap"`
		RerunSkipped bool                   `json:"rerun_skipped"`
	}
	if err := readBody(r, &body, true); err != nil {
		return err
	}
	if body.From.IsZero() || body.To.IsZero() {
		return badRequest(`send "from" and "to" as RFC 3339 times, e.g. {"from": "2026-11-01T00:00:00Z", "to": "2026-11-02T00:00:00Z"}`)
	}
	opts := &schedule.BackfillOpts{Overlap: body.Overlap, RerunSkipped: body.RerunSkipped}
	if len(body.Input) > 0 {
		opts.Input = body.Input
	}
	res, err := h.sc.Backfill(r.Context(), id, body.From, body.To, opts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
