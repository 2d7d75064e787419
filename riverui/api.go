package riverui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

const (
	// maxBodyBytes bounds a request body: a signal payload or trigger input
	// (workflow.DefaultMaxInputBytes) with room for the envelope.
	maxBodyBytes = workflow.DefaultMaxInputBytes + 64<<10

	// nextFireTimes is how many fire times GET /api/schedules/{id} and the
	// schedule page show.
	nextFireTimes = wire.NextFireTimes

	// defaultLimit is the page size of listings without limit=.
	defaultLimit = 100
)

// apiRoute is a route of the JSON API: a method and a path under
// Config.Prefix. openapi.json describes each one (TestOpenAPIMatchesRouter
// checks it).
type apiRoute struct {
	method, path string
	serve        http.Handler
}

// apiRoutes are the JSON API's routes.
func (h *Handler) apiRoutes() []apiRoute {
	run := func(fn idHandler) http.Handler { return h.byID(fn, h.failJSON) }
	sched := func(fn refHandler) http.Handler { return h.byRef(fn, h.failJSON) }
	cal := h.calendarRoute
	grant := h.grantRoute
	return []apiRoute{
		{http.MethodGet, "/api/openapi.json", http.HandlerFunc(h.serveOpenAPI)},
		{http.MethodGet, "/api/runs", http.HandlerFunc(h.listRuns)},
		{http.MethodPost, "/api/runs", http.HandlerFunc(h.startRun)},
		{http.MethodPost, "/api/runs/bulk", http.HandlerFunc(h.bulkRuns)},
		{http.MethodGet, "/api/runs/{id}", run(h.writeRun)},
		{http.MethodPost, "/api/runs/{id}/cancel", run(then(h.cancelJSON, h.writeRun))},
		{http.MethodPost, "/api/runs/{id}/retry", run(then(withContext(h.wf.Retry), h.writeRun))},
		{http.MethodPost, "/api/runs/{id}/fork", run(h.forkRun)},
		{http.MethodPost, "/api/runs/{id}/signal", run(then(h.signalJSON, h.writeRun))},
		{http.MethodGet, "/api/schedules", http.HandlerFunc(h.listSchedules)},
		{http.MethodPost, "/api/schedules", http.HandlerFunc(h.createSchedule)},
		{http.MethodPost, "/api/schedules/bulk", http.HandlerFunc(h.bulkSchedules)},
		{http.MethodGet, "/api/schedules/{id}", sched(h.writeSchedule)},
		{http.MethodPatch, "/api/schedules/{id}", sched(then(h.updateSchedule, h.writeSchedule))},
		{http.MethodDelete, "/api/schedules/{id}", sched(h.deleteSchedule)},
		{http.MethodPost, "/api/schedules/{id}/pause", sched(then(h.pauseJSON, h.writeSchedule))},
		{http.MethodPost, "/api/schedules/{id}/resume", sched(then(h.resumeJSON, h.writeSchedule))},
		{http.MethodPost, "/api/schedules/{id}/trigger", sched(h.triggerSchedule)},
		{http.MethodPost, "/api/schedules/{id}/backfill", sched(h.backfillSchedule)},
		{http.MethodGet, "/api/schedules/{id}/history", sched(h.scheduleHistory)},
		{http.MethodGet, "/api/calendars", cal(h.listCalendars)},
		{http.MethodPost, "/api/calendars", cal(h.createCalendar)},
		{http.MethodGet, "/api/calendars/{name}", cal(h.getCalendar)},
		{http.MethodDelete, "/api/calendars/{name}", cal(h.deleteCalendar)},
		{http.MethodPost, "/api/calendars/{name}/dates", cal(h.addCalendarDates)},
		{http.MethodDelete, "/api/calendars/{name}/dates", cal(h.removeCalendarDates)},
		{http.MethodGet, "/api/grants", grant(h.listGrants)},
		{http.MethodPost, "/api/grants", grant(h.createGrant)},
		{http.MethodGet, "/api/grants/{id}", grant(h.getGrant)},
		{http.MethodPost, "/api/grants/{id}/revoke", grant(h.revokeGrant)},
		{http.MethodGet, "/api/tenants", http.HandlerFunc(h.listTenants)},
		{http.MethodPut, "/api/tenants/{type}/{tenant}/limit", http.HandlerFunc(h.putTenantLimit)},
		{http.MethodDelete, "/api/tenants/{type}/{tenant}/limit", http.HandlerFunc(h.deleteTenantLimit)},
		{http.MethodPut, "/api/tenants/{type}/{tenant}/rate", http.HandlerFunc(h.putTenantRate)},
		{http.MethodDelete, "/api/tenants/{type}/{tenant}/rate", http.HandlerFunc(h.deleteTenantRate)},
	}
}

// mountAPI mounts the JSON API on outer under prefix/api/. Unknown routes
// and wrong methods are answered in JSON too.
func (h *Handler) mountAPI(outer *http.ServeMux) {
	mux := http.NewServeMux()
	for _, route := range h.apiRoutes() {
		mux.Handle(route.method+" "+h.prefix+route.path, route.serve)
	}
	outer.Handle(h.prefix+"/api/", withFallback(mux, func(w http.ResponseWriter, r *http.Request, allowed []string) {
		if len(allowed) > 0 {
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s is not allowed; use %s", r.Method, r.URL.Path, strings.Join(allowed, " or ")))
			return
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("no API route %s %s; the routes are described at %s/api/openapi.json", r.Method, r.URL.Path, h.prefix))
	}))
}

func (h *Handler) listRuns(w http.ResponseWriter, r *http.Request) {
	err := checkQuery(r, "type", "status", "tenant", "schedule_id", "schedule", "forked_from", "limit", "after")
	var params *workflow.ListParams
	if err == nil {
		params, err = runListParams(r, true)
	}
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	runs, err := h.wf.ListRuns(r.Context(), params)
	var page *wire.RunList
	if err == nil {
		page, err = wire.RunPage(r.Context(), h.wf, runs, params.Limit)
	}
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// runReadOnly are the fields of a run that POST /api/runs does not take.
var runReadOnly = []string{
	"id", "status", "output", "error", "attempt", "job_id", "schedule_id", "fire_at", "parent_id", "parent_step",
	"skip_reason", "held", "held_reason", "cancel_requested_at", "created_at", "updated_at", "started_at", "finished_at", "steps",
	"debounce_key", "existing", "forked_from", "forked_from_step",
}

// runStartBody is the body of POST /api/runs: a run's writable fields.
type runStartBody struct {
	Type, IdempotencyKey, Queue opt[string]
	Tenant                      opt[string]
	Input                       opt[json.RawMessage]
	MaxAttempts, Priority       opt[int]
	Tags                        opt[[]string]
	Metadata                    opt[map[string]any]
	RequireWorker               opt[bool]
	Debounce                    opt[debounceBody]
	Retry                       opt[retryBody]
}

// debounceBody is the "debounce" of POST /api/runs, workflow.Debounce on
// the wire: {"key": "doc-1", "period": "30s", "max_delay": "5m"}, durations
// as Go duration strings; max_delay may be left out (no bound).
type debounceBody struct {
	Key              opt[string]
	Period, MaxDelay opt[wire.Duration]
}

func (b *debounceBody) members() []member {
	return []member{{name: "key", dst: &b.Key}, {name: "period", dst: &b.Period}, {name: "max_delay", dst: &b.MaxDelay}}
}

// UnmarshalJSON reads a debounce object as a body's fields are read: an
// unknown or null member, or a value of the wrong kind, is a *memberError
// naming it.
func (b *debounceBody) UnmarshalJSON(raw []byte) error {
	return readObject(raw, debounceWant, "debounce", "key, period and max_delay", b.members(), func() {})
}

// debounceWant is what "debounce" takes.
const debounceWant = `a JSON object such as {"key": "doc-1", "period": "30s", "max_delay": "5m"}`

// debounce is b as StartOpts takes it; nil for none.
func (b *debounceBody) debounce() *workflow.Debounce {
	if b == nil {
		return nil
	}
	return &workflow.Debounce{Key: b.Key.value(), Period: time.Duration(b.Period.value()), MaxDelay: time.Duration(b.MaxDelay.value())}
}

func (b *runStartBody) spec() *bodySpec {
	return &bodySpec{what: "a run", required: true, readOnly: runReadOnly, members: []member{
		{name: "type", dst: &b.Type}, {name: "input", dst: &b.Input, nullable: true},
		{name: "idempotency_key", dst: &b.IdempotencyKey}, {name: "tenant", dst: &b.Tenant}, {name: "max_attempts", dst: &b.MaxAttempts},
		{name: "priority", dst: &b.Priority}, {name: "queue", dst: &b.Queue},
		{name: "tags", dst: &b.Tags}, {name: "metadata", dst: &b.Metadata},
		{name: "require_worker", dst: &b.RequireWorker}, {name: "debounce", dst: &b.Debounce}, {name: "retry", dst: &b.Retry},
	}, renamed: map[string]string{"workflow": "type"}}
}

// startRun answers POST /api/runs, a run's writable fields (type, input,
// idempotency_key, tenant, max_attempts, priority, queue, tags, metadata) and
// require_worker (not stored: refuse with 409 when no live client serves
// the type, as workflow.StartOpts.RequireWorker does), and debounce
// (workflow.StartOpts.Debounce: {"key": "doc-1", "period": "30s",
// "max_delay": "5m"}, durations as Go duration strings), and retry
// (workflow.StartOpts.Retry: {"delay": "30s"} or {"base": "1s", "factor":
// 2, "max": "5m", "jitter": 0.1}; {} asks for River's backoff over the
// type's policy): 201 and
// the run started, or, when the idempotency key had started one already,
// that first run, or, when the start joined a debounce window, the
// window's run; "existing" says which (true: nothing was started). The
// type must be one the server's client registers, or
// any valid name when it registers none (tributary serve). Zero max
// attempts, priority and queue take the type's defaults. "workflow" is the
// former name of "type", still read (deprecated).
func (h *Handler) startRun(w http.ResponseWriter, r *http.Request) {
	var b runStartBody
	if _, err := b.spec().read(r); err != nil {
		h.failJSON(w, r, err)
		return
	}
	if b.Type.value() == "" {
		h.failJSON(w, r, badField("type", `is missing; name the workflow type to start: {"type": "send_report", "input": {…}}`))
		return
	}
	retry := retryPolicy(&b.Retry, false)
	if err := checkRetry(retry); err != nil {
		h.failJSON(w, r, err)
		return
	}
	input := b.Input.value()
	if b.Input.null {
		input = json.RawMessage("null")
	}
	run, existing, err := h.start(r.Context(), b.Type.value(), input, &workflow.StartOpts{
		IdempotencyKey: b.IdempotencyKey.value(), MaxAttempts: b.MaxAttempts.value(), Metadata: b.Metadata.value(),
		Priority: b.Priority.value(), Queue: b.Queue.value(), Tags: b.Tags.value(), RequireWorker: b.RequireWorker.value(),
		Tenant: b.Tenant.value(), Debounce: b.Debounce.ptr().debounce(), Retry: retry,
	})
	var invalid *workflow.ValidationError
	if errors.As(err, &invalid) && invalid.Field == "name" {
		err = badField("type", "%s", invalid.Problem)
	}
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	if err := h.writeRunAnswer(w, r, run.ID, http.StatusCreated, &existing); err != nil {
		h.failJSON(w, r, err)
	}
}

// start is StartByName, which also says whether the start started
// nothing (workflow.Run.Existing): its idempotency key matched a run
// started earlier, or it joined a debounce window's run.
func (h *Handler) start(ctx context.Context, typ string, input json.RawMessage, opts *workflow.StartOpts) (*workflow.Run, bool, error) {
	run, err := h.wf.StartByName(ctx, typ, input, opts)
	if err != nil {
		return nil, false, err
	}
	return run, run.Existing, nil
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
// after do); K is what the route's {id} names, a run's id or a schedule's
// Ref.
func then[K any](do func(*http.Request, K) error, answer func(http.ResponseWriter, *http.Request, K) error) func(http.ResponseWriter, *http.Request, K) error {
	return func(w http.ResponseWriter, r *http.Request, k K) error {
		if err := do(r, k); err != nil {
			return err
		}
		return answer(w, r, k)
	}
}

func (h *Handler) writeRun(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	return h.writeRunStatus(w, r, id, http.StatusOK)
}

// writeRunStatus answers the run with its steps.
func (h *Handler) writeRunStatus(w http.ResponseWriter, r *http.Request, id uuid.UUID, status int) error {
	return h.writeRunAnswer(w, r, id, status, nil)
}

// writeRunAnswer is writeRunStatus with "existing", for the answer of a
// start (nil: none).
func (h *Handler) writeRunAnswer(w http.ResponseWriter, r *http.Request, id uuid.UUID, status int, existing *bool) error {
	run, err := h.wf.GetRun(r.Context(), id)
	if err != nil {
		return err
	}
	out, err := wire.RunAnswer(r.Context(), h.wf, run)
	if err != nil {
		return err
	}
	out.Existing = existing
	writeJSON(w, status, out)
	return nil
}

// signalBody is the body of POST /api/runs/{id}/signal.
type signalBody struct {
	Name    opt[string]
	Payload opt[json.RawMessage]
}

func (b *signalBody) spec() *bodySpec {
	return &bodySpec{what: "a signal", required: true, members: []member{
		{name: "name", dst: &b.Name}, {name: "payload", dst: &b.Payload, nullable: true},
	}}
}

// signalJSON sends the signal of a {"name": …, "payload": …} body; a
// payload of null is the JSON value null, none is no payload.
func (h *Handler) signalJSON(r *http.Request, id uuid.UUID) error {
	var b signalBody
	if _, err := b.spec().read(r); err != nil {
		return err
	}
	if b.Name.value() == "" {
		return badField("name", `is missing; name the signal the run waits for: {"name": "approved", "payload": {…}}`)
	}
	var payload any
	if b.Payload.set {
		payload = rawOrNull(&b.Payload)
	}
	return h.wf.Signal(r.Context(), id, b.Name.value(), payload)
}

func (h *Handler) listSchedules(w http.ResponseWriter, r *http.Request) {
	if h.sc == nil {
		h.failJSON(w, r, errNoSchedules)
		return
	}
	err := checkQuery(r, "name", "owner", "workflow", "paused", "calendar", "limit", "after")
	var params *schedule.ListParams
	if err == nil {
		params, err = scheduleListParams(r)
	}
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	list, err := h.sc.List(r.Context(), params)
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.SchedulePage(list, params.Limit))
}

func (h *Handler) scheduleHistory(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
	if err := checkQuery(r, "owner", "status", "limit", "after"); err != nil {
		return err
	}
	params, err := runListParams(r, false)
	if err != nil {
		return err
	}
	// History of an unknown schedule is empty; answer 404 instead.
	s, err := h.sc.Get(r.Context(), ref)
	if err != nil {
		return err
	}
	runs, err := h.sc.History(r.Context(), schedule.ByID(s.ID), params)
	if err != nil {
		return err
	}
	page, err := wire.RunPage(r.Context(), h.wf, runs, params.Limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// checkQuery refuses a query parameter not in allowed, so that a typo
// (?stauts=failed) is an error, not a listing of everything. The API's
// listings check their query; the dashboard's pages, which share the
// parameters' parsing, take others (a flash notice).
func checkQuery(r *http.Request, allowed ...string) error {
	q := r.URL.Query()
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(allowed, name) {
			return badParam(name, "%s= is not a query parameter of this listing; it takes %s", name, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// runListParams reads status=, limit= and after= of a run listing, and
// type=, tenant= and schedule_id= when filters is set. schedule= is the
// former name of schedule_id=, still read (deprecated). A tenant= that is
// not a tenant name (workflow.CheckTenant) is refused: no run has it.
func runListParams(r *http.Request, filters bool) (*workflow.ListParams, error) {
	q := r.URL.Query()
	params := &workflow.ListParams{}
	if s := q.Get("status"); s != "" {
		params.Status = workflow.Status(s)
		if !slices.Contains(runStatuses, params.Status) {
			return nil, badParam("status", "status=%q is not a run status; use pending, running, sleeping, waiting, completed, failed, cancelled or skipped", s)
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
		if params.Tenant = strings.TrimSpace(q.Get("tenant")); params.Tenant != "" {
			if err := workflow.CheckTenant("tenant", params.Tenant); err != nil {
				return nil, err
			}
		}
		name, value := "schedule_id", q.Get("schedule_id")
		if value == "" && q.Has("schedule") {
			name, value = "schedule", q.Get("schedule")
		}
		if params.ScheduleID, err = uuidParam(name, strings.TrimSpace(value)); err != nil {
			return nil, err
		}
		if params.ForkedFrom, err = uuidParam("forked_from", strings.TrimSpace(q.Get("forked_from"))); err != nil {
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

// scheduleListParams reads name=, owner=, workflow=, paused=, calendar=, limit= and
// after= of a schedule listing. paused= takes true or false (yes or no, and "" or any
// for both).
func scheduleListParams(r *http.Request) (*schedule.ListParams, error) {
	q := r.URL.Query()
	params := &schedule.ListParams{Name: q.Get("name"), Owner: q.Get("owner"), Workflow: q.Get("workflow"), Calendar: q.Get("calendar")}
	switch s := q.Get("paused"); s {
	case "", "any":
	case "yes", "no":
		paused := s == "yes"
		params.Paused = &paused
	default:
		paused, err := strconv.ParseBool(s)
		if err != nil {
			return nil, badParam("paused", "paused=%q is not true or false", s)
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

func intParam(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1000 {
		return 0, badParam("limit", "limit=%q is not a number from 1 to 1000", s)
	}
	return n, nil
}

func uuidParam(name, s string) (*uuid.UUID, error) {
	if s == "" {
		return nil, nil
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return nil, badParam(name, "%s=%q is not an id; ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e", name, s)
	}
	return &id, nil
}

// failJSON answers err as JSON with the status that fits it.
func (h *Handler) failJSON(w http.ResponseWriter, _ *http.Request, err error) {
	status, body := h.apiErrorOf(err)
	writeJSON(w, status, body)
}

// writeError answers an error that is about no one field.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiErrorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
