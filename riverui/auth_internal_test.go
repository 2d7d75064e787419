package riverui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAuthenticatorSession(t *testing.T) {
	t.Parallel()

	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	a := newAuthenticator("tok", "/ops")
	a.now = func() time.Time { return now }

	request := func(value string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/ops/", nil)
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: value})
		return r
	}
	value := a.session(now.Add(time.Hour))
	require.True(t, a.sessionOK(request(value)))

	// Expired.
	now = now.Add(time.Hour)
	require.False(t, a.sessionOK(request(value)))

	// Another token's cookie, or a later expiry with the old signature.
	require.False(t, a.sessionOK(request(newAuthenticator("other", "/ops").session(now.Add(time.Hour)))))
	_, sig, _ := strings.Cut(value, ".")
	require.False(t, a.sessionOK(request("4102444800."+sig)))
}

func TestAuthenticatorLocalNextAtRoot(t *testing.T) {
	t.Parallel()

	a := newAuthenticator("tok", "")
	require.Equal(t, "/", a.cookiePath)
	for next, want := range map[string]string{
		"":                      "/",
		"/":                     "/",
		"/runs?status=failed":   "/runs?status=failed",
		"/riverui/jobs/7":       "/riverui/jobs/7",
		"//evil.example":        "/",
		"///evil.example":       "/",
		"/\\evil.example":       "/",
		"https://evil.example/": "/",
		"/login":                "/",
		"/a/../../b":            "/b",
		"evil.example":          "/",
	} {
		require.Equal(t, want, a.localNext(next), "next=%q", next)
	}
}
