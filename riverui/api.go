package riverui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

const (
	// maxBodyBytes bounds a request body: a signal payload or trigger input
	// (workflow.DefaultMaxInputBytes) with room for the envelope.
	maxBodyBytes = workflow.DefaultMaxInputBytes + 64<<10

	// nextFireTimes is how many fire times GET /api/schedules/{id} and the
	// schedule page show.
	nextFireTimes = 10

	// defaultLimit is the page size of listings without limit=.
	defaultLimit = 100
)

// mountAPI mounts the JSON API on mux under prefix/api/. Unknown routes and
// wrong methods are answered in JSON too.
func (h *Handler) mountAPI(outer *http.ServeMux) {
	p := h.prefix + "/api"
	run := func(fn idHandler) http.HandlerFunc { return h.byID("run", fn, h.failJSON) }
	sched := func(fn idHandler) http.HandlerFunc { return h.byID("schedule", fn, h.failJSON) }

	mux := http.NewServeMux()
	mux.HandleFunc("GET "+p+"/runs", h.listRuns)
	mux.HandleFunc("POST "+p+"/runs", h.startRun)
	mux.Handle("GET "+p+"/runs/{id}", run(h.writeRun))
	mux.Handle("POST "+p+"/runs/{id}/cancel", run(then(h.cancelJSON, h.writeRun)))
	mux.Handle("POST "+p+"/runs/{id}/retry", run(then(withContext(h.wf.Retry), h.writeRun)))
	mux.Handle("POST "+p+"/runs/{id}/signal", run(then(signalJSON(h.wf), h.writeRun)))
	mux.HandleFunc("GET "+p+"/schedules", h.listSchedules)
	mux.HandleFunc("POST "+p+"/schedules", h.createSchedule)
	mux.Handle("GET "+p+"/schedules/{id}", sched(h.writeSchedule))
	mux.Handle("PATCH "+p+"/schedules/{id}", sched(then(h.updateSchedule, h.writeSchedule)))
	mux.Handle("DELETE "+p+"/schedules/{id}", sched(h.deleteSchedule))
	mux.Handle("POST "+p+"/schedules/{id}/pause", sched(then(h.pauseJSON, h.writeSchedule)))
	mux.Handle("POST "+p+"/schedules/{id}/resume", sched(then(h.resumeJSON, h.writeSchedule)))
	mux.Handle("POST "+p+"/schedules/{id}/trigger", sched(h.triggerSchedule))
	mux.Handle("POST "+p+"/schedules/{id}/backfill", sched(h.backfillSchedule))
	mux.Handle("GET "+p+"/schedules/{id}/history", sched(h.scheduleHistory))
	outer.Handle(p+"/", withFallback(mux, func(w http.ResponseWriter, r *http.Request, allowed []string) {
		if len(allowed) > 0 {
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s is not allowed; use %s", r.Method, r.URL.Path, strings.Join(allowed, " or ")))
			return
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("no API route %s %s", r.Method, r.URL.Path))
	}))
}

// occurrence is a fire time in GET /api/schedules/{id}.
type occurrence struct {
	At      time.Time `json:"at"`
	Nominal string    `json:"nominal"`
	Shifted bool      `json:"shifted,omitempty"`
	Note    string    `json:"note,omitempty"`
}

// runList is the answer of the run listings; NextAfter, set when the page
// is full, is the after= of the next page.
type runList struct {
	Runs      []*workflow.Run `json:"runs"`
	NextAfter *uuid.UUID      `json:"next_after,omitempty"`
}

func (h *Handler) listRuns(w http.ResponseWriter, r *http.Request) {
	params, err := runListParams(r, true)
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	runs, err := h.wf.ListRuns(r.Context(), params)
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, pageOf(runs, params.Limit))
}

// startRun answers POST /api/runs with {"workflow": …, "input": …,
// "idempotency_key": …, "queue": …, "priority": …, "tags": […]}: 201 and
// the run started, or, when the idempotency key had started one already,
// that first run. The type must be one the server's client registers, or
// any valid name when it registers none (tributary serve).
func (h *Handler) startRun(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Workflow       string          `json:"workflow"`
		Input          json.RawMessage `json:"input"`
		IdempotencyKey string          `json:"idempotency_key"`
		Queue          string          `json:"queue"`
		Priority       int             `json:"priority"`
		Tags           []string        `json:"tags"`
	}
	if err := readBody(r, &body, true); err != nil {
		h.failJSON(w, r, err)
		return
	}
	if body.Workflow == "" {
		h.failJSON(w, r, badRequest(`name the workflow type to start: {"workflow": "send_report", "input": {…}}`))
		return
	}
	run, err := h.wf.StartByName(r.Context(), body.Workflow, body.Input, &workflow.StartOpts{
		IdempotencyKey: body.IdempotencyKey, Queue: body.Queue, Priority: body.Priority, Tags: body.Tags,
	})
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"run": run})
}

// cancelJSON cancels a run. A run that has finished already is answered
// as it is, as pausing a paused schedule answers with the schedule: the
// run's status says what became of it.
func (h *Handler) cancelJSON(r *http.Request, id uuid.UUID) error {
	if err := h.wf.Cancel(r.Context(), id); err != nil && !errors.Is(err, workflow.ErrRunFinished) {
		return err
	}
	return nil
}

// then does do, then answers with answer (the run or the schedule as it is
// after do).
func then(do op, answer idHandler) idHandler {
	return func(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
		if err := do(r, id); err != nil {
			return err
		}
		return answer(w, r, id)
	}
}

func (h *Handler) writeRun(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	run, err := h.wf.GetRun(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"run": run})
	return nil
}

// signalJSON sends the signal of a {"name": …, "payload": …} body.
func signalJSON(wf *workflow.Client) op {
	return func(r *http.Request, id uuid.UUID) error {
		var body struct {
			Name    string          `json:"name"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := readBody(r, &body, true); err != nil {
			return err
		}
		var payload any
		if len(body.Payload) > 0 {
			payload = body.Payload
		}
		return wf.Signal(r.Context(), id, body.Name, payload)
	}
}

func (h *Handler) listSchedules(w http.ResponseWriter, r *http.Request) {
	if h.sc == nil {
		h.failJSON(w, r, errNoSchedules)
		return
	}
	params, err := scheduleListParams(r)
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	list, err := h.sc.List(r.Context(), params)
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	out := struct {
		Schedules []*schedule.Schedule `json:"schedules"`
		NextAfter *uuid.UUID           `json:"next_after,omitempty"`
	}{Schedules: list}
	if len(list) > 0 && len(list) == params.Limit {
		out.NextAfter = &list[len(list)-1].ID
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) writeSchedule(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	return h.writeScheduleStatus(w, r, id, http.StatusOK)
}

// writeScheduleStatus answers the schedule and its next fire times.
func (h *Handler) writeScheduleStatus(w http.ResponseWriter, r *http.Request, id uuid.UUID, status int) error {
	s, err := h.sc.Get(r.Context(), id)
	if err != nil {
		return err
	}
	next := []occurrence{}
	if !s.Paused {
		occs, err := h.sc.Next(r.Context(), id, nextFireTimes)
		if err != nil {
			return err
		}
		for _, o := range occs {
			next = append(next, occurrence{At: o.At, Nominal: o.Nominal, Shifted: o.Shifted, Note: o.Note})
		}
	}
	writeJSON(w, status, map[string]any{"schedule": s, "next_fire_times": next})
	return nil
}

func (h *Handler) deleteSchedule(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	if err := h.sc.Delete(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// pauseJSON pauses with the note of an optional {"note": …} body.
func (h *Handler) pauseJSON(r *http.Request, id uuid.UUID) error {
	var body struct {
		Note string `json:"note"`
	}
	if err := readBody(r, &body, false); err != nil {
		return err
	}
	_, err := h.sc.Pause(r.Context(), id, body.Note)
	return err
}

// resumeJSON resumes with the policy of an optional {"missed": …} body.
func (h *Handler) resumeJSON(r *http.Request, id uuid.UUID) error {
	var body struct {
		Missed schedule.MissedPolicy `json:"missed"`
	}
	if err := readBody(r, &body, false); err != nil {
		return err
	}
	_, err := h.sc.Resume(r.Context(), id, &schedule.ResumeOpts{Missed: body.Missed})
	return err
}

func (h *Handler) triggerSchedule(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	var body struct {
		Input   json.RawMessage        `json:"input"`
		Overlap schedule.OverlapPolicy `json:"overlap"`
	}
	if err := readBody(r, &body, false); err != nil {
		return err
	}
	var opts *schedule.TriggerOpts
	if len(body.Input) > 0 || body.Overlap != "" {
		opts = &schedule.TriggerOpts{Overlap: body.Overlap}
		if len(body.Input) > 0 {
			opts.Input = body.Input
		}
	}
	runID, err := h.sc.Trigger(r.Context(), id, opts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"run_id": runID})
	return nil
}

func (h *Handler) scheduleHistory(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	params, err := runListParams(r, false)
	if err != nil {
		return err
	}
	// History of an unknown schedule is empty; answer 404 instead.
	if _, err := h.sc.Get(r.Context(), id); err != nil {
		return err
	}
	runs, err := h.sc.History(r.Context(), id, params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pageOf(runs, params.Limit))
	return nil
}

// runListParams reads status=, limit= and after= of a run listing, and
// type= and schedule= when filters is set.
func runListParams(r *http.Request, filters bool) (*workflow.ListParams, error) {
	q := r.URL.Query()
	params := &workflow.ListParams{}
	if s := q.Get("status"); s != "" {
		params.Status = workflow.Status(s)
		if !slices.Contains(runStatuses, params.Status) {
			return nil, badRequest("status=%q is not a run status; use pending, running, sleeping, waiting, completed, failed, cancelled or skipped", s)
		}
	}
	var err error
	if params.Limit, err = intParam(q.Get("limit"), defaultLimit); err != nil {
		return nil, err
	}
	if params.After, err = uuidParam("after", q.Get("after")); err != nil {
		return nil, err
	}
	if filters {
		params.Type = strings.TrimSpace(q.Get("type"))
		if params.ScheduleID, err = uuidParam("schedule", strings.TrimSpace(q.Get("schedule"))); err != nil {
			return nil, err
		}
	}
	return params, nil
}

// runStatuses are the run statuses, in the order a run goes through them.
var runStatuses = []workflow.Status{
	workflow.StatusPending, workflow.StatusRunning, workflow.StatusSleeping, workflow.StatusWaiting,
	workflow.StatusCompleted, workflow.StatusFailed, workflow.StatusCancelled, workflow.StatusSkipped,
}

// scheduleListParams reads owner=, workflow=, paused=, limit= and after= of
// a schedule listing. paused= takes true or false (yes or no, and "" or any
// for both).
func scheduleListParams(r *http.Request) (*schedule.ListParams, error) {
	q := r.URL.Query()
	params := &schedule.ListParams{Owner: q.Get("owner"), Workflow: q.Get("workflow")}
	switch s := q.Get("paused"); s {
	case "", "any":
	case "yes", "no":
		paused := s == "yes"
		params.Paused = &paused
	default:
		paused, err := strconv.ParseBool(s)
		if err != nil {
			return nil, badRequest("paused=%q is not true or false", s)
		}
		params.Paused = &paused
	}
	var err error
	if params.Limit, err = intParam(q.Get("limit"), defaultLimit); err != nil {
		return nil, err
	}
	if params.After, err = uuidParam("after", q.Get("after")); err != nil {
		return nil, err
	}
	return params, nil
}

func pageOf(runs []*workflow.Run, limit int) runList {
	out := runList{Runs: runs}
	if len(runs) > 0 && len(runs) == limit {
		out.NextAfter = &runs[len(runs)-1].ID
	}
	return out
}

func intParam(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1000 {
		return 0, badRequest("limit=%q is not a number from 1 to 1000", s)
	}
	return n, nil
}

func uuidParam(name, s string) (*uuid.UUID, error) {
	if s == "" {
		return nil, nil
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return nil, badRequest("%s=%q is not an id; ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e", name, s)
	}
	return &id, nil
}

// readBody decodes a JSON request body into v. An empty body is allowed
// unless required.
func readBody(r *http.Request, v any, required bool) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if errors.Is(err, io.EOF) && !required {
		return nil
	}
	if err != nil {
		if tooLarge := tooLargeError(err); tooLarge != nil {
			return tooLarge
		}
		if errors.Is(err, io.EOF) {
			return badRequest("request body is empty; send a JSON object")
		}
		return badRequest("request body is not valid JSON for this route: %v", err)
	}
	if dec.More() {
		return badRequest("request body has more than one JSON value")
	}
	return nil
}

// tooLargeError is the 413 of a body larger than maxBodyBytes, or nil.
func tooLargeError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &apiError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body is larger than %d bytes", tooLarge.Limit)}
	}
	return nil
}

// failJSON answers err as JSON with the status that fits it.
func (h *Handler) failJSON(w http.ResponseWriter, _ *http.Request, err error) {
	status, msg := h.statusOf(err)
	writeError(w, status, msg)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
