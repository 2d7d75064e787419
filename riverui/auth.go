package riverui

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

const (
	// sessionCookie is the name of the cookie the login page sets.
	sessionCookie = "tributary_session"

	// sessionLifetime is how long a login lasts.
	sessionLifetime = 12 * time.Hour
)

// authenticator checks the credentials of requests against Config.Token:
// a bearer token, HTTP Basic authentication with the token as password, or
// the session cookie of the login page.
//
// The cookie holds an expiry time and an HMAC of it under a key derived
// from the token, never the token: it cannot be turned back into the
// token, it stops working when it expires or the token changes, and it
// cannot be forged without the token.
type authenticator struct {
	cookiePath string
	digest     [sha256.Size]byte // of the token, compared in constant time
	key        []byte            // the HMAC key of session cookies
	now        func() time.Time
	prefix     string
	token      string
}

func newAuthenticator(token, prefix string) *authenticator {
	a := &authenticator{cookiePath: prefix, digest: sha256.Sum256([]byte(token)), now: time.Now, prefix: prefix, token: token}
	if a.cookiePath == "" {
		a.cookiePath = "/"
	}
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("tributary riverui session cookie v1"))
	a.key = mac.Sum(nil)
	return a
}

// enabled reports whether a token is required.
func (a *authenticator) enabled() bool { return a.token != "" }

// protect wraps next with the credentials check and with csrf, the
// cross-origin check of state-changing requests. A request with the bearer
// token skips csrf: a browser never adds that header to a cross-site
// request on its own, while it does attach cookies and cached Basic
// credentials. An unauthenticated browser navigation goes to login; any
// other unauthenticated request gets 401.
func (a *authenticator) protect(csrf *http.CrossOriginProtection, next http.Handler, login http.HandlerFunc) http.Handler {
	guarded := csrf.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		}
		if !a.enabled() {
			guarded.ServeHTTP(w, r)
			return
		}
		if token, ok := bearer(r); ok && a.tokenOK(token) {
			next.ServeHTTP(w, r)
			return
		}
		if a.basicOK(r) || a.sessionOK(r) || a.public(r) {
			guarded.ServeHTTP(w, r)
			return
		}
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && wantsHTML(r) {
			login(w, r)
			return
		}
		w.Header().Add("WWW-Authenticate", `Bearer realm="tributary"`)
		w.Header().Add("WWW-Authenticate", `Basic realm="tributary", charset="UTF-8"`)
		writeError(w, http.StatusUnauthorized, "missing or wrong credentials; send Authorization: Bearer <token>, or HTTP Basic authentication with the token as password, or sign in at "+a.prefix+"/login")
	})
}

// public reports whether r may go without credentials: the login page and
// logging out.
func (a *authenticator) public(r *http.Request) bool {
	return r.URL.Path == a.prefix+"/login" || (r.URL.Path == a.prefix+"/logout" && r.Method == http.MethodPost)
}

// tokenOK compares got with the token in constant time, length included.
func (a *authenticator) tokenOK(got string) bool {
	digest := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(digest[:], a.digest[:]) == 1
}

// basicOK reports whether r carries HTTP Basic credentials whose password
// is the token; the user name is not checked.
func (a *authenticator) basicOK(r *http.Request) bool {
	_, password, ok := r.BasicAuth()
	return ok && a.tokenOK(password)
}

// session makes a session cookie's value: the expiry time in Unix seconds
// and its HMAC.
func (a *authenticator) session(expires time.Time) string {
	exp := strconv.FormatInt(expires.Unix(), 10)
	return exp + "." + a.sign(exp)
}

func (a *authenticator) sign(exp string) string {
	mac := hmac.New(sha256.New, a.key)
	mac.Write([]byte("session:" + exp))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// sessionOK reports whether r carries an unexpired session cookie of this
// token.
func (a *authenticator) sessionOK(r *http.Request) bool {
	for _, c := range r.CookiesNamed(sessionCookie) {
		exp, sig, ok := strings.Cut(c.Value, ".")
		if !ok {
			continue
		}
		unix, err := strconv.ParseInt(exp, 10, 64)
		if err != nil || !a.now().Before(time.Unix(unix, 0)) {
			continue
		}
		if hmac.Equal([]byte(sig), []byte(a.sign(exp))) {
			return true
		}
	}
	return false
}

// setSession sets the session cookie, or clears it when expires is zero.
func (a *authenticator) setSession(w http.ResponseWriter, r *http.Request, expires time.Time) {
	c := &http.Cookie{
		Name:     sessionCookie,
		Path:     a.cookiePath,
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   r.TLS != nil,
		MaxAge:   -1,
	}
	if !expires.IsZero() {
		c.Value = a.session(expires)
		c.MaxAge = int(expires.Sub(a.now()).Seconds())
		c.Expires = expires
	}
	http.SetCookie(w, c)
}

// localNext returns next when it is a path on this server under the
// prefix (and not the login page), cleaned, with its query; else the
// overview. It keeps the login page from being an open redirect.
func (a *authenticator) localNext(next string) string {
	home := a.prefix + "/"
	// A browser ignores tabs and newlines in a URL and reads a backslash as
	// a slash: "/\evil.example" would leave the site.
	if next == "" || strings.ContainsAny(next, "\\\t\r\n ") || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return home
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return home
	}
	clean := path.Clean(u.Path)
	if clean != a.prefix && !strings.HasPrefix(clean, a.prefix+"/") {
		return home
	}
	if clean == a.prefix+"/login" || clean == a.prefix+"/logout" {
		return home
	}
	if strings.HasSuffix(u.Path, "/") && clean != "/" {
		clean += "/"
	}
	return (&url.URL{Path: clean, RawQuery: u.RawQuery}).RequestURI()
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// wantsHTML reports whether r is a browser's request for a page.
func wantsHTML(r *http.Request) bool {
	for _, accept := range r.Header.Values("Accept") {
		if strings.Contains(accept, "text/html") {
			return true
		}
	}
	return false
}

// loginRedirect sends a browser to the login page, which brings it back
// to the page it asked for.
func (h *Handler) loginRedirect(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, h.prefix+"/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
}

// loginView is the login page.
type loginView struct {
	chrome
	Next string
}

func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	if !h.auth.enabled() {
		http.Redirect(w, r, h.prefix+"/", http.StatusSeeOther)
		return
	}
	h.renderLogin(w, r, http.StatusOK, "")
}

func (h *Handler) renderLogin(w http.ResponseWriter, r *http.Request, status int, errMsg string) {
	next := r.FormValue("next")
	v := &loginView{chrome: h.chrome(r, "Sign in", ""), Next: h.auth.localNext(next)}
	v.Error = errMsg
	v.SignOut = false
	h.render(w, r, status, loginTemplate, v)
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if !h.auth.enabled() {
		http.Redirect(w, r, h.prefix+"/", http.StatusSeeOther)
		return
	}
	if err := r.ParseForm(); err != nil {
		h.renderLogin(w, r, http.StatusBadRequest, "the form could not be read; try again")
		return
	}
	if !h.auth.tokenOK(r.PostFormValue("token")) {
		h.renderLogin(w, r, http.StatusUnauthorized, "wrong token")
		return
	}
	h.auth.setSession(w, r, h.auth.now().Add(sessionLifetime))
	http.Redirect(w, r, h.auth.localNext(r.PostFormValue("next")), http.StatusSeeOther)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if !h.auth.enabled() {
		http.Redirect(w, r, h.prefix+"/", http.StatusSeeOther)
		return
	}
	h.auth.setSession(w, r, time.Time{})
	http.Redirect(w, r, h.prefix+"/login?notice=signed-out", http.StatusSeeOther)
}
