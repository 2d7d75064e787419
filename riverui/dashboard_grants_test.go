package riverui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

// TestDashboardGrants: the grants page lists the grants (the revoked ones
// on request) and creates one; a grant's page shows its fields and the
// schedules under it, each with a warning when the grant skips its next
// slot, and revokes it with a reason, refused with the reason when it is
// revoked already. A schedule's page links its grant, shows its scopes and
// expiry, and warns when the grant is revoked or expires before the next
// slot. Bad input is shown with the form as typed, and nothing is written.
func TestDashboardGrants(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	same := map[string]string{"Sec-Fetch-Site": "same-origin"}
	scope := schedule.ScopeExecute(flow.Name())

	body := d.page(t, "/grants", nil)
	requireNav(t, body, "")
	require.Equal(t, []string{"/grants"}, attrs(body, "nav-grants", "href"))
	require.Equal(t, []string{"page"}, attrs(body, "nav-grants", "aria-current"))
	require.Len(t, texts(body, "no-grants"), 1)

	// Refused: the error beside its field, the form as typed.
	past := time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04")
	for _, tc := range []struct {
		form     url.Values
		field    string
		contains string
	}{
		{url.Values{"subject": {" "}, "scopes": {scope}}, "subject", "invalid subject: is empty; name who the runs act for"},
		{url.Values{"subject": {"user-42"}, "scopes": {" , "}}, "scopes", `invalid scopes: is empty; grant "workflow:execute:<type>" or "*"`},
		{url.Values{"subject": {"user-42"}, "scopes": {scope}, "expires_in": {"soon"}}, "expires_in", `"soon" is not a positive Go duration such as 720h`},
		{url.Values{"subject": {"user-42"}, "scopes": {scope}, "expires_at": {past}}, "expires_at", "invalid expires_at: is in the past"},
		{url.Values{"subject": {"user-42"}, "scopes": {scope}, "expires_at": {"tomorrow"}}, "expires_at", `expiry "tomorrow" is not a time`},
		{url.Values{"subject": {"user-42"}, "scopes": {scope}, "expires_in": {"1h"}, "expires_at": {"2098-01-01T00:00"}}, "expires_in", "not both"},
	} {
		resp := d.send(t, http.MethodPost, "/grants", tc.form, same)
		require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
		errs := unescapeAll(texts(resp.body, "field-error"))
		require.Len(t, errs, 1, resp.body)
		require.Contains(t, errs[0], tc.contains)
		require.Regexp(t, `name="`+tc.field+`"[^>]* aria-invalid="true"`, resp.body)
		require.Equal(t, tc.form.Get("subject"), formFields(t, resp.body, "new-grant-form").Get("subject"))
	}
	// A cross-site form is refused, as every state-changing request is.
	resp := d.send(t, http.MethodPost, "/grants", url.Values{"subject": {"user-42"}, "scopes": {scope}}, map[string]string{"Sec-Fetch-Site": "cross-site"})
	require.Equal(t, http.StatusForbidden, resp.status, resp.body)
	grants, err := d.sc.ListGrants(t.Context(), &schedule.ListGrantsParams{Revoked: true})
	require.NoError(t, err)
	require.Empty(t, grants, "nothing written")

	// Created: scopes separated by commas and spaces, an expiry in 30 days.
	to := d.post(t, "/grants", url.Values{"subject": {" user-42 "}, "scopes": {scope + ", *"}, "expires_in": {"720h"}})
	grants, err = d.sc.ListGrants(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, grants, 1)
	g := grants[0]
	require.Equal(t, "user-42", g.Subject)
	require.Equal(t, []string{scope, "*"}, g.Scopes)
	require.WithinDuration(t, time.Now().Add(720*time.Hour), *g.ExpiresAt, time.Minute)
	require.Equal(t, "/grants/"+g.ID.String()+"?notice=grant-created", to)
	body = d.page(t, to, nil)
	require.Equal(t, []string{"user-42"}, texts(body, "grant-subject"))
	require.Equal(t, []string{"active"}, texts(body, "grant-state"))
	require.Contains(t, body, `<dd data-testid="grant-scopes"><code>`+scope+`</code>, <code>*</code></dd>`)
	require.Len(t, texts(body, "no-grant-schedules"), 1)
	require.Len(t, attrs(body, "revoke-form", "action"), 1)

	// A schedule under it links the grant and shows its scopes and expiry,
	// with no warning: the grant lasts past the next slot.
	s := d.createSchedule(t, &schedule.Params{Name: "digest for 42", Cron: "0 9 * * *", GrantID: &g.ID})
	body = d.page(t, "/schedules/"+s.ID.String(), nil)
	require.Equal(t, []string{"/grants/" + g.ID.String()}, attrs(body, "schedule-grant", "href"))
	require.Equal(t, []string{"user-42"}, texts(body, "schedule-grant"))
	require.Equal(t, []string{scope + ", *"}, texts(body, "schedule-grant-scopes"))
	require.Contains(t, body, `<span data-testid="schedule-grant-expires"><time datetime="`+g.ExpiresAt.UTC().Format(time.RFC3339)+`">`)
	require.Empty(t, texts(body, "grant-warning"))
	require.Empty(t, texts(body, "fire-grant"))
	body = d.page(t, "/grants/"+g.ID.String(), nil)
	require.Equal(t, []string{"/schedules/" + s.ID.String()}, attrs(body, "grant-schedule-link", "href"))
	require.Empty(t, texts(body, "grant-schedule-warning"))

	// A grant that expires before a schedule's next slot: a warning on the
	// schedule's page and on the grant's, every fire time marked.
	expires := time.Now().Add(2 * time.Hour).Truncate(time.Second)
	short, err := d.sc.CreateGrant(t.Context(), &schedule.GrantParams{Subject: "user-7", Scopes: []string{scope}, ExpiresAt: expires})
	require.NoError(t, err)
	later := d.createSchedule(t, &schedule.Params{Name: "digest for 7", Cron: "0 9 * * *", TimeZone: "Europe/Paris",
		StartAt: time.Date(2098, 1, 1, 0, 0, 0, 0, time.UTC), GrantID: &short.ID})
	warning := "Warning: grant " + short.ID.String() + " of user-7 expires " + expires.UTC().Format("2006-01-02 15:04") +
		" UTC, before the next slot at 2098-01-01 09:00 CET: that slot and every one after it will be skipped (grant expired)."
	body = d.page(t, "/schedules/"+later.ID.String(), nil)
	require.Equal(t, []string{warning}, texts(body, "grant-warning"))
	require.Len(t, texts(body, "fire-grant"), 10)
	require.Equal(t, "skipped: grant expired", texts(body, "fire-grant")[0])
	require.Equal(t, []string{warning}, texts(d.page(t, "/grants/"+short.ID.String(), nil), "grant-schedule-warning"))

	// Revoked with a reason: the grant's page says when and why and has no
	// revoke form; revoking it again is refused, the reason kept.
	to = d.post(t, "/grants/"+g.ID.String()+"/revoke", url.Values{"reason": {"user <left>"}})
	require.Equal(t, "/grants/"+g.ID.String()+"?notice=grant-revoked", to)
	body = d.page(t, to, nil)
	require.Equal(t, []string{"revoked"}, texts(body, "grant-state"))
	require.Equal(t, []string{"user <left>"}, unescapeAll(texts(body, "grant-revoke-reason")))
	require.NotContains(t, body, "<left>", "escaped")
	require.Empty(t, attrs(body, "revoke-form", "action"))
	require.Len(t, texts(body, "grant-schedule-warning"), 1)
	resp = d.send(t, http.MethodPost, "/grants/"+g.ID.String()+"/revoke", url.Values{"reason": {"again"}}, same)
	require.Equal(t, http.StatusConflict, resp.status, resp.body)
	require.Contains(t, unescapeAll(texts(resp.body, "error"))[0], "a revocation is final, so there is nothing to revoke: to let its schedules run again, create a new grant on the Grants page and set it on each schedule's Edit page")
	revoked, err := d.sc.GetGrant(t.Context(), g.ID)
	require.NoError(t, err)
	require.Equal(t, "user <left>", revoked.RevokeReason)

	// The schedule's page warns that every slot is skipped.
	body = d.page(t, "/schedules/"+s.ID.String(), nil)
	require.Equal(t, []string{`Warning: grant ` + g.ID.String() + ` of user-42 was revoked ` + revoked.RevokedAt.UTC().Format("2006-01-02 15:04") +
		` UTC ("user <left>"): every slot is skipped (grant revoked).`}, unescapeAll(texts(body, "grant-warning")))
	require.Equal(t, []string{"revoked"}, texts(body, "schedule-grant-revoked"))
	require.Equal(t, "skipped: grant revoked", texts(body, "fire-grant")[0])

	// The listing leaves revoked grants out unless asked for.
	body = d.page(t, "/grants", nil)
	require.Equal(t, []string{short.ID.String()}, attrs(body, "grant-row", "data-id"))
	require.Equal(t, []string{"active"}, texts(body, "grant-state"))
	body = d.page(t, "/grants?revoked=1", nil)
	require.Equal(t, []string{short.ID.String(), g.ID.String()}, attrs(body, "grant-row", "data-id"))
	require.Equal(t, []string{"active", "revoked"}, texts(body, "grant-state"))
	require.Equal(t, []string{short.ID.String()}, attrs(d.page(t, "/grants?subject=user-7&revoked=1", nil), "grant-row", "data-id"))

	// An unknown grant, a malformed id.
	unknown := uuid.New()
	resp = d.send(t, http.MethodGet, "/grants/"+unknown.String(), nil, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
	require.Equal(t, []string{"there is no grant " + unknown.String() + "; the Grants page lists them"}, texts(resp.body, "error"))
	resp = d.send(t, http.MethodPost, "/grants/"+unknown.String()+"/revoke", url.Values{}, same)
	require.Equal(t, http.StatusNotFound, resp.status)
	resp = d.send(t, http.MethodGet, "/grants/user-42", nil, nil)
	require.Equal(t, http.StatusBadRequest, resp.status)
	require.True(t, strings.HasPrefix(unescapeAll(texts(resp.body, "error"))[0], `"user-42" is not a grant id`))
}
