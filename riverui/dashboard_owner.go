package riverui

import (
	"net/http"
	"net/url"
	"time"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// ownerLimit is how many schedules and recent runs an owner's page lists;
// links to the filtered lists show the rest.
const ownerLimit = 20

// ownerView is the page of one owner or tenant (GET /tenants/{name}): the
// schedules it owns and its recent runs, the runs started for it as their
// tenant (a schedule's runs have its owner as tenant unless it names
// another).
type ownerView struct {
	chrome
	Name      string
	Schedules []scheduleRow
	Runs      []ownerRun
	// MoreSchedules and MoreRuns link the whole lists when a page is full;
	// TenantsLink lists the tenant's standing (limits, rates, held runs).
	MoreSchedules, MoreRuns, TenantsLink string
	// BulkPath is where its pause all and resume all forms post; BulkDone
	// says what one did; Confirm, when set, asks to confirm one.
	BulkPath, BulkDone string
	Confirm            *ownerConfirm
	// Path is the page's own (a confirm form's Cancel).
	Path string
}

// ownerRun is a run in a short list: the owner's page, the search page.
type ownerRun struct {
	Run      *workflow.Run
	Duration string
}

func ownerRuns(runs []*workflow.Run) []ownerRun {
	out := make([]ownerRun, 0, len(runs))
	for _, run := range runs {
		out = append(out, ownerRun{Run: run, Duration: runDuration(run)})
	}
	return out
}

// scheduleRows are the rows of list in a schedules table at now.
func (h *Handler) scheduleRows(list []*schedule.Schedule, now time.Time) []scheduleRow {
	rows := make([]scheduleRow, 0, len(list))
	for _, s := range list {
		desc, loc := describe(s)
		row := scheduleRow{S: s, Describe: desc, Zone: loc.String(), Next: momentIn(s.NextFireAt, loc, now), State: state(s)}
		if s.Paused {
			row.Next = nil
		}
		rows = append(rows, row)
	}
	return rows
}

// ownerPath is the path of the page of owner or tenant name.
func ownerPath(name string) string { return "/tenants/" + url.PathEscape(name) }

func (h *Handler) ownerPage(w http.ResponseWriter, r *http.Request) {
	h.showOwner(w, r, http.StatusOK, "", "")
}

// showOwner renders the page of the owner r's path names with status,
// errMsg, and bulkDone (see ownerView.BulkDone).
func (h *Handler) showOwner(w http.ResponseWriter, r *http.Request, status int, errMsg, bulkDone string) {
	h.renderOwner(w, r, status, errMsg, bulkDone, nil)
}

// showOwnerConfirm shows the owner's page with the confirm form of a bulk
// action on its schedules (bulkOwnerForm).
func (h *Handler) showOwnerConfirm(w http.ResponseWriter, r *http.Request, confirm *ownerConfirm) {
	h.renderOwner(w, r, http.StatusOK, "", "", confirm)
}

func (h *Handler) renderOwner(w http.ResponseWriter, r *http.Request, status int, errMsg, bulkDone string, confirm *ownerConfirm) {
	name := r.PathValue("name")
	v := &ownerView{chrome: h.chrome(r, name, "tenants"), Name: name, BulkDone: bulkDone, Confirm: confirm}
	v.Path = h.prefix + ownerPath(name)
	v.BulkPath = v.Path + "/bulk"
	v.TenantsLink = h.prefix + "/tenants?" + url.Values{"tenant": {name}}.Encode()
	err := func() error {
		ctx := r.Context()
		if h.sc != nil {
			list, err := h.sc.List(ctx, &schedule.ListParams{Owner: name, Limit: ownerLimit})
			if err != nil {
				return err
			}
			v.Schedules = h.scheduleRows(list, v.Now)
			if len(list) == ownerLimit {
				v.MoreSchedules = h.prefix + "/schedules?" + url.Values{"owner": {name}}.Encode()
			}
		}
		runs, err := h.wf.ListRuns(ctx, &workflow.ListParams{Tenant: name, Limit: ownerLimit})
		if err != nil {
			return err
		}
		v.Runs = ownerRuns(runs)
		if len(runs) == ownerLimit {
			v.MoreRuns = h.runsQuery(url.Values{"tenant": {name}})
		}
		live := false
		for _, run := range runs {
			live = live || !run.Status.Finished()
		}
		v.live(r, live)
		return nil
	}()
	if err != nil {
		status, v.Error = h.statusOf(err)
	} else if errMsg != "" {
		v.Error = errMsg
	}
	h.render(w, r, status, ownerTemplate, v)
}
