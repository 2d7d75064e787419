package riverui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/durfmt"
	"github.com/tributary-go/tributary/schedule"
)

var (
	//go:embed templates
	templateFS embed.FS

	//go:embed style.css
	styleCSS string

	//go:embed refresh.js
	refreshJS []byte

	// contentSecurityPolicy allows the pages nothing but their own inline
	// stylesheet (by its hash), the script that refreshes a live page
	// (refresh.js, a file of this origin: no inline script), the empty
	// data: icon that keeps browsers from asking for /favicon.ico, and
	// forms posted to this origin: no other resource, no framing.
	contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'sha256-" + sha256Base64(styleCSS) + "'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

	templateFuncs = template.FuncMap{
		"css":      func() template.CSS { return template.CSS(styleCSS) },
		"duration": durfmt.Human,
		"utc":      utcMoment,
		"brief":    brief,
		"shortID":  shortID,
		// schedulePath is the path of a schedule's page (and, with a
		// suffix such as "/edit", of its other pages and actions), as
		// the dashboard links it: see refOf.
		"schedulePath": func(s *schedule.Schedule, suffix string) string { return refPath(refOf(s), suffix) },
		// calendarPath is the path of a calendar's page (and, with a
		// suffix such as "/dates", of its actions).
		"calendarPath": calendarPath,
		// grantPath is the path of a grant's page (and, with a suffix
		// such as "/revoke", of its action).
		"grantPath": grantPath,
		// ownerPath is the path of an owner's or tenant's page.
		"ownerPath": ownerPath,
		// has reports whether list holds s: a checkbox checked.
		"has": func(list []string, s string) bool { return slices.Contains(list, s) },
	}

	schedulesTemplate      = page("schedules.html")
	scheduleTemplate       = page("schedule.html")
	editScheduleTemplate   = page("schedule_edit.html", "schedule_fields.html")
	newScheduleTemplate    = page("schedule_new.html", "schedule_fields.html")
	deleteScheduleTemplate = page("schedule_delete.html")
	runsTemplate           = page("runs.html")
	runTemplate            = page("run.html")
	tenantsTemplate        = page("tenants.html")
	calendarsTemplate      = page("calendars.html")
	calendarTemplate       = page("calendar.html")
	grantsTemplate         = page("grants.html")
	grantTemplate          = page("grant.html")
	overviewTemplate       = page("overview.html")
	searchTemplate         = page("search.html", "run_list.html", "schedule_list.html")
	ownerTemplate          = page("owner.html", "run_list.html", "schedule_list.html")
	loginTemplate          = page("login.html")
	errorTemplate          = page("error.html")
)

// refreshSeconds is how often a live page reloads itself: one that shows
// a run that has not finished.
const refreshSeconds = 5

func sha256Base64(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// page parses a page's template with the layout it fills in and the
// partials it uses.
func page(name string, partials ...string) *template.Template {
	files := []string{"templates/layout.html", "templates/" + name}
	for _, p := range partials {
		files = append(files, "templates/"+p)
	}
	return template.Must(template.New(name).Funcs(templateFuncs).ParseFS(templateFS, files...))
}

// chrome is what every page shows around its content: the navigation, the
// flash notice and the error.
type chrome struct {
	Prefix string
	Title  string
	// Nav is the navigation link of the page: "overview", "schedules",
	// "calendars", "grants", "runs" or "tenants".
	Nav string
	// Notice is the flash notice of the action that led here.
	Notice string
	// NoticeRun is the run the notice links to (a triggered run).
	NoticeRun string
	Error     string
	// SignOut shows the sign-out button: a token is required.
	SignOut bool
	Now     time.Time
	// Refresh is how often, in seconds, the page reloads itself (0:
	// never): a page that shows a live run sets it (see live). The page
	// says so; refresh.js does it, and holds off while the operator edits
	// a form.
	Refresh int
}

// live makes the page of r reload itself every refreshSeconds when it
// shows a run that has not finished. A page answering a POST (a form
// shown again with its error) never does: reloading would lose what the
// operator typed.
func (c *chrome) live(r *http.Request, running bool) {
	if running && r.Method == http.MethodGet {
		c.Refresh = refreshSeconds
	}
}

// notices are the flash notices a page shows for its notice= parameter,
// which an action's redirect sets. Only these texts are ever shown, with at
// most a run id (after "triggered") or counts (after "backfilled"),
// each parsed: a link cannot make the dashboard say anything else.
var notices = map[string]string{
	"paused":        "Schedule paused: no slot fires until it is resumed.",
	"resumed":       "Schedule resumed.",
	"updated":       "Schedule updated. A new cron expression or RRULE, time zone, start or end applies at once; other changes from the next slot.",
	"unchanged":     "Nothing to update: the form matched the schedule.",
	"triggered":     "Triggered a run.",
	"deleted":       "Schedule deleted. Its past runs are kept.",
	"cancelled":     "Run cancelled. A running attempt stops at its next step.",
	"retried":       "Run retried: it runs again from the step that failed.",
	"signalled":     "Signal sent.",
	"forked":        "Run forked: this new run replays the steps before the chosen one from the original's results and runs the rest with today's code.",
	"created":       "Schedule created. Its first slot fires at the next fire time below.",
	"existing":      "Nothing created: this schedule has the key and the spec of the form already.",
	"signed-out":    "Signed out.",
	"limit-set":     "Tenant limit set. A limit raised starts held runs at once; one lowered holds back the next attempts until enough running ones end.",
	"limit-cleared": "The tenant's own limit is removed: the workflow type's limit applies, if it has one.",
	"rate-set":      "Tenant rate set. It applies from the next fetch: the tenant's bucket keeps its tokens and refills at the new rate.",
	"rate-cleared":  "The tenant's own rate is removed: the workflow type's rate applies, if it has one.",

	"calendar-created": "Calendar created. A schedule excludes its dates once the schedule's edit form names it.",
	"dates-added":      "Dates added. The schedules that exclude this calendar have their next slot computed again.",
	"date-removed":     "Date removed. The schedules that exclude this calendar have their next slot computed again.",
	"calendar-deleted": "Calendar deleted.",

	"grant-created": "Grant created. A schedule runs under it once its grant is set to the grant's id (the schedule's Edit page, or grant_id in the API).",
	"grant-revoked": "Grant revoked. From the next slot on, the schedules under it record their slots as skipped (grant revoked); their chains go on.",
}

func (h *Handler) chrome(r *http.Request, title, nav string) chrome {
	c := chrome{Prefix: h.prefix, Title: title, Nav: nav, SignOut: h.auth.enabled(), Now: time.Now()}
	q := r.URL.Query()
	c.Notice = notices[q.Get("notice")]
	switch q.Get("notice") {
	case "triggered":
		if id, err := uuid.Parse(q.Get("run")); err == nil {
			c.NoticeRun = id.String()
		}
	case "backfilled":
		c.Notice = backfillNotice(q)
	}
	return c
}

// backfillNotice is the notice of a backfill, built from the counts its
// redirect carries (backfillParams): what became of each slot of the range,
// and why some were skipped. It is "" for counts backfillForm does not
// write; only known skip reasons are read.
func backfillNotice(q url.Values) string {
	count := func(name string) (int, bool) {
		n, err := strconv.Atoi(q.Get(name))
		return n, err == nil && n >= 0 && n <= schedule.MaxBackfill
	}
	res := &schedule.BackfillResult{}
	for _, f := range []struct {
		name string
		to   *int
	}{{"slots", &res.Slots}, {"started", &res.Started}, {"queued", &res.Queued}, {"existing", &res.Existing}, {"rerun", &res.Rerun}} {
		n, ok := count(f.name)
		if !ok {
			return ""
		}
		*f.to = n
	}
	sum := res.Started + res.Queued + res.Existing
	for _, reason := range backfillSkipReasons {
		if n, ok := count("skipped_" + reason); ok && n > 0 {
			if res.Skipped == nil {
				res.Skipped = map[string]int{}
			}
			res.Skipped[reason] = n
			sum += n
		}
	}
	if sum != res.Slots {
		return ""
	}
	if res.Slots == 0 {
		return "Backfill found no slot in the range."
	}
	return "Backfilled " + res.String() + "."
}

// backfillSkipReasons are the reasons a backfill's notice may name.
var backfillSkipReasons = []string{
	schedule.SkipReasonOverlap, schedule.SkipReasonGrantRevoked, schedule.SkipReasonGrantExpired, schedule.SkipReasonGrantOutOfScope,
}

// backfillParams are the counts backfillNotice reads.
func backfillParams(res *schedule.BackfillResult) url.Values {
	v := url.Values{}
	for name, n := range map[string]int{"slots": res.Slots, "started": res.Started, "queued": res.Queued, "existing": res.Existing, "rerun": res.Rerun} {
		v.Set(name, strconv.Itoa(n))
	}
	for reason, n := range res.Skipped {
		v.Set("skipped_"+reason, strconv.Itoa(n))
	}
	return v
}

// render answers a page. v embeds chrome.
func (h *Handler) render(w http.ResponseWriter, _ *http.Request, status int, t *template.Template, v any) {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		h.logger.Error("riverui: render page", "template", t.Name(), "error", err)
		http.Error(w, "internal error; see the server's log", http.StatusInternalServerError)
		return
	}
	header := w.Header()
	header.Set("Content-Type", "text/html; charset=utf-8")
	header.Set("Cache-Control", "no-store")
	header.Set("Content-Security-Policy", contentSecurityPolicy)
	header.Set("Referrer-Policy", "same-origin")
	header.Set("X-Content-Type-Options", "nosniff")
	header.Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// errorView is the page of an error that left nothing else to show.
type errorView struct{ chrome }

// errorPage answers a page with only the error.
func (h *Handler) errorPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	v := &errorView{chrome: h.chrome(r, http.StatusText(status), "")}
	v.Notice, v.NoticeRun = "", ""
	v.Error = msg
	h.render(w, r, status, errorTemplate, v)
}

// failPage answers err as an error page with the status that fits it.
func (h *Handler) failPage(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := h.statusOf(err)
	h.errorPage(w, r, status, msg)
}

// seeOther sends the browser to the page at path (under the prefix; it may
// have a query, such as a keyed schedule's owner=) with a notice, after an
// action.
func (h *Handler) seeOther(w http.ResponseWriter, r *http.Request, path, notice string, extra url.Values) {
	path, query, _ := strings.Cut(path, "?")
	q, _ := url.ParseQuery(query) // refPath's, well formed
	q.Set("notice", notice)
	for k, v := range extra {
		q[k] = v
	}
	http.Redirect(w, r, h.prefix+path+"?"+q.Encode(), http.StatusSeeOther)
}

// moment is a time shown to an operator: in a zone, and how long ago or how
// soon. Beside the time itself, a far one counts days
// (durfmt.RelativeDays): "Wed 2026-04-22 13:00:00 UTC (in 45d)".
type moment struct {
	ISO  string
	Text string
	Rel  string
}

// momentIn shows t in loc, relative to now; nil for a nil t.
func momentIn(t *time.Time, loc *time.Location, now time.Time) *moment {
	if t == nil || t.IsZero() {
		return nil
	}
	in := t.In(loc)
	return &moment{ISO: in.Format(time.RFC3339), Text: in.Format("Mon 2006-01-02 15:04:05 MST"), Rel: durfmt.RelativeDays(*t, now)}
}

// utcMoment shows a time.Time or *time.Time in UTC, for templates.
func utcMoment(t any, now time.Time) *moment {
	switch t := t.(type) {
	case time.Time:
		return momentIn(&t, time.UTC, now)
	case *time.Time:
		return momentIn(t, time.UTC, now)
	}
	return nil
}

// brief is the first line of an error message, cut to 200 characters, for
// a table cell; the run's page shows it whole.
func brief(msg string) string {
	line, _, cut := strings.Cut(strings.TrimSpace(msg), "\n")
	if r := []rune(line); len(r) > 200 {
		line, cut = string(r[:200]), true
	}
	if cut {
		line += " …"
	}
	return line
}

// shortID shows a run id in a table: "…" and its last 12 digits, the
// random ones (the first ones are the time, alike for runs created
// together). The link and its title hold the whole id.
func shortID(id uuid.UUID) string {
	s := id.String()
	return "…" + s[len(s)-12:]
}

// serveRefreshJS serves the script of live pages (see chrome.Refresh).
func serveRefreshJS(w http.ResponseWriter, _ *http.Request) {
	header := w.Header()
	header.Set("Content-Type", "text/javascript; charset=utf-8")
	header.Set("Cache-Control", "public, max-age=3600")
	header.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(refreshJS)
}

// prettyJSON indents a JSON value for a <pre>; invalid JSON is shown as it
// is.
func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}
