package riverui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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

	// nextFireTimes is how many fire times GET /api/schedules/{id} shows.
	nextFireTimes = 10
)

// mountAPI mounts the JSON API on mux under prefix/api/. Unknown routes and
// wrong methods are answered in JSON too.
func (h *Handler) mountAPI(outer *http.ServeMux) {
	p := h.prefix + "/api"
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+p+"/runs", h.listRuns)
	mux.HandleFunc("GET "+p+"/runs/{id}", h.getRun)
	mux.HandleFunc("POST "+p+"/runs/{id}/cancel", h.cancelRun)
	mux.HandleFunc("POST "+p+"/runs/{id}/retry", h.retryRun)
	mux.HandleFunc("POST "+p+"/runs/{id}/signal", h.signalRun)
	mux.HandleFunc("GET "+p+"/schedules", h.listSchedules)
	mux.HandleFunc("GET "+p+"/schedules/{id}", h.getSchedule)
	mux.HandleFunc("DELETE "+p+"/schedules/{id}", h.deleteSchedule)
	mux.HandleFunc("POST "+p+"/schedules/{id}/pause", h.pauseSchedule)
	mux.HandleFunc("POST "+p+"/schedules/{id}/resume", h.resumeSchedule)
	mux.HandleFunc("POST "+p+"/schedules/{id}/trigger", h.triggerSchedule)
	mux.HandleFunc("GET "+p+"/schedules/{id}/history", h.scheduleHistory)
	outer.HandleFunc(p+"/", func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r) // sets the path values

			return
		}
		var allowed []string
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			probe := r.Clone(r.Context())
			probe.Method = method
			if _, pattern := mux.Handler(probe); pattern != "" {
				allowed = append(allowed, method)
			}
		}
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s is not allowed; use %s", r.Method, r.URL.Path, strings.Join(allowed, " or ")))
			return
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("no API route %s %s", r.Method, r.URL.Path))
	})
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
	params, err := runListParams(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	q := r.URL.Query()
	if s := q.Get("schedule"); s != "" {
		id, err := uuid.Parse(s)
		if err != nil {
			h.fail(w, badRequest("schedule=%q is not a schedule id", s))
			return
		}
		params.ScheduleID = &id
	}
	params.Type = q.Get("type")
	runs, err := h.wf.ListRuns(r.Context(), params)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, pageOf(runs, params.Limit))
}

func (h *Handler) getRun(w http.ResponseWriter, r *http.Request) {
	id, ok := h.pathID(w, r, "run")
	if !ok {
		return
	}
	h.writeRun(w, r, id)
}

func (h *Handler) cancelRun(w http.ResponseWriter, r *http.Request) {
	id, ok := h.pathID(w, r, "run")
	if !ok {
		return
	}
	if err := h.wf.Cancel(r.Context(), id); err != nil {
		h.fail(w, err)
		return
	}
	h.writeRun(w, r, id)
}

func (h *Handler) retryRun(w http.ResponseWriter, r *http.Request) {
	id, ok := h.pathID(w, r, "run")
	if !ok {
		return
	}
	if err := h.wf.Retry(r.Context(), id); err != nil {
		h.fail(w, err)
		return
	}
	h.writeRun(w, r, id)
}

func (h *Handler) signalRun(w http.ResponseWriter, r *http.Request) {
	id, ok := h.pathID(w, r, "run")
	if !ok {
		return
	}
	var body struct {
		Name    string          `json:"name"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := readBody(w, r, &body, true); err != nil {
		h.fail(w, err)
		return
	}
	var payload any
	if len(body.Payload) > 0 {
		payload = body.Payload
	}
	if err := h.wf.Signal(r.Context(), id, body.Name, payload); err != nil {
		h.fail(w, err)
		return
	}
	h.writeRun(w, r, id)
}

func (h *Handler) writeRun(w http.ResponseWriter, r *http.Request, id uuid.UUID) {
	run, err := h.wf.GetRun(r.Context(), id)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"run": run})
}

func (h *Handler) listSchedules(w http.ResponseWriter, r *http.Request) {
	if !h.schedules(w) {
		return
	}
	q := r.URL.Query()
	params := &schedule.ListParams{Owner: q.Get("owner"), Workflow: q.Get("workflow")}
	if s := q.Get("paused"); s != "" {
		paused, err := strconv.ParseBool(s)
		if err != nil {
			h.fail(w, badRequest("paused=%q is not true or false", s))
			return
		}
		params.Paused = &paused
	}
	var err error
	if params.Limit, err = intParam(q.Get("limit"), 100); err != nil {
		h.fail(w, err)
		return
	}
	if params.After, err = uuidParam("after", q.Get("after")); err != nil {
		h.fail(w, err)
		return
	}
	list, err := h.sc.List(r.Context(), params)
	if err != nil {
		h.fail(w, err)
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

func (h *Handler) getSchedule(w http.ResponseWriter, r *http.Request) {
	id, ok := h.scheduleID(w, r)
	if !ok {
		return
	}
	h.writeSchedule(w, r, id)
}

func (h *Handler) writeSchedule(w http.ResponseWriter, r *http.Request, id uuid.UUID) {
	s, err := h.sc.Get(r.Context(), id)
	if err != nil {
		h.fail(w, err)
		return
	}
	next := []occurrence{}
	if !s.Paused {
		occs, err := h.sc.Next(r.Context(), id, nextFireTimes)
		if err != nil {
			h.fail(w, err)
			return
		}
		for _, o := range occs {
			next = append(next, occurrence{At: o.At, Nominal: o.Nominal, Shifted: o.Shifted, Note: o.Note})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedule": s, "next_fire_times": next})
}

func (h *Handler) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	id, ok := h.scheduleID(w, r)
	if !ok {
		return
	}
	if err := h.sc.Delete(r.Context(), id); err != nil {
		h.fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) pauseSchedule(w http.ResponseWriter, r *http.Request) {
	id, ok := h.scheduleID(w, r)
	if !ok {
		return
	}
	var body struct {
		Note string `json:"note"`
	}
	if err := readBody(w, r, &body, false); err != nil {
		h.fail(w, err)
		return
	}
	if _, err := h.sc.Pause(r.Context(), id, body.Note); err != nil {
		h.fail(w, err)
		return
	}
	h.writeSchedule(w, r, id)
}

func (h *Handler) resumeSchedule(w http.ResponseWriter, r *http.Request) {
	id, ok := h.scheduleID(w, r)
	if !ok {
		return
	}
	var body struct {
		Missed schedule.MissedPolicy `json:"missed"`
	}
	if err := readBody(w, r, &body, false); err != nil {
		h.fail(w, err)
		return
	}
	if _, err := h.sc.Resume(r.Context(), id, &schedule.ResumeOpts{Missed: body.Missed}); err != nil {
		h.fail(w, err)
		return
	}
	h.writeSchedule(w, r, id)
}

func (h *Handler) triggerSchedule(w http.ResponseWriter, r *http.Request) {
	id, ok := h.scheduleID(w, r)
	if !ok {
		return
	}
	var body struct {
		Input   json.RawMessage        `json:"input"`
		Overlap schedule.OverlapPolicy `json:"overlap"`
	}
	if err := readBody(w, r, &body, false); err != nil {
		h.fail(w, err)
		return
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
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"run_id": runID})
}

func (h *Handler) scheduleHistory(w http.ResponseWriter, r *http.Request) {
	id, ok := h.scheduleID(w, r)
	if !ok {
		return
	}
	params, err := runListParams(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	// History of an unknown schedule is empty; answer 404 instead.
	if _, err := h.sc.Get(r.Context(), id); err != nil {
		h.fail(w, err)
		return
	}
	runs, err := h.sc.History(r.Context(), id, params)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, pageOf(runs, params.Limit))
}

// runListParams reads status=, limit= and after= of a run listing.
func runListParams(r *http.Request) (*workflow.ListParams, error) {
	q := r.URL.Query()
	params := &workflow.ListParams{}
	if s := q.Get("status"); s != "" {
		params.Status = workflow.Status(s)
		switch params.Status {
		case workflow.StatusPending, workflow.StatusRunning, workflow.StatusSleeping, workflow.StatusWaiting,
			workflow.StatusCompleted, workflow.StatusFailed, workflow.StatusCancelled, workflow.StatusSkipped:
		default:
			return nil, badRequest("status=%q is not a run status; use pending, running, sleeping, waiting, completed, failed, cancelled or skipped", s)
		}
	}
	var err error
	if params.Limit, err = intParam(q.Get("limit"), 100); err != nil {
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

// pathID parses the {id} path value, answering 400 when it is not a UUID.
func (h *Handler) pathID(w http.ResponseWriter, r *http.Request, what string) (uuid.UUID, bool) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		h.fail(w, badRequest("%q is not a %s id; ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e", r.PathValue("id"), what))
		return uuid.Nil, false
	}
	return id, true
}

func (h *Handler) scheduleID(w http.ResponseWriter, r *http.Request) (uuid.UUID, bool) {
	if !h.schedules(w) {
		return uuid.Nil, false
	}
	return h.pathID(w, r, "schedule")
}

// schedules answers 404 when the Handler has no schedule client.
func (h *Handler) schedules(w http.ResponseWriter) bool {
	if h.sc == nil {
		writeError(w, http.StatusNotFound, "schedules are not served here: this handler was built without a schedule client")
		return false
	}
	return true
}

// readBody decodes a JSON request body into v. An empty body is allowed
// unless required.
func readBody(w http.ResponseWriter, r *http.Request, v any, required bool) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if errors.Is(err, io.EOF) && !required {
		return nil
	}
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &apiError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body is larger than %d bytes", tooLarge.Limit)}
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

// apiError is an error with the HTTP status to answer.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// fail answers err as JSON with the status that fits it. Unexpected errors
// are logged and answered 500 without their text, which may name database
// internals.
func (h *Handler) fail(w http.ResponseWriter, err error) {
	var apiErr *apiError
	switch {
	case errors.As(err, &apiErr):
		writeError(w, apiErr.status, apiErr.msg)
	case errors.Is(err, workflow.ErrNotFound), errors.Is(err, schedule.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, workflow.ErrInvalid), errors.Is(err, schedule.ErrInvalid), errors.Is(err, workflow.ErrUnknownType):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, workflow.ErrRunFinished), errors.Is(err, workflow.ErrRunNotRetryable):
		writeError(w, http.StatusConflict, err.Error())
	default:
		h.logger.Error("riverui: API request failed", "error", err)
		writeError(w, http.StatusInternalServerError, "internal error; see the server's log")
	}
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
