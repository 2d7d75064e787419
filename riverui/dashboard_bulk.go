package riverui

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/workflow"
)

// The dashboard's bulk actions: the runs page's "Bulk action" form acts on
// the runs its filters match (a first POST counts, a second confirms), the
// owner page's buttons pause or resume all the owner's schedules. They
// call the API's code (runBulk, scheduleBulk).

// runFilterNames are the runs page's filters, carried by the bulk form.
var runFilterNames = []string{"type", "status", "tenant", "schedule", "q", "from", "to"}

// bulkView is the runs page's bulk action panel after a POST: the count to
// confirm, or what was done.
type bulkView struct {
	Action   string
	FromStep string
	// Filter are the runs page's filters, sent again with the confirm.
	Filter url.Values
	// Count says what the action would do, Confirm offers to do it.
	Count   string
	Confirm bool
	// Done says what it did; Left, why runs were left as they were.
	Done string
	Left []string
	// Stopped is the error of an action that stopped midway; Changed are
	// the runs it changed before.
	Stopped string
	Changed []uuid.UUID
	Error   string
}

// bulkRunsForm serves POST /runs/bulk: without confirm=yes it counts the
// runs the filters match (a dry run) and shows what the action would do,
// with a Confirm button; with it, it acts and shows what it did. The runs
// page is shown again, with the filters.
func (h *Handler) bulkRunsForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		h.errorPage(w, r, http.StatusBadRequest, err.Error())
		return
	}
	filter := url.Values{}
	for _, name := range runFilterNames {
		if v := strings.TrimSpace(r.PostForm.Get(name)); v != "" {
			filter.Set(name, v)
		}
	}
	r.URL.RawQuery = filter.Encode() // the runs page reads its filters from the query
	b := &bulkView{Action: r.PostForm.Get("action"), Filter: filter}
	if b.Action == string(workflow.BulkFork) {
		b.FromStep = strings.TrimSpace(r.PostForm.Get("from_step"))
	}
	status := http.StatusOK
	err := func() error {
		action := workflow.BulkAction(b.Action)
		if err := checkBulkAction(action, b.FromStep); err != nil {
			return err
		}
		p, err := bulkParamsOf(r)
		if err != nil {
			return err
		}
		p.DryRun = r.PostForm.Get("confirm") != "yes"
		res, err := h.runBulk(r.Context(), action, b.FromStep, p)
		if err != nil && res != nil && res.Batches > 0 {
			_, msg := h.statusOf(err)
			b.Stopped, b.Changed = msg, res.Changed
			b.Done, b.Left = bulkDone(res)
			return nil
		}
		if err != nil {
			return err
		}
		if p.DryRun {
			b.Count, b.Confirm = bulkCount(res, describeFilter(filter)), res.Eligible > 0
		} else {
			b.Done, b.Left = bulkDone(res)
		}
		return nil
	}()
	if err != nil {
		status, b.Error = h.statusOf(err)
	}
	h.showRuns(w, r, status, b)
}

// bulkParamsOf are the bulk parameters of the runs page's filters in r's
// query: those of its listing and its search (metadata, idempotency key,
// creation time). A search for one run id is refused.
func bulkParamsOf(r *http.Request) (*workflow.BulkParams, error) {
	params, err := runListParams(r, true)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	search, err := parseRunSearch(strings.TrimSpace(q.Get("q")), strings.TrimSpace(q.Get("from")), strings.TrimSpace(q.Get("to")))
	if err != nil {
		return nil, err
	}
	if search.id != nil {
		return nil, badRequest("the search names one run; a bulk action acts on the runs that filters match: act on this run from its page")
	}
	search.apply(params)
	params.Limit = 0
	return &workflow.BulkParams{Filter: *params}, nil
}

// describeFilter says which runs filter selects: `type "send_report",
// status failed`, or "all runs".
func describeFilter(filter url.Values) string {
	labels := map[string]string{"type": "type", "status": "status", "tenant": "tenant", "schedule": "schedule", "q": "search", "from": "created from", "to": "created before"}
	var parts []string
	for _, name := range runFilterNames {
		if v := filter.Get(name); v != "" {
			if name == "status" {
				parts = append(parts, "status "+v)
			} else {
				parts = append(parts, fmt.Sprintf("%s %q", labels[name], v))
			}
		}
	}
	if len(parts) == 0 {
		return "all runs"
	}
	return strings.Join(parts, ", ")
}

// bulkCount says what a dry run counted: "This will retry 12 of 14 runs
// matching status failed; 2 left as they are (completed 2)."
func bulkCount(res *workflow.BulkResult, filter string) string {
	if res.Matched == 0 {
		return fmt.Sprintf("No run matches %s: nothing to %s.", filter, res.Action)
	}
	text := fmt.Sprintf("This will %s %d of %d runs matching %s", res.Action, res.Eligible, res.Matched, filter)
	if res.Action == workflow.BulkFork {
		text += fmt.Sprintf(", from step %q", res.FromStep)
	}
	if res.Eligible == 0 {
		text = fmt.Sprintf("Nothing to %s: none of the %d runs matching %s can be", res.Action, res.Matched, filter)
	}
	if left := res.Matched - res.Eligible; left > 0 {
		text += fmt.Sprintf("; %d left as they are (%s)", left, leftText(res.Left()))
	}
	return text + "."
}

// leftText is counts as "completed 2, failed 1".
func leftText(counts []workflow.BulkCount) string {
	parts := make([]string, len(counts))
	for i, c := range counts {
		parts[i] = fmt.Sprintf("%s %d", c.Why, c.N)
	}
	return strings.Join(parts, ", ")
}

// bulkPast is what a bulk action did, for messages.
var bulkPast = map[workflow.BulkAction]string{workflow.BulkCancel: "Cancelled", workflow.BulkRetry: "Retried", workflow.BulkFork: "Forked"}

// bulkDone says what a bulk action did, and why it left runs as they
// were: "Retried 12 runs; 2 left as they were.", ["already finished 2"].
func bulkDone(res *workflow.BulkResult) (string, []string) {
	text := fmt.Sprintf("%s %d runs", bulkPast[res.Action], len(res.Changed))
	if res.Action == workflow.BulkFork {
		text += fmt.Sprintf(" from step %q", res.FromStep)
	}
	if len(res.Skipped) == 0 {
		return text + ".", nil
	}
	var left []string
	for _, c := range res.SkippedByReason() {
		left = append(left, fmt.Sprintf("%s: %d", c.Why, c.N))
	}
	return fmt.Sprintf("%s; %d left as they were:", text, len(res.Skipped)), left
}

// bulkOwnerForm serves POST /tenants/{name}/bulk, action=pause or resume.
// Without confirm=yes it changes nothing: it counts the owner's schedules
// the action would change and shows the owner's page with a confirm form
// (as the runs page's bulk actions do), since one click would otherwise
// pause every schedule of a tenant, whose slots are then skipped. With
// confirm=yes it pauses (with note) or resumes every schedule of the
// owner, and shows the owner's page again with what it did.
func (h *Handler) bulkOwnerForm(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := parseForm(r); err != nil {
		h.errorPage(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if h.sc == nil {
		status, msg := h.statusOf(errNoSchedules)
		h.showOwner(w, r, status, msg, "")
		return
	}
	action := r.PostForm.Get("action")
	if action != "pause" && action != "resume" {
		h.showOwner(w, r, http.StatusBadRequest, fmt.Sprintf("%q is not pause or resume", action), "")
		return
	}
	note := strings.TrimSpace(r.PostForm.Get("note"))
	if r.PostForm.Get("confirm") != "yes" {
		count, err := h.scheduleBulk(r.Context(), action, name, note, "", true)
		if err != nil {
			status, msg := h.statusOf(err)
			h.showOwner(w, r, status, msg, "")
			return
		}
		h.showOwnerConfirm(w, r, ownerConfirmOf(count, note))
		return
	}
	out, err := h.scheduleBulk(r.Context(), action, name, note, "", false)
	var done string
	if out != nil {
		past := map[string]string{"pause": "Paused", "resume": "Resumed"}[action]
		why := map[string]string{"pause": "paused already", "resume": "not paused"}[action]
		done = fmt.Sprintf("%s %d schedules of %s; %d left as they were (%s).", past, len(out.Changed), name, len(out.Unchanged), why)
	}
	if err != nil {
		status, msg := h.statusOf(err) // done: what a stop midway did
		h.showOwner(w, r, status, msg, done)
		return
	}
	h.showOwner(w, r, http.StatusOK, "", done)
}

// ownerConfirm is the owner page's confirm form of a bulk action on its
// schedules: what it would do, and the fields to send again with
// confirm=yes.
type ownerConfirm struct {
	Action, Note, Text string
	// Eligible is how many schedules the action would change; none: there
	// is nothing to confirm.
	Eligible int
}

// ownerConfirmOf says what a dry run of a bulk action on an owner's
// schedules counted.
func ownerConfirmOf(count *wire.OwnerBulk, note string) *ownerConfirm {
	c := &ownerConfirm{Action: count.Action, Note: note, Eligible: count.Eligible}
	left := count.Schedules - count.Eligible
	switch pause := count.Action == "pause"; {
	case pause && count.Eligible == 0:
		c.Text = fmt.Sprintf("Nothing to pause: all %d of %s's schedules are paused already.", count.Schedules, count.Owner)
	case pause:
		c.Text = fmt.Sprintf("Pause %d of %s's %d schedules (%d paused already)? Their slots are skipped while they are paused.",
			count.Eligible, count.Owner, count.Schedules, left)
		if note != "" {
			c.Text += fmt.Sprintf(" Note: %q.", note)
		}
	case count.Eligible == 0:
		c.Text = fmt.Sprintf("Nothing to resume: none of %s's %d schedules is paused.", count.Owner, count.Schedules)
	default:
		c.Text = fmt.Sprintf("Resume %d of %s's %d schedules (%d not paused)? The slots they missed while paused are skipped.",
			count.Eligible, count.Owner, count.Schedules, left)
	}
	return c
}
