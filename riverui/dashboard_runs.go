package riverui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/workflow"
)

// runsView is the runs page.
type runsView struct {
	chrome
	Filtered bool
	Type     string
	Status   string
	Tenant   string
	Schedule string
	// Q is the search as typed, From and To the creation time range.
	Q    string
	From string
	To   string
	// Searched says what Q was read as: a run id, an idempotency key or
	// metadata.
	Searched string
	// LastHour and LastDay are the From of the time presets.
	LastHour string
	LastDay  string
	Types    []string
	Statuses []workflow.Status
	Rows     []runRow
	Pager    pager
	// Bulk is the bulk action panel after a POST of its form, or nil;
	// BulkForm offers the form (a filtered listing, not one run).
	Bulk     *bulkView
	BulkForm bool
}

type runRow struct {
	Run      *workflow.Run
	Duration string
	// Held says why a held run waits ("acme has 5 of 5 running"); "" for
	// a run not held.
	Held string
}

// runSearchLayout is how the runs page writes a time: a datetime-local
// input's value, in UTC.
const runSearchLayout = "2006-01-02T15:04"

func (h *Handler) runsPage(w http.ResponseWriter, r *http.Request) {
	h.showRuns(w, r, http.StatusOK, nil)
}

// showRuns renders the runs page of the filters in r's query, with status
// and bulk, the bulk action panel (nil for none).
func (h *Handler) showRuns(w http.ResponseWriter, r *http.Request, status int, bulk *bulkView) {
	q := r.URL.Query()
	v := &runsView{
		chrome: h.chrome(r, "Runs", "runs"),
		Type:   q.Get("type"), Status: q.Get("status"), Tenant: q.Get("tenant"), Schedule: q.Get("schedule"),
		Q: strings.TrimSpace(q.Get("q")), From: strings.TrimSpace(q.Get("from")), To: strings.TrimSpace(q.Get("to")),
		Types: h.wf.Types(), Statuses: runStatuses, Bulk: bulk,
	}
	v.LastHour = v.Now.UTC().Add(-time.Hour).Format(runSearchLayout)
	v.LastDay = v.Now.UTC().Add(-24 * time.Hour).Format(runSearchLayout)
	v.Filtered = v.Type != "" || v.Status != "" || v.Tenant != "" || v.Schedule != "" || v.Q != "" || v.From != "" || v.To != ""
	err := func() error {
		params, err := runListParams(r, true)
		if err != nil {
			return err
		}
		search, err := parseRunSearch(v.Q, v.From, v.To)
		if err != nil {
			return err
		}
		v.Searched = search.describe()
		v.BulkForm = v.Filtered && search.id == nil
		var runs []*workflow.Run
		if search.id != nil {
			run, err := h.wf.GetRun(r.Context(), *search.id)
			switch {
			case errors.Is(err, workflow.ErrNotFound):
			case err != nil:
				return err
			default:
				runs = []*workflow.Run{run}
			}
		} else {
			search.apply(params)
			if runs, err = h.wf.ListRuns(r.Context(), params); err != nil {
				return err
			}
		}
		held, err := wire.HeldReasons(r.Context(), h.wf, runs)
		if err != nil {
			return err
		}
		live := false
		for _, run := range runs {
			v.Rows = append(v.Rows, runRow{Run: run, Duration: runDuration(run), Held: held[run.ID]})
			live = live || !run.Status.Finished()
		}
		v.live(r, live)
		last := uuid.Nil
		if n := len(runs); n > 0 {
			last = runs[n-1].ID
		}
		v.Pager = h.pagerOf("/runs", q, search.id == nil && len(runs) > 0 && len(runs) == params.Limit, last)
		return nil
	}()
	if err != nil {
		status, v.Error = h.statusOf(err)
	}
	h.render(w, r, status, runsTemplate, v)
}

// runSearch is the runs page's search box and time range, read.
//
// The search box holds one of:
//   - a run id, which shows that run alone (the other filters do not
//     apply);
//   - key=value terms, separated by spaces, which keep the runs whose
//     metadata has every key with that value: a value that reads as JSON
//     (42, true, null, "quoted text", {"a": 1}) is that JSON value, any
//     other value is text, so n=42 is the number and n="42" the text;
//     quote a value that holds spaces: team="on call";
//   - anything else, or text after "key:", which is an idempotency key
//     (of any workflow type unless the type filter names one).
//
// from and to bound the runs' creation time, [from, to), as UTC wall
// times (what a datetime-local input sends) or RFC 3339 times.
type runSearch struct {
	id       *uuid.UUID
	key      string
	metadata map[string]any
	terms    []string // the metadata terms as typed, for describe
	from, to time.Time
}

// maxSearchTerms bounds the metadata terms of one search.
const maxSearchTerms = 10

func parseRunSearch(q, from, to string) (*runSearch, error) {
	s := &runSearch{}
	var err error
	if from != "" {
		if s.from, err = formTime("from", from, time.UTC); err != nil {
			return nil, err
		}
	}
	if to != "" {
		if s.to, err = formTime("to", to, time.UTC); err != nil {
			return nil, err
		}
	}
	if !s.from.IsZero() && !s.to.IsZero() && !s.to.After(s.from) {
		return nil, badRequest("the time range is empty: to (%s) is not after from (%s); swap them or widen the range", to, from)
	}
	switch {
	case q == "":
	case strings.HasPrefix(q, "key:"):
		s.key = strings.TrimSpace(strings.TrimPrefix(q, "key:"))
		if s.key == "" {
			return nil, badRequest(`write the idempotency key after "key:", like key:order-42`)
		}
	case isRunID(q):
		id, _ := uuid.Parse(q)
		s.id = &id
	case strings.Contains(q, "="):
		terms, err := splitTerms(q)
		if err != nil {
			return nil, err
		}
		if len(terms) > maxSearchTerms {
			return nil, badRequest("the search has %d key=value terms; use at most %d", len(terms), maxSearchTerms)
		}
		s.metadata = map[string]any{}
		for _, term := range terms {
			k, val, ok := strings.Cut(term, "=")
			if !ok || k == "" {
				return nil, badRequest("search term %q is not key=value; a search with = looks for metadata, and every term needs a key and a value (to search for an idempotency key with =, write key:%s)", term, q)
			}
			var decoded any
			if json.Valid([]byte(val)) {
				_ = json.Unmarshal([]byte(val), &decoded) // valid
			} else {
				decoded = val
			}
			s.metadata[k] = decoded
			s.terms = append(s.terms, term)
		}
	default:
		s.key = q
	}
	return s, nil
}

// isRunID reports whether q is a run id, written as uuid.Parse reads it.
func isRunID(q string) bool {
	_, err := uuid.Parse(q)
	return err == nil && len(q) >= 32
}

// splitTerms splits q at spaces outside double quotes; a backslash in
// quotes escapes the next character, as in JSON.
func splitTerms(q string) ([]string, error) {
	var (
		terms   []string
		cur     strings.Builder
		quoted  bool
		escaped bool
	)
	for _, c := range q {
		switch {
		case escaped:
			escaped = false
		case quoted && c == '\\':
			escaped = true
		case c == '"':
			quoted = !quoted
		case !quoted && unicode.IsSpace(c):
			if cur.Len() > 0 {
				terms = append(terms, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(c)
	}
	if quoted {
		return nil, badRequest("the search %q has an unclosed quote; close it, like team=\"on call\"", q)
	}
	if cur.Len() > 0 {
		terms = append(terms, cur.String())
	}
	return terms, nil
}

// apply sets the search's filters on params.
func (s *runSearch) apply(params *workflow.ListParams) {
	params.IdempotencyKey, params.Metadata = s.key, s.metadata
	params.CreatedAfter, params.CreatedBefore = s.from, s.to
}

// describe says what the search box was read as, or "".
func (s *runSearch) describe() string {
	switch {
	case s.id != nil:
		return fmt.Sprintf("run id %s (the other filters do not apply)", s.id)
	case s.key != "":
		return fmt.Sprintf("idempotency key %q", s.key)
	case len(s.terms) > 0:
		return "metadata " + strings.Join(s.terms, " and ")
	}
	return ""
}

// runsQuery is the runs page's URL with query's filters.
func (h *Handler) runsQuery(query url.Values) string {
	if len(query) == 0 {
		return h.prefix + "/runs"
	}
	return h.prefix + "/runs?" + query.Encode()
}
