package riverui_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

// apiGrant is a grant as the API answers it.
type apiGrant struct {
	ID           uuid.UUID   `json:"id"`
	Subject      string      `json:"subject"`
	Scopes       []string    `json:"scopes"`
	ExpiresAt    *time.Time  `json:"expires_at"`
	RevokedAt    *time.Time  `json:"revoked_at"`
	RevokeReason string      `json:"revoke_reason"`
	CreatedAt    time.Time   `json:"created_at"`
	Schedules    []uuid.UUID `json:"schedules"`
}

// TestAPIGrants: execution grants are created (with expires_in or
// expires_at), listed (by subject, revoked ones on request), read with the
// schedules under them, and revoked over the API, with the CLI's field
// names; bad input is a 400 or 404 naming the field, and writes nothing; a
// grant revoked already is a 409 that keeps the first revocation.
func TestAPIGrants(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)

	// grant is what GET answers about id.
	grant := func(t *testing.T, id uuid.UUID) apiGrant {
		t.Helper()
		var g apiGrant
		f.getJSON(t, "/api/grants/"+id.String(), http.StatusOK, &g)
		return g
	}
	// create requires a 201 and returns the grant.
	create := func(t *testing.T, body string) apiGrant {
		t.Helper()
		status, answer := f.do(t, http.MethodPost, "/api/grants", body, nil)
		require.Equal(t, http.StatusCreated, status, answer)
		var g apiGrant
		require.NoError(t, json.Unmarshal([]byte(answer), &g))
		return g
	}
	// refused requires status and an error naming field, and returns the
	// error.
	refused := func(t *testing.T, method, path, body string, status int, field string) string {
		t.Helper()
		got, answer := f.do(t, method, path, body, nil)
		require.Equal(t, status, got, "%s: %s", body, answer)
		var e errorBody
		require.NoError(t, json.Unmarshal([]byte(answer), &e))
		require.Equal(t, field, e.Field, "%s: %s", body, answer)
		return e.Error
	}
	// list lists the grants of subject (with the revoked ones when query
	// says so).
	list := func(t *testing.T, query string) []apiGrant {
		t.Helper()
		var out struct {
			Grants []apiGrant `json:"grants"`
		}
		f.getJSON(t, "/api/grants?"+query, http.StatusOK, &out)
		return out.Grants
	}

	t.Run("Lifecycle", func(t *testing.T) {
		before := time.Now()
		g := create(t, `{"subject": "user-42", "scopes": ["workflow:execute:digest"], "expires_in": "720h"}`)
		require.Equal(t, "user-42", g.Subject)
		require.Equal(t, []string{"workflow:execute:digest"}, g.Scopes)
		require.NotNil(t, g.ExpiresAt)
		require.WithinRange(t, *g.ExpiresAt, before.Add(720*time.Hour-time.Second), time.Now().Add(720*time.Hour+time.Second))
		require.Nil(t, g.RevokedAt)
		require.Empty(t, g.Schedules)
		g.Schedules = []uuid.UUID{}
		require.Equal(t, g, grant(t, g.ID), "created as read")

		// The answers hold every field, with the CLI's names.
		status, body := f.do(t, http.MethodGet, "/api/grants/"+g.ID.String(), "", nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, `"revoked_at":null,"revoke_reason":"",`)
		require.Contains(t, body, `"schedules":[]`)

		// A schedule under it is listed with the grant.
		status, body = f.do(t, http.MethodPost, "/api/schedules", `{"name": "digest for 42", "workflow": "digest", "cron": "0 9 * * *", "grant_id": "`+g.ID.String()+`"}`, nil)
		require.Equal(t, http.StatusCreated, status, body)
		var s apiSchedule
		require.NoError(t, json.Unmarshal([]byte(body), &s))
		require.Contains(t, body, `"grant_id":"`+g.ID.String()+`"`)
		require.Equal(t, []uuid.UUID{s.ID}, grant(t, g.ID).Schedules)

		// An expiry at a time, and a listing by subject, newest first.
		at := time.Date(2098, 1, 3, 10, 0, 0, 0, time.UTC)
		other := create(t, `{"subject": "user-42", "scopes": ["*"], "expires_at": "2098-01-03T11:00:00+01:00"}`)
		require.True(t, at.Equal(*other.ExpiresAt), "%s", other.ExpiresAt)
		require.Equal(t, []uuid.UUID{other.ID, g.ID}, ids(list(t, "subject=user-42")))
		require.Equal(t, []uuid.UUID{other.ID}, ids(list(t, "subject=user-42&limit=1")))

		// Revoked with a reason: left out of the listing unless asked for.
		status, body = f.do(t, http.MethodPost, "/api/grants/"+g.ID.String()+"/revoke", `{"reason": "user left"}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		var revoked apiGrant
		require.NoError(t, json.Unmarshal([]byte(body), &revoked))
		require.NotNil(t, revoked.RevokedAt)
		require.Equal(t, "user left", revoked.RevokeReason)
		require.Equal(t, []uuid.UUID{other.ID}, ids(list(t, "subject=user-42")))
		require.Equal(t, []uuid.UUID{other.ID, g.ID}, ids(list(t, "subject=user-42&revoked=true")))

		// Revoking it again is refused and keeps the first revocation.
		msg := refused(t, http.MethodPost, "/api/grants/"+g.ID.String()+"/revoke", `{"reason": "again"}`, http.StatusConflict, "")
		require.Equal(t, "grant "+g.ID.String()+" was revoked at "+revoked.RevokedAt.UTC().Format(time.RFC3339)+` ("user left"); a revocation is final, so there is nothing to revoke: to let its schedules run again, create a new grant (POST /api/grants) and set it as the schedules' grant_id (PATCH /api/schedules/{id})`, msg)
		again := grant(t, g.ID)
		require.Equal(t, "user left", again.RevokeReason)
		require.True(t, revoked.RevokedAt.Equal(*again.RevokedAt))

		// A revocation's body may be left out.
		status, body = f.do(t, http.MethodPost, "/api/grants/"+other.ID.String()+"/revoke", "", nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, `"revoke_reason":""`)
	})

	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct {
			body, field, contains string
		}{
			{`{"subject": "", "scopes": ["*"]}`, "subject", "invalid subject: is empty; name who the runs act for"},
			{`{"scopes": ["*"]}`, "subject", "invalid subject: is empty"},
			{`{"subject": "` + strings.Repeat("x", 201) + `", "scopes": ["*"]}`, "subject", "invalid subject: is longer than 200 bytes"},
			{`{"subject": "refused"}`, "scopes", `invalid scopes: is empty; grant "workflow:execute:<type>" or "*"`},
			{`{"subject": "refused", "scopes": []}`, "scopes", "invalid scopes: is empty"},
			{`{"subject": "refused", "scopes": ["*", " "]}`, "scopes[1]", `scopes[1]: is empty; a scope is "workflow:execute:<type>", or "*" for every type`},
			{`{"subject": "refused", "scopes": "*"}`, "scopes", `scopes: "*" is not an array of strings`},
			{`{"subject": "refused", "scopes": ["*"], "expires_at": "2001-01-01T00:00:00Z"}`, "expires_at", "invalid expires_at: is in the past"},
			{`{"subject": "refused", "scopes": ["*"], "expires_at": "tomorrow"}`, "expires_at", `expires_at: "tomorrow" is not an RFC 3339 time`},
			{`{"subject": "refused", "scopes": ["*"], "expires_in": "0s"}`, "expires_in", `expires_in: is 0s; send a positive duration such as "720h"`},
			{`{"subject": "refused", "scopes": ["*"], "expires_in": "-1h"}`, "expires_in", `"-1h" is negative`},
			{`{"subject": "refused", "scopes": ["*"], "expires_in": "soon"}`, "expires_in", `"soon" is not a Go duration`},
			{`{"subject": "refused", "scopes": ["*"], "expires_in": "1h", "expires_at": "2099-01-01T00:00:00Z"}`, "expires_in", "sent with expires_at; send one of them"},
			{`{"subject": "refused", "scopes": ["*"], "revoked_at": "2099-01-01T00:00:00Z"}`, "revoked_at", "is read-only"},
			{`{"subject": "refused", "scopes": ["*"], "scope": "*"}`, "scope", "unknown field in a grant; the fields are subject, scopes, expires_at, expires_in"},
		} {
			msg := refused(t, http.MethodPost, "/api/grants", tc.body, http.StatusBadRequest, tc.field)
			require.Contains(t, msg, tc.contains, tc.body)
		}
		refused(t, http.MethodPost, "/api/grants", ``, http.StatusBadRequest, "")

		// An unknown or malformed id, a bad revocation, a bad query.
		unknown := uuid.New()
		msg := refused(t, http.MethodGet, "/api/grants/"+unknown.String(), "", http.StatusNotFound, "")
		require.Equal(t, "there is no grant "+unknown.String()+"; GET /api/grants lists the grants (revoked=true lists the revoked ones too)", msg)
		msg = refused(t, http.MethodPost, "/api/grants/"+unknown.String()+"/revoke", `{"reason": "x"}`, http.StatusNotFound, "")
		require.Contains(t, msg, "there is no grant "+unknown.String())
		msg = refused(t, http.MethodGet, "/api/grants/user-42", "", http.StatusBadRequest, "id")
		require.Equal(t, `id: "user-42" is not a grant id; ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e`, msg)
		refused(t, http.MethodPost, "/api/grants/user-42/revoke", "", http.StatusBadRequest, "id")
		live := create(t, `{"subject": "refused-live", "scopes": ["*"]}`)
		msg = refused(t, http.MethodPost, "/api/grants/"+live.ID.String()+"/revoke", `{"reason": "`+strings.Repeat("x", 501)+`"}`, http.StatusBadRequest, "reason")
		require.Equal(t, "reason: is 501 bytes, the limit is 500", msg)
		refused(t, http.MethodPost, "/api/grants/"+live.ID.String()+"/revoke", `{"why": "x"}`, http.StatusBadRequest, "why")
		require.Nil(t, grant(t, live.ID).RevokedAt, "not revoked")
		require.Contains(t, refused(t, http.MethodGet, "/api/grants?revoked=maybe", "", http.StatusBadRequest, "revoked"), `revoked="maybe" is not true or false`)
		refused(t, http.MethodGet, "/api/grants?limit=0", "", http.StatusBadRequest, "limit")
		refused(t, http.MethodGet, "/api/grants?after=x", "", http.StatusBadRequest, "after")
		require.Contains(t, refused(t, http.MethodGet, "/api/grants?owner=x", "", http.StatusBadRequest, "owner"), "it takes subject, revoked, limit, after")

		// Nothing was written but the live grant.
		grants, err := f.sc.ListGrants(t.Context(), &schedule.ListGrantsParams{Revoked: true})
		require.NoError(t, err)
		for _, g := range grants {
			require.NotEqual(t, "refused", g.Subject)
		}
	})
}

// ids are the grants' ids, in order.
func ids(grants []apiGrant) []uuid.UUID {
	out := []uuid.UUID{}
	for _, g := range grants {
		out = append(out, g.ID)
	}
	return out
}
