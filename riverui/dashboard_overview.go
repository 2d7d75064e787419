package riverui

import (
	"net/http"
	"net/url"
	"time"

	"github.com/tributary-go/tributary/workflow"
)

// overviewWindow is the window of the overview's recent counts and
// failures.
const overviewWindow = time.Hour

// overviewFailures is how many of the window's failures the overview
// lists.
const overviewFailures = 20

// overviewView is the overview page: what is in flight, what the last hour
// brought, and what failed in it.
type overviewView struct {
	chrome
	InFlight     []statusCount
	InFlightSum  int64
	Recent       []statusCount
	RecentSum    int64
	RecentCapped bool
	MaxRecent    int
	Failed       int64
	Failures     []runRow
	// FailedLink lists the failed runs created in the window (the runs
	// page filters by creation time).
	FailedLink string
}

// statusCount is one status's count, linked to the runs page's listing of
// it.
type statusCount struct {
	Status workflow.Status
	Count  int64
	Link   string
}

func (h *Handler) overviewPage(w http.ResponseWriter, r *http.Request) {
	v := &overviewView{chrome: h.chrome(r, "Overview", "overview"), MaxRecent: workflow.MaxRecentCounted}
	since := v.Now.Add(-overviewWindow)
	from := since.UTC().Format(runSearchLayout)
	status, err := http.StatusOK, func() error {
		counts, err := h.wf.CountRuns(r.Context(), since)
		if err != nil {
			return err
		}
		for _, s := range runStatuses {
			if !s.Finished() {
				n := counts.InFlight[s]
				v.InFlight = append(v.InFlight, statusCount{Status: s, Count: n, Link: h.runsQuery(url.Values{"status": {string(s)}})})
				v.InFlightSum += n
			}
			n := counts.Recent[s]
			v.Recent = append(v.Recent, statusCount{Status: s, Count: n, Link: h.runsQuery(url.Values{"status": {string(s)}, "from": {from}})})
			v.RecentSum += n
		}
		v.RecentCapped, v.Failed = counts.RecentCapped, counts.Failed
		v.FailedLink = h.runsQuery(url.Values{"status": {string(workflow.StatusFailed)}, "from": {from}})

		failures, err := h.wf.ListFailures(r.Context(), since, overviewFailures)
		if err != nil {
			return err
		}
		for _, run := range failures {
			v.Failures = append(v.Failures, runRow{Run: run, Duration: runDuration(run)})
		}
		v.live(r, v.InFlightSum > 0)
		return nil
	}()
	if err != nil {
		status, v.Error = h.statusOf(err)
	}
	h.render(w, r, status, overviewTemplate, v)
}
