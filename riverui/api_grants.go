package riverui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
)

// Execution grants (schedule.Grant) on the wire: GET and POST /api/grants
// list and create them, GET /api/grants/{id} reads one with the schedules
// that run under it, and POST /api/grants/{id}/revoke revokes it. A
// schedule names its grant in "grant_id" (see scheduleBody). The fields
// are those of `tributary grant … --json`, every one present.

const (
	// maxGrantSchedules is how many of the schedules under a grant GET
	// /api/grants/{id} and the grant's page list, as the CLI's grant get.
	maxGrantSchedules = 1000

	// maxRevokeReason bounds a revocation's reason, which the grant's page
	// and the ledger show.
	maxRevokeReason = 500
)

// grantBody is the body of POST /api/grants: expires_at or expires_in (a
// Go duration from now), or neither for a grant that lasts until revoked.
type grantBody struct {
	Subject   opt[string]
	Scopes    opt[[]string]
	ExpiresAt opt[time.Time]
	ExpiresIn opt[wire.Duration]
}

// grantReadOnly are the fields of a grant that only the server sets.
var grantReadOnly = []string{"id", "revoked_at", "revoke_reason", "created_at", "schedules"}

func (b *grantBody) spec() *bodySpec {
	return &bodySpec{what: "a grant", required: true, readOnly: grantReadOnly, members: []member{
		{name: "subject", dst: &b.Subject}, {name: "scopes", dst: &b.Scopes},
		{name: "expires_at", dst: &b.ExpiresAt}, {name: "expires_in", dst: &b.ExpiresIn},
	}}
}

// params are the grant b asks for, its expires_in counted from now.
func (b *grantBody) params(now time.Time) (*schedule.GrantParams, error) {
	p := &schedule.GrantParams{Subject: b.Subject.value(), Scopes: b.Scopes.value(), ExpiresAt: b.ExpiresAt.value()}
	for i, scope := range p.Scopes {
		if strings.TrimSpace(scope) == "" {
			return nil, badField(fmt.Sprintf("scopes[%d]", i), `is empty; a scope is "workflow:execute:<type>", or "*" for every type`)
		}
	}
	if b.ExpiresIn.set {
		in := time.Duration(b.ExpiresIn.value())
		switch {
		case b.ExpiresAt.set:
			return nil, badField("expires_in", "sent with expires_at; send one of them, or neither for a grant that lasts until revoked")
		case in <= 0:
			return nil, badField("expires_in", `is %s; send a positive duration such as "720h", or leave it out for a grant that lasts until revoked`, in)
		}
		p.ExpiresAt = now.Add(in)
	}
	return p, nil
}

// revokeBody is the body of POST /api/grants/{id}/revoke, which may be
// empty.
type revokeBody struct {
	Reason opt[string]
}

func (b *revokeBody) spec() *bodySpec {
	return &bodySpec{what: "a revocation", members: []member{{name: "reason", dst: &b.Reason}}}
}

// grantRoute serves a grant route: it answers errNoSchedules without a
// schedule client, and an error of fn in JSON, in the grants' words
// (grantError).
func (h *Handler) grantRoute(fn func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.sc == nil {
			h.failJSON(w, r, errNoSchedules)
			return
		}
		if err := fn(w, r); err != nil {
			h.failJSON(w, r, grantError(err, r.PathValue("id"), true))
		}
	})
}

// listGrants answers GET /api/grants: newest first, filtered by subject=,
// with the revoked ones when revoked=true, paged by limit= and after=.
func (h *Handler) listGrants(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "subject", "revoked", "limit", "after"); err != nil {
		return err
	}
	params, err := grantListParams(r)
	if err != nil {
		return err
	}
	grants, err := h.sc.ListGrants(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.GrantPage(grants, params.Limit))
	return nil
}

// grantListParams reads subject=, revoked=, limit= and after= of a grant
// listing. revoked= takes true or false (yes or no).
func grantListParams(r *http.Request) (*schedule.ListGrantsParams, error) {
	q := r.URL.Query()
	params := &schedule.ListGrantsParams{Subject: q.Get("subject")}
	switch s := q.Get("revoked"); s {
	case "", "no":
	case "yes":
		params.Revoked = true
	default:
		revoked, err := strconv.ParseBool(s)
		if err != nil {
			return nil, badParam("revoked", "revoked=%q is not true or false", s)
		}
		params.Revoked = revoked
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

// createGrant answers POST /api/grants, {"subject", "scopes",
// "expires_at" or "expires_in"}: 201 and the grant.
func (h *Handler) createGrant(w http.ResponseWriter, r *http.Request) error {
	var b grantBody
	if _, err := b.spec().read(r); err != nil {
		return err
	}
	p, err := b.params(time.Now())
	if err != nil {
		return err
	}
	g, err := h.sc.CreateGrant(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, wire.NewGrant(g))
	return nil
}

// getGrant answers GET /api/grants/{id}: the grant and its schedules.
func (h *Handler) getGrant(w http.ResponseWriter, r *http.Request) error {
	id, err := grantID(r)
	if err != nil {
		return err
	}
	g, err := h.sc.GetGrant(r.Context(), id)
	if err != nil {
		return err
	}
	schedules, err := h.sc.GrantSchedules(r.Context(), id, maxGrantSchedules)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.NewGrantDetail(g, schedules))
	return nil
}

// revokeGrant answers POST /api/grants/{id}/revoke, {"reason": "…"} or no
// body: the grant, revoked.
func (h *Handler) revokeGrant(w http.ResponseWriter, r *http.Request) error {
	id, err := grantID(r)
	if err != nil {
		return err
	}
	var b revokeBody
	if _, err := b.spec().read(r); err != nil {
		return err
	}
	g, err := h.revoke(r.Context(), id, b.Reason.value())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.NewGrant(g))
	return nil
}

// grantID parses the {id} path value of a route about a grant; a
// malformed one is a 400 about the field id.
func grantID(r *http.Request) (uuid.UUID, error) {
	id, err := parseID(r, "grant")
	if err != nil {
		return uuid.Nil, &apiError{status: http.StatusBadRequest, msg: "id: " + err.Error(), field: "id"}
	}
	return id, nil
}

// revokedError is a revocation of a grant revoked before: refused,
// since schedule.Client.RevokeGrant would keep the first revocation's time
// and replace its reason, which the ledger's skipped slots already cite.
type revokedError struct{ g *schedule.Grant }

func (e *revokedError) Error() string {
	msg := fmt.Sprintf("grant %s was revoked at %s", e.g.ID, e.g.RevokedAt.UTC().Format(time.RFC3339))
	if e.g.RevokeReason != "" {
		msg += fmt.Sprintf(" (%q)", e.g.RevokeReason)
	}
	return msg
}

// revoke revokes grant id with reason; a grant revoked already is an
// *revokedError and keeps its reason. Two revocations at once may
// both pass the check, the last reason then kept: the grant is revoked
// either way, at the first one's time.
func (h *Handler) revoke(ctx context.Context, id uuid.UUID, reason string) (*schedule.Grant, error) {
	if len(reason) > maxRevokeReason {
		return nil, badField("reason", "is %d bytes, the limit is %d", len(reason), maxRevokeReason)
	}
	g, err := h.sc.GetGrant(ctx, id)
	if err != nil {
		return nil, err
	}
	if g.RevokedAt != nil {
		return nil, &revokedError{g: g}
	}
	return h.sc.RevokeGrant(ctx, id, strings.TrimSpace(reason))
}

// grantError is err of a grant call about grant id in the words of the API
// (api) or of the dashboard: a grant not found is a 404 that says where
// the grants are listed, one revoked already a 409 that says what to do
// instead, and a validation error names its field as the API's bodies do
// (expires_at).
func grantError(err error, id string, api bool) error {
	var (
		revoked *revokedError
		invalid *schedule.ValidationError
	)
	switch {
	case errors.Is(err, schedule.ErrGrantNotFound):
		where := "GET /api/grants lists the grants (revoked=true lists the revoked ones too)"
		if !api {
			where = "the Grants page lists them"
		}
		return &apiError{status: http.StatusNotFound, msg: fmt.Sprintf("there is no grant %s; %s", id, where)}
	case errors.As(err, &revoked):
		todo := `create a new grant (POST /api/grants) and set it as the schedules' grant_id (PATCH /api/schedules/{id})`
		if !api {
			todo = "create a new grant on the Grants page and set it on each schedule's Edit page"
		}
		return &apiError{status: http.StatusConflict, msg: revoked.Error() + "; a revocation is final, so there is nothing to revoke: to let its schedules run again, " + todo}
	case errors.As(err, &invalid) && strings.HasPrefix(invalid.Field, "GrantParams."):
		field := snakeCase(strings.TrimPrefix(invalid.Field, "GrantParams."))
		return &apiError{status: http.StatusBadRequest, msg: "invalid " + field + ": " + invalid.Problem, field: field}
	}
	return err
}
