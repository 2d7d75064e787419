package riverui

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// searchLimit is how many schedules, and how many runs of each kind of
// match, the search page lists.
const searchLimit = 20

// searchView is the search page: what the layout's search box found.
type searchView struct {
	chrome
	Q string
	// Owner is Q when schedules are owned by it, Tenant when runs are
	// started for it: both link the owner's page.
	Owner, Tenant bool
	Schedules     []scheduleRow
	Runs          []ownerRun
	// NameLink lists the schedules whose name contains Q; "" without a
	// schedule client.
	NameLink string
}

// searchPage serves GET /search?q=. Every lookup goes through an index and
// reads at most searchLimit rows:
//   - a whole run id or schedule id jumps to its page;
//   - owner/key names a keyed schedule (the owner's and key's unique index);
//   - otherwise it lists the schedules q owns (schedules_owner), the
//     schedule with key q and no owner, and the runs whose id starts with q
//     (the primary key: the runs below the prefix's upper bound, newest
//     first), whose idempotency key is q, or whose tenant is q.
//
// A schedule's name is not indexed, so it is not searched here: the page
// links the schedules page filtered by it (name=q), which reads schedules
// newest first until it has a page (NameLink).
func (h *Handler) searchPage(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	v := &searchView{chrome: h.chrome(r, "Search", ""), Q: q}
	if q == "" {
		h.render(w, r, http.StatusOK, searchTemplate, v)
		return
	}
	v.Title = "Search: " + q
	if h.sc != nil {
		v.NameLink = h.prefix + "/schedules?" + url.Values{"name": {q}}.Encode()
	}
	to, err := h.search(r, v)
	switch {
	case err != nil:
		status, msg := h.statusOf(err)
		v.Error = msg
		h.render(w, r, status, searchTemplate, v)
	case to != "":
		http.Redirect(w, r, h.prefix+to, http.StatusSeeOther)
	default:
		h.render(w, r, http.StatusOK, searchTemplate, v)
	}
}

// search fills v with what q finds, or returns the path of the page q
// names exactly.
func (h *Handler) search(r *http.Request, v *searchView) (string, error) {
	ctx, q := r.Context(), v.Q
	if id, err := uuid.Parse(q); err == nil && len(q) >= 32 {
		run, err := h.wf.GetRun(ctx, id)
		switch {
		case err == nil:
			return "/runs/" + run.ID.String(), nil
		case !errors.Is(err, workflow.ErrNotFound):
			return "", err
		}
		if h.sc != nil {
			s, err := h.sc.Get(ctx, schedule.ByID(id))
			switch {
			case err == nil:
				return refPath(refOf(s), ""), nil
			case !errors.Is(err, schedule.ErrNotFound):
				return "", err
			}
		}
		return "", nil
	}
	if h.sc != nil {
		if i := strings.LastIndex(q, "/"); i >= 0 && i < len(q)-1 { // a key holds no /
			owner, key := q[:i], q[i+1:]
			s, err := h.sc.Get(ctx, schedule.ByKey(owner, key))
			switch {
			case err == nil:
				return refPath(refOf(s), ""), nil
			case !noSchedule(err):
				return "", err
			}
		}
		owned, err := h.sc.List(ctx, &schedule.ListParams{Owner: q, Limit: searchLimit})
		if err != nil {
			return "", err
		}
		v.Owner = len(owned) > 0
		if s, err := h.sc.Get(ctx, schedule.ByKey("", q)); err == nil {
			owned = append(owned, s)
		} else if !noSchedule(err) {
			return "", err
		}
		v.Schedules = h.scheduleRows(owned, v.Now)
	}

	var runs []*workflow.Run
	if lo, hi, ok := idPrefixRange(q); ok {
		below, err := h.wf.ListRuns(ctx, &workflow.ListParams{After: &hi, Limit: searchLimit})
		if err != nil {
			return "", err
		}
		for _, run := range below {
			if run.ID.String() >= lo.String() {
				runs = append(runs, run)
			}
		}
		if run, err := h.wf.GetRun(ctx, hi); err == nil { // the bound itself, all f
			runs = append(runs, run)
		}
	}
	byKey, err := h.wf.ListRuns(ctx, &workflow.ListParams{IdempotencyKey: q, Limit: searchLimit})
	if err != nil {
		return "", err
	}
	var byTenant []*workflow.Run
	if workflow.CheckTenant("q", q) == nil { // else no run has it
		if byTenant, err = h.wf.ListRuns(ctx, &workflow.ListParams{Tenant: q, Limit: searchLimit}); err != nil {
			return "", err
		}
	}
	v.Tenant = len(byTenant) > 0
	runs = append(append(runs, byKey...), byTenant...)
	slices.SortFunc(runs, func(a, b *workflow.Run) int { return strings.Compare(b.ID.String(), a.ID.String()) })
	runs = slices.CompactFunc(runs, func(a, b *workflow.Run) bool { return a.ID == b.ID })
	v.Runs = ownerRuns(runs)
	return "", nil
}

// idPrefixRange reads q as the start of a run id, at least 4 hex digits
// (dashes where an id has them), and returns the lowest and highest ids
// that start with it.
func idPrefixRange(q string) (lo, hi uuid.UUID, ok bool) {
	const template = "00000000-0000-0000-0000-000000000000"
	q = strings.ToLower(q)
	if len(q) < 4 || len(q) >= len(template) {
		return lo, hi, false
	}
	for i, c := range q {
		if template[i] == '-' {
			if c != '-' {
				return lo, hi, false
			}
		} else if !strings.ContainsRune("0123456789abcdef", c) {
			return lo, hi, false
		}
	}
	lo, errLo := uuid.Parse(q + template[len(q):])
	hi, errHi := uuid.Parse(q + strings.ReplaceAll(template[len(q):], "0", "f"))
	return lo, hi, errLo == nil && errHi == nil
}

// noSchedule reports whether err says that no schedule has a ref: none
// does, or the ref is not one a schedule can have (a key with a space).
func noSchedule(err error) bool {
	var invalid *schedule.ValidationError
	return errors.Is(err, schedule.ErrNotFound) || errors.As(err, &invalid)
}
