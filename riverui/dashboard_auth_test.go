package riverui_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
)

func TestDashboardAuth(t *testing.T) {
	t.Parallel()

	const token = "s3cret-token"
	d := newDash(t, &riverui.Config{Prefix: "/ops", Token: token}, true)
	s := d.createSchedule(t, &schedule.Params{Name: "guarded", Cron: "@daily"})
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("anyone:"+token))
	json := map[string]string{"Accept": "application/json"}

	t.Run("Unauthenticated", func(t *testing.T) {
		// A browser asking for a page goes to the login page, and back.
		for _, path := range []string{"/", "/runs?status=failed&type=a%20b", "/schedules/" + s.ID.String(), "/riverui/jobs/1"} {
			resp := d.send(t, http.MethodGet, path, nil, nil)
			require.Equal(t, "/ops/login?next="+url.QueryEscape("/ops"+path), resp.location(t), path)
		}

		// Anything else gets 401 with both challenges.
		for _, req := range []struct{ method, path string }{
			{http.MethodGet, "/api/runs"}, {http.MethodGet, "/riverui/api/jobs?state=available"},
			{http.MethodGet, "/riverui/api/version"}, // River UI ≥ v0.20: the binary's commit and Go version
			{http.MethodPost, "/schedules/" + s.ID.String() + "/pause"}, {http.MethodGet, "/"},
		} {
			resp := d.send(t, req.method, req.path, url.Values{}, json)
			require.Equal(t, http.StatusUnauthorized, resp.status, req.path)
			require.Equal(t, []string{`Bearer realm="tributary"`, `Basic realm="tributary", charset="UTF-8"`}, resp.header.Values("WWW-Authenticate"))
			require.Contains(t, resp.body, `"error"`)
		}
		got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.False(t, got.Paused)

		for _, auth := range []string{"Bearer wrong", "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:wrong")), "Basic " + base64.StdEncoding.EncodeToString([]byte(token))} {
			resp := d.send(t, http.MethodGet, "/api/runs", nil, map[string]string{"Authorization": auth, "Accept": "application/json"})
			require.Equal(t, http.StatusUnauthorized, resp.status, auth)
		}
	})

	t.Run("BearerAndBasic", func(t *testing.T) {
		for _, auth := range []string{"Bearer " + token, basic, "Basic " + base64.StdEncoding.EncodeToString([]byte(":"+token))} {
			for _, path := range []string{"/", "/runs", "/api/runs", "/riverui/", "/riverui/api/jobs?state=available", "/riverui/api/version"} {
				resp := d.send(t, http.MethodGet, path, nil, map[string]string{"Authorization": auth})
				require.Equal(t, http.StatusOK, resp.status, "%s %s", auth, path)
			}
		}

		// Basic credentials, which a browser caches and sends on its own,
		// do not vouch for a cross-site request; the bearer token does.
		resp := d.send(t, http.MethodPost, "/schedules/"+s.ID.String()+"/trigger", url.Values{}, map[string]string{"Authorization": basic, "Sec-Fetch-Site": "cross-site"})
		require.Equal(t, http.StatusForbidden, resp.status)
		resp = d.send(t, http.MethodPost, "/api/schedules/"+s.ID.String()+"/trigger", nil, map[string]string{"Authorization": "Bearer " + token, "Sec-Fetch-Site": "cross-site"})
		require.Equal(t, http.StatusOK, resp.status, resp.body)
	})

	t.Run("Login", func(t *testing.T) {
		s := d.createSchedule(t, &schedule.Params{Name: "login", Cron: "@daily"})
		body := d.page(t, "/login?next="+url.QueryEscape("/ops/runs?status=failed"), nil)
		requireNav(t, body, "/ops")
		require.Contains(t, body, `<form class="stack" method="post" action="/ops/login">`)
		require.Contains(t, body, `<input type="hidden" name="next" value="/ops/runs?status=failed">`)
		require.Contains(t, body, `name="token"`)
		require.Contains(t, body, `<button class="primary" data-testid="login">`)
		require.NotContains(t, body, `data-testid="logout"`)

		resp := d.send(t, http.MethodPost, "/login", url.Values{"token": {"wrong"}, "next": {"/ops/runs"}}, nil)
		require.Equal(t, http.StatusUnauthorized, resp.status)
		require.Equal(t, []string{"wrong token"}, texts(resp.body, "error"))
		require.Empty(t, resp.header.Values("Set-Cookie"))

		resp = d.send(t, http.MethodPost, "/login", url.Values{"token": {token}, "next": {"/ops/runs?status=failed"}}, nil)
		require.Equal(t, "/ops/runs?status=failed", resp.location(t))
		cookies := (&http.Response{Header: resp.header}).Cookies()
		require.Len(t, cookies, 1)
		c := cookies[0]
		require.Equal(t, "tributary_session", c.Name)
		require.Equal(t, "/ops", c.Path)
		require.True(t, c.HttpOnly)
		require.Equal(t, http.SameSiteStrictMode, c.SameSite)
		require.InDelta(t, (12 * time.Hour).Seconds(), c.MaxAge, 5)
		require.NotContains(t, c.Value, token)
		require.NotContains(t, c.Value, base64.StdEncoding.EncodeToString([]byte(token)))
		cookie := map[string]string{"Cookie": c.Name + "=" + c.Value}

		// The cookie opens the dashboard, River UI (its page and its XHRs)
		// and the API.
		for _, path := range []string{"/", "/runs", "/schedules/" + s.ID.String(), "/riverui/", "/riverui/api/jobs?state=available", "/api/runs"} {
			resp := d.send(t, http.MethodGet, path, nil, cookie)
			require.Equal(t, http.StatusOK, resp.status, path)
		}
		require.Contains(t, d.page(t, "/", cookie), `<button data-testid="logout">`)

		// It changes things from the same origin only.
		samesite := map[string]string{"Cookie": cookie["Cookie"], "Sec-Fetch-Site": "same-origin"}
		resp = d.send(t, http.MethodPost, "/schedules/"+s.ID.String()+"/pause", url.Values{}, samesite)
		require.Equal(t, "/ops/schedules/"+s.ID.String()+"?notice=paused", resp.location(t))
		resp = d.send(t, http.MethodPost, "/schedules/"+s.ID.String()+"/resume", url.Values{}, map[string]string{"Cookie": cookie["Cookie"], "Sec-Fetch-Site": "cross-site"})
		require.Equal(t, http.StatusForbidden, resp.status)
		got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.True(t, got.Paused)

		// A forged or altered cookie does not.
		for _, value := range []string{"4102444800.forged", c.Value + "x", "1." + strings.SplitN(c.Value, ".", 2)[1], token} {
			resp := d.send(t, http.MethodGet, "/api/runs", nil, map[string]string{"Cookie": "tributary_session=" + value, "Accept": "application/json"})
			require.Equal(t, http.StatusUnauthorized, resp.status, value)
		}

		// Logging out clears it.
		resp = d.send(t, http.MethodPost, "/logout", url.Values{}, samesite)
		require.Equal(t, "/ops/login?notice=signed-out", resp.location(t))
		cleared := (&http.Response{Header: resp.header}).Cookies()
		require.Len(t, cleared, 1)
		require.Equal(t, "tributary_session", cleared[0].Name)
		require.Equal(t, "/ops", cleared[0].Path)
		require.Negative(t, cleared[0].MaxAge)
		require.Equal(t, []string{"Signed out."}, texts(d.page(t, "/login?notice=signed-out", nil), "flash"))

		// Logging in cross-site is refused (login forgery).
		resp = d.send(t, http.MethodPost, "/login", url.Values{"token": {token}}, map[string]string{"Sec-Fetch-Site": "cross-site"})
		require.Equal(t, http.StatusForbidden, resp.status)
	})

	t.Run("NoOpenRedirect", func(t *testing.T) {
		for next, want := range map[string]string{
			"":                           "/ops/",
			"/ops/runs?status=failed":    "/ops/runs?status=failed",
			"/ops/schedules/x/":          "/ops/schedules/x/",
			"/ops":                       "/ops",
			"//evil.example/ops/":        "/ops/",
			"https://evil.example/ops/":  "/ops/",
			"/\\evil.example":            "/ops/",
			"/ops/\\..\\..\\evil":        "/ops/",
			"/ops/../admin":              "/ops/",
			"/opsx":                      "/ops/",
			"/other":                     "/ops/",
			"ops/runs":                   "/ops/",
			"javascript:alert(1)":        "/ops/",
			"/ops/\t/evil.example":       "/ops/",
			"/ops/login?next=//evil.com": "/ops/",
			"/ops/%2F%2Fevil.example":    "/ops/evil.example",
		} {
			resp := d.send(t, http.MethodPost, "/login", url.Values{"token": {token}, "next": {next}}, nil)
			require.Equal(t, want, resp.location(t), "next=%q", next)
		}

		// The login page's form only carries a safe next.
		body := d.page(t, "/login?next="+url.QueryEscape("https://evil.example/"), nil)
		require.Contains(t, body, `<input type="hidden" name="next" value="/ops/">`)
	})
}
