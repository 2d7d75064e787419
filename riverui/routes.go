package riverui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
)

// The API and the dashboard share these helpers: a route about one run
// parses its {id} once, a route about one schedule reads its {id} segment
// as an id or a key once, and a failure is answered through one error
// mapping (statusOf), in JSON or as a page.

// idHandler serves a route whose path has an {id} naming a run, given the
// parsed id. It answers and returns nil, or returns the error for its
// caller to answer.
type idHandler func(w http.ResponseWriter, r *http.Request, id uuid.UUID) error

// op changes the run id as a request asks.
type op func(r *http.Request, id uuid.UUID) error

// refHandler serves a route whose path has an {id} naming a schedule, given
// the schedule.Ref it names (see parseRef). Like an idHandler, it answers
// and returns nil, or returns the error.
type refHandler func(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error

// withContext makes an op of a client method that needs only the id, such
// as workflow.Client.Cancel.
func withContext(fn func(ctx context.Context, id uuid.UUID) error) op {
	return func(r *http.Request, id uuid.UUID) error { return fn(r.Context(), id) }
}

// byID serves a route with an {id} naming a run: it parses the id and
// calls fn, and answers an error of either with fail.
func (h *Handler) byID(fn idHandler, fail func(w http.ResponseWriter, r *http.Request, err error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := parseID(r, "run")
		if err == nil {
			err = fn(w, r, id)
		}
		if err != nil {
			fail(w, r, err)
		}
	}
}

// byRef serves a route with an {id} naming a schedule, by its id or by its
// key (see parseRef): it calls fn with the schedule's Ref, and answers an
// error of either with fail. An unknown key is a 404 that names the key and
// the owner it was looked up in. Schedule routes answer 404 when the
// Handler has no schedule client.
func (h *Handler) byRef(fn refHandler, fail func(w http.ResponseWriter, r *http.Request, err error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if h.sc == nil {
			fail(w, r, errNoSchedules)
			return
		}
		ref, err := parseRef(r)
		if err == nil {
			err = keyNotFound(ref, fn(w, r, ref))
		}
		if err != nil {
			fail(w, r, err)
		}
	}
}

// parseID parses the {id} path value of a route about a what.
func parseID(r *http.Request, what string) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return uuid.Nil, badRequest("%q is not a %s id; ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e", r.PathValue("id"), what)
	}
	return id, nil
}

// parseRef reads the {id} path value of a route about a schedule: a
// segment that parses as a UUID is the schedule's id, and anything else its
// key (schedule.Params.Key, which is never shaped like a UUID), looked up
// within the owner that the query's owner= names ("" when absent). An id
// names the schedule alone, so an id with a non-empty owner= is refused.
func parseRef(r *http.Request) (schedule.Ref, error) {
	segment, owner := r.PathValue("id"), r.URL.Query().Get("owner")
	id, err := uuid.Parse(segment)
	if err != nil {
		return schedule.ByKey(owner, segment), nil
	}
	if owner != "" {
		return schedule.Ref{}, badParam("owner", "%s is a schedule id, and an id names the schedule alone: give owner=%s only with a key, or leave it out", segment, url.QueryEscape(owner))
	}
	return schedule.ByID(id), nil
}

// keyNotFound rewords the schedule.ErrNotFound of a ref by key so that it
// names the owner the key was looked up in, "" included: a key given
// without owner= is looked up among the schedules of owner "". Other
// errors are returned as they are.
func keyNotFound(ref schedule.Ref, err error) error {
	if ref.Key == "" || !errors.Is(err, schedule.ErrNotFound) {
		return err
	}
	msg := fmt.Sprintf("schedule not found: no schedule has key %q under owner %q", ref.Key, ref.Owner)
	if ref.Owner == "" {
		msg += "; a key is looked up within the owner that owner= names, and none was given"
	}
	return &apiError{status: http.StatusNotFound, msg: msg}
}

// refPath is the dashboard path of the page of the schedule ref names,
// with suffix (such as "/edit") after its {id} segment: the key, escaped
// for a path, and owner= when the owner is not "", or the id.
func refPath(ref schedule.Ref, suffix string) string {
	path := "/schedules/" + refSegment(ref) + suffix
	if ref.Owner != "" {
		path += "?" + url.Values{"owner": {ref.Owner}}.Encode()
	}
	return path
}

// refSegment is the {id} segment of the paths about the schedule ref
// names: its key, escaped for a path, or its id.
func refSegment(ref schedule.Ref) string {
	if ref.Key == "" {
		return ref.ID.String()
	}
	return url.PathEscape(ref.Key)
}

// refOf names s as the dashboard links it: by its key when it has one (a
// key outlives the id of a declared schedule deleted and declared again),
// else by its id. The key "new" is linked by id: GET /schedules/new is the
// new schedule form.
func refOf(s *schedule.Schedule) schedule.Ref {
	if s.Key == "" || s.Key == "new" {
		return schedule.ByID(s.ID)
	}
	return schedule.ByKey(s.Owner, s.Key)
}

// withFallback serves mux's routes and answers a request that none of them
// matches with miss, given the methods the path allows (none for an unknown
// path).
func withFallback(mux *http.ServeMux, miss func(w http.ResponseWriter, r *http.Request, allowed []string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r) // sets the path values
			return
		}
		var allowed []string
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			probe := r.Clone(r.Context())
			probe.Method = method
			if _, pattern := mux.Handler(probe); pattern != "" {
				allowed = append(allowed, method)
			}
		}
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
		}
		miss(w, r, allowed)
	})
}
