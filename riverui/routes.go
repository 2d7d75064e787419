package riverui

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// The API and the dashboard share these helpers: a route about one run or
// schedule parses its {id} once, and a failure is answered through one
// error mapping (statusOf), in JSON or as a page.

// idHandler serves a route whose path has an {id}, given the parsed id. It
// answers and returns nil, or returns the error for its caller to answer.
type idHandler func(w http.ResponseWriter, r *http.Request, id uuid.UUID) error

// op changes the run or schedule id as a request asks.
type op func(r *http.Request, id uuid.UUID) error

// withContext makes an op of a client method that needs only the id, such
// as workflow.Client.Cancel.
func withContext(fn func(ctx context.Context, id uuid.UUID) error) op {
	return func(r *http.Request, id uuid.UUID) error { return fn(r.Context(), id) }
}

// byID serves a route with an {id} naming a run or a schedule (what): it
// parses the id and calls fn, and answers an error of either with fail.
// Schedule routes answer 404 when the Handler has no schedule client.
func (h *Handler) byID(what string, fn idHandler, fail func(w http.ResponseWriter, r *http.Request, err error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if what == "schedule" && h.sc == nil {
			fail(w, r, errNoSchedules)
			return
		}
		id, err := parseID(r, what)
		if err == nil {
			err = fn(w, r, id)
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
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete} {
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
