package riverui

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/durfmt"
	"github.com/tributary-go/tributary/internal/runmeta"
	"github.com/tributary-go/tributary/internal/wfruntime"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// nominalLayout is the layout of schedule.Occurrence.Nominal.
const nominalLayout = "2006-01-02T15:04:05"

// mountDashboard mounts the dashboard's pages, its form actions and the
// login page on mux under the prefix. Unknown pages and wrong methods are
// answered with an HTML page.
func (h *Handler) mountDashboard(outer *http.ServeMux) {
	p := h.prefix
	run := func(fn idHandler) http.Handler { return h.byID(fn, h.failPage) }
	sched := func(fn refHandler) http.Handler { return h.byRef(fn, h.failPage) }

	mux := http.NewServeMux()
	mux.HandleFunc("GET "+p+"/{$}", h.overviewPage)
	mux.HandleFunc("GET "+p+"/schedules", h.schedulesPage)
	mux.HandleFunc("GET "+p+"/overview", func(w http.ResponseWriter, r *http.Request) {
		to := p + "/"
		if r.URL.RawQuery != "" {
			to += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, to, http.StatusMovedPermanently)
	})
	mux.Handle("GET "+p+"/schedules/{id}", sched(func(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
		return h.showSchedule(w, r, ref, http.StatusOK, "")
	}))
	mux.Handle("GET "+p+"/schedules/{id}/edit", sched(func(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
		return h.showEdit(w, r, ref, http.StatusOK, "")
	}))
	mux.Handle("GET "+p+"/schedules/{id}/delete", sched(h.deletePage))
	mux.Handle("POST "+p+"/schedules/{id}/edit", h.scheduleForm(h.editForm, h.showEdit))
	mux.Handle("POST "+p+"/schedules/{id}/pause", h.scheduleForm(h.pauseForm, h.showSchedule))
	mux.Handle("POST "+p+"/schedules/{id}/resume", h.scheduleForm(h.resumeForm, h.showSchedule))
	mux.Handle("POST "+p+"/schedules/{id}/trigger", h.scheduleForm(h.triggerForm, h.showSchedule))
	mux.Handle("POST "+p+"/schedules/{id}/backfill", h.scheduleForm(h.backfillForm, h.showSchedule))
	mux.Handle("POST "+p+"/schedules/{id}/delete", h.scheduleForm(h.deleteForm, h.showSchedule))
	mux.HandleFunc("GET "+p+"/runs", h.runsPage)
	mux.HandleFunc("POST "+p+"/runs/bulk", h.bulkRunsForm)
	mux.HandleFunc("GET "+p+"/tenants", h.tenantsPage)
	mux.HandleFunc("GET "+p+"/tenants/{name}", h.ownerPage)
	mux.HandleFunc("POST "+p+"/tenants/{name}/bulk", h.bulkOwnerForm)
	mux.HandleFunc("GET "+p+"/search", h.searchPage)
	mux.HandleFunc("POST "+p+"/tenants/limit", h.tenantLimitForm)
	mux.HandleFunc("POST "+p+"/tenants/rate", h.tenantRateForm)
	mux.HandleFunc("GET "+p+"/calendars", h.calendarsPage)
	mux.HandleFunc("POST "+p+"/calendars", h.createCalendarForm)
	mux.Handle("GET "+p+"/calendars/{name}", h.calendarPageRoute(h.calendarPage))
	mux.Handle("POST "+p+"/calendars/{name}/dates", h.calendarPageRoute(h.addDatesForm))
	mux.Handle("POST "+p+"/calendars/{name}/remove", h.calendarPageRoute(h.removeDateForm))
	mux.Handle("POST "+p+"/calendars/{name}/delete", h.calendarPageRoute(h.deleteCalendarForm))
	mux.HandleFunc("GET "+p+"/grants", h.grantsPage)
	mux.HandleFunc("POST "+p+"/grants", h.createGrantForm)
	mux.Handle("GET "+p+"/grants/{id}", h.grantPageRoute(h.grantPage))
	mux.Handle("POST "+p+"/grants/{id}/revoke", h.grantPageRoute(h.revokeGrantForm))
	mux.HandleFunc("GET "+p+"/schedules/new", h.newSchedulePage)
	mux.HandleFunc("POST "+p+"/schedules/new", h.createForm)
	mux.HandleFunc("GET "+p+"/assets/refresh.js", serveRefreshJS)
	mux.Handle("GET "+p+"/runs/{id}", run(func(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
		return h.showRun(w, r, id, http.StatusOK, "")
	}))
	mux.Handle("POST "+p+"/runs/{id}/cancel", h.runForm(withContext(h.wf.Cancel), "cancelled"))
	mux.Handle("POST "+p+"/runs/{id}/retry", h.runForm(withContext(h.wf.Retry), "retried"))
	mux.Handle("POST "+p+"/runs/{id}/signal", h.runForm(h.signalForm, "signalled"))
	mux.Handle("POST "+p+"/runs/{id}/fork", h.forkForm())
	mux.HandleFunc("GET "+p+"/login", h.loginPage)
	mux.HandleFunc("POST "+p+"/login", h.login)
	mux.HandleFunc("POST "+p+"/logout", h.logout)

	outer.Handle(p+"/", withFallback(mux, func(w http.ResponseWriter, r *http.Request, allowed []string) {
		if len(allowed) > 0 {
			h.errorPage(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s is not allowed here", r.Method, r.URL.Path))
			return
		}
		h.errorPage(w, r, http.StatusNotFound, fmt.Sprintf("there is no page at %s", r.URL.Path))
	}))
}

// pager links a listing's pages.
type pager struct {
	First string
	Next  string
}

// pagerOf links the first page (when q has after=) and the next one (when
// the page is full: it continues after last) of the listing at path.
func (h *Handler) pagerOf(path string, q url.Values, full bool, last uuid.UUID) pager {
	link := func(change func(url.Values)) string {
		v := url.Values{}
		for k, vs := range q {
			if k != "notice" && k != "run" && k != "after" {
				v[k] = vs
			}
		}
		change(v)
		if len(v) == 0 {
			return h.prefix + path
		}
		return h.prefix + path + "?" + v.Encode()
	}
	var p pager
	if q.Get("after") != "" {
		p.First = link(func(url.Values) {})
	}
	if full {
		p.Next = link(func(v url.Values) { v.Set("after", last.String()) })
	}
	return p
}

// schedulesView is the schedules page.
type schedulesView struct {
	chrome
	Enabled  bool
	Filtered bool
	Name     string // the schedules whose name contains it, in any case
	Owner    string
	Workflow string
	Paused   string // "", "yes" or "no"
	Calendar string // the schedules that exclude this calendar; "" for any
	Types    []string
	Rows     []scheduleRow
	Pager    pager
}

type scheduleRow struct {
	S        *schedule.Schedule
	Describe string
	Zone     string
	Next     *moment
	State    string
}

func (h *Handler) schedulesPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := &schedulesView{
		chrome:  h.chrome(r, "Schedules", "schedules"),
		Enabled: h.sc != nil, Name: q.Get("name"), Owner: q.Get("owner"), Workflow: q.Get("workflow"), Calendar: q.Get("calendar"),
		Types: h.wf.Types(),
	}
	switch q.Get("paused") {
	case "yes", "true":
		v.Paused = "yes"
	case "no", "false":
		v.Paused = "no"
	}
	v.Filtered = v.Name != "" || v.Owner != "" || v.Workflow != "" || v.Paused != "" || v.Calendar != ""
	if !v.Enabled {
		h.render(w, r, http.StatusOK, schedulesTemplate, v)
		return
	}
	status, err := http.StatusOK, func() error {
		params, err := scheduleListParams(r)
		if err != nil {
			return err
		}
		list, err := h.sc.List(r.Context(), params)
		if err != nil {
			return err
		}
		v.Rows = h.scheduleRows(list, v.Now)
		if n := len(list); n > 0 {
			v.Pager = h.pagerOf("/schedules", q, n == params.Limit, list[n-1].ID)
		} else {
			v.Pager = h.pagerOf("/schedules", q, false, uuid.Nil)
		}
		return nil
	}()
	if err != nil {
		status, v.Error = h.statusOf(err)
	}
	h.render(w, r, status, schedulesTemplate, v)
}

// overlapPolicies are the overlap policies, as the forms list them.
var overlapPolicies = []schedule.OverlapPolicy{schedule.OverlapSkip, schedule.OverlapAllow, schedule.OverlapQueue, schedule.OverlapReplace}

// describe describes a schedule's cron expression and returns its zone.
func describe(s *schedule.Schedule) (string, *time.Location) {
	spec, err := s.Spec()
	if err != nil {
		return s.Cron, time.UTC
	}
	return spec.Describe(), spec.Location()
}

// describeCatchUp says what a slot the scheduler finds late (after
// downtime, say) does under policy and window, as package schedule's
// decideSlot does it.
func describeCatchUp(policy schedule.CatchUpPolicy, window time.Duration) string {
	within := fmt.Sprintf("a slot found late still runs if it is at most %s past its time", durfmt.Human(window))
	switch {
	case policy == schedule.CatchUpLatest && window <= 0:
		return "only the most recent missed slot runs, once; older missed slots are recorded as skipped (missed)"
	case policy == schedule.CatchUpLatest:
		return within + "; beyond that, only the most recent missed slot runs, once, and older ones are recorded as skipped (missed)"
	case window <= 0:
		return "a slot found late does not run: it is recorded as skipped (missed), and the schedule goes on from its next slot"
	}
	return within + " (each such slot once, oldest first); a later one is recorded as skipped (missed)"
}

func state(s *schedule.Schedule) string {
	if s.Paused {
		return "paused"
	}
	return "active"
}

// scheduleView is the page of a schedule.
type scheduleView struct {
	chrome
	S        *schedule.Schedule
	State    string
	Describe string
	Zone     string
	// CatchUp says what a slot found late does, as a sentence
	// (describeCatchUp).
	CatchUp string
	// DST says the schedule's DST policy when it is not the default (gap
	// jump, fold first), and "" when it is.
	DST string
	// OnExcluded says what a slot on a date of the schedule's calendars
	// does, when it has calendars.
	OnExcluded string
	// Retry says the schedule's retry policy in words
	// (workflow.RetryPolicy.String), "" for none.
	Retry        string
	Input        string
	Grant        *schedule.Grant
	GrantExpires *moment
	// GrantWarning says, when the schedule's grant skips its next slot,
	// why and from when (grantWarning).
	GrantWarning string
	PausedAt     *moment
	StartAt      *moment
	EndAt        *moment
	NextFire     *moment
	LastFire     *moment
	Next         []fireTime
	Ledger       []ledgerRow
	Pager        pager
	// Overlaps are the overlap policies a backfill may use instead of
	// buffer (all, one after the other); MaxBackfill is how many slots one
	// backfill may start.
	Overlaps    []schedule.OverlapPolicy
	MaxBackfill int
	// The backfill form as posted, when it failed.
	BackfillFrom    string
	BackfillTo      string
	BackfillOverlap string
	// BackfillRerun is the form's "also run slots skipped before", as typed.
	BackfillRerun bool
	// BackfillOpen unfolds the backfill form: it was posted and failed.
	BackfillOpen bool
	// NoWorker is the warning shown when no live client serves the
	// schedule's workflow type (the worker registry): its runs wait.
	NoWorker string
}

// fireTime is one of a schedule's next fire times; a skipped one is a
// slot the schedule's DST policy or one of its calendars records as
// skipped instead of running it. Excluded names the excluded date and its
// calendar of a slot skipped or moved to the next business day. Grant is
// the skip reason of a slot the schedule's grant does not allow, as it is
// now ("grant expired").
type fireTime struct {
	At       *moment
	Nominal  string
	Shifted  bool
	Skipped  bool
	Excluded string
	Note     string
	Grant    string
}

// ledgerRow is a run in a schedule's ledger.
type ledgerRow struct {
	Run       *workflow.Run
	Slot      *moment
	Nominal   string // the slot's wall time, when it is not the run's
	DSTNote   string
	Triggered bool
	Queued    bool
	Duration  string
	// Held says why a held run waits; "" for a run not held.
	Held string
}

// slotOf is what package schedule stored in run's metadata about its slot
// (package runmeta); metadata that does not decode has no slot.
func slotOf(run *workflow.Run) runmeta.Meta { return runmeta.Decode(run.Metadata) }

// showSchedule renders the page of the schedule ref names with status and
// errMsg. When it returns an error, it has written nothing.
func (h *Handler) showSchedule(w http.ResponseWriter, r *http.Request, ref schedule.Ref, status int, errMsg string) error {
	if h.sc == nil {
		return errNoSchedules
	}
	ctx := r.Context()
	s, err := h.sc.Get(ctx, ref)
	if err != nil {
		return err
	}
	id := s.ID
	v := &scheduleView{chrome: h.chrome(r, s.Name, "schedules"), S: s, State: state(s), Input: prettyJSON(s.Input)}
	v.Overlaps, v.MaxBackfill = overlapPolicies, schedule.MaxBackfill
	v.Error = errMsg
	served, err := h.wf.TypeServed(ctx, s.Workflow)
	if err != nil {
		return err
	}
	if !served {
		v.NoWorker = wfruntime.NoWorkerWarning(s.Workflow)
	}
	if string(s.Input) == "null" {
		v.Input = ""
	}
	var loc *time.Location
	v.Describe, loc = describe(s)
	v.Zone = loc.String()
	v.DST = s.DescribeDST()
	if s.Retry != nil && !s.Retry.IsZero() {
		v.Retry = s.Retry.String()
	}
	v.CatchUp = describeCatchUp(s.CatchUp, s.CatchUpWindow)
	if len(s.Calendars) > 0 {
		v.OnExcluded = describeOnExcluded(s.OnExcluded)
	}
	now := v.Now
	v.PausedAt, v.StartAt, v.EndAt = momentIn(s.PausedAt, loc, now), momentIn(s.StartAt, loc, now), momentIn(s.EndAt, loc, now)
	v.LastFire = momentIn(s.LastFireAt, loc, now)
	if s.GrantID != nil {
		g, err := h.sc.GetGrant(ctx, *s.GrantID)
		switch {
		case errors.Is(err, schedule.ErrGrantNotFound): // g is nil: it skips every slot
		case err != nil:
			return err
		default:
			v.Grant, v.GrantExpires = g, momentIn(g.ExpiresAt, time.UTC, now)
		}
		v.GrantWarning = grantWarning(v.Grant, s, loc, now)
	}
	if !s.Paused {
		v.NextFire = momentIn(s.NextFireAt, loc, now)
		occs, err := h.sc.Next(ctx, schedule.ByID(id), nextFireTimes)
		if err != nil {
			return err
		}
		for _, o := range occs {
			ft := fireTime{At: momentIn(&o.At, loc, now), Nominal: o.Nominal, Shifted: o.Shifted, Skipped: o.Skipped, Excluded: o.Excluded, Note: o.Note}
			var ge *schedule.GrantError
			if s.GrantID != nil && !o.Skipped && errors.As(v.Grant.Check(s.Workflow, o.At), &ge) {
				ft.Grant = ge.Reason
			}
			v.Next = append(v.Next, ft)
		}
	}

	params, err := runListParams(r, false)
	if err != nil {
		return err
	}
	runs, err := h.sc.History(ctx, schedule.ByID(id), params)
	if err != nil {
		return err
	}
	held, err := wire.HeldReasons(ctx, h.wf, runs)
	if err != nil {
		return err
	}
	live := false
	for _, run := range runs {
		meta := slotOf(run)
		row := ledgerRow{Run: run, Slot: momentIn(run.FireAt, loc, now), DSTNote: meta.DSTNote, Triggered: meta.Trigger, Queued: meta.Queued, Duration: runDuration(run), Held: held[run.ID]}
		if run.FireAt != nil && meta.Nominal != "" && meta.Nominal != run.FireAt.In(loc).Format(nominalLayout) {
			row.Nominal = meta.Nominal
		}
		v.Ledger = append(v.Ledger, row)
		live = live || !run.Status.Finished()
	}
	v.live(r, live)
	last := uuid.Nil
	if n := len(runs); n > 0 {
		last = runs[n-1].ID
	}
	v.Pager = h.pagerOf("/schedules/"+refSegment(ref), r.URL.Query(), len(runs) > 0 && len(runs) == params.Limit, last)
	if r.Method == http.MethodPost {
		v.BackfillFrom, v.BackfillTo = r.PostFormValue("from"), r.PostFormValue("to")
		v.BackfillOverlap = r.PostFormValue("overlap")
		v.BackfillRerun = r.PostFormValue("rerun_skipped") != ""
		v.BackfillOpen = strings.HasSuffix(r.URL.Path, "/backfill")
	}
	h.render(w, r, status, scheduleTemplate, v)
	return nil
}

// deleteView is the page that confirms deleting a schedule.
type deleteView struct {
	chrome
	S *schedule.Schedule
}

func (h *Handler) deletePage(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
	s, err := h.sc.Get(r.Context(), ref)
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, deleteScheduleTemplate, &deleteView{chrome: h.chrome(r, "Delete "+s.Name, "schedules"), S: s})
	return nil
}
