package riverui

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
)

// The grants pages: GET /grants lists the execution grants with a form to
// create one, GET /grants/{id} shows one with the schedules that run under
// it and a form to revoke it. Each form goes through the call behind the
// JSON API's route, and a refused form shows its page again with the
// error and what was typed; nothing is written then. A schedule's page
// shows its grant and warns when the grant skips its slots (grantWarning).

// grantsView is the grants page.
type grantsView struct {
	chrome
	Enabled bool
	// The filters: the subject, and whether revoked grants are listed.
	Subject string
	Revoked bool
	Rows    []grantRow
	Pager   pager
	// The create form as posted, when it failed; FieldErrors holds the
	// error of the field it names.
	Form        grantForm
	FieldErrors map[string]string
}

// grantRow is a grant in the listing, or the grant of a grant's page.
type grantRow struct {
	G *schedule.Grant
	// State is "active", "expired" or "revoked"; StateClass the status
	// class that colours it.
	State, StateClass string
	Expires           *moment
	Revoked           *moment
	Created           *moment
}

// grantForm is the create form's fields: scopes separated by commas,
// spaces or lines; expires_in a Go duration, or expires_at a time in UTC.
type grantForm struct {
	Subject, Scopes, ExpiresIn, ExpiresAt string
}

// grantView is the page of a grant.
type grantView struct {
	chrome
	grantRow
	Schedules []grantScheduleRow
	// More says the list stops at maxGrantSchedules schedules.
	More bool
	// Reason is the revoke form's reason as posted, when it failed.
	Reason string
	// MaxReason is how long a reason may be, in bytes.
	MaxReason int
}

// grantScheduleRow is a schedule under a grant, on the grant's page.
type grantScheduleRow struct {
	S    *schedule.Schedule
	Next *moment
	// Warning says what the grant does to the schedule's slots, when it
	// skips the next one (grantWarning).
	Warning string
}

// grantPath is the dashboard path of grant id's page, with suffix.
func grantPath(id uuid.UUID, suffix string) string {
	return "/grants/" + id.String() + suffix
}

// grantRowOf shows g as of now, its times in UTC.
func grantRowOf(g *schedule.Grant, now time.Time) grantRow {
	row := grantRow{G: g, State: "active", StateClass: "status-active", Expires: momentIn(g.ExpiresAt, time.UTC, now),
		Revoked: momentIn(g.RevokedAt, time.UTC, now), Created: momentIn(&g.CreatedAt, time.UTC, now)}
	switch {
	case g.RevokedAt != nil:
		row.State, row.StateClass = "revoked", "status-failed"
	case g.ExpiresAt != nil && !g.ExpiresAt.After(now):
		row.State, row.StateClass = "expired", "status-skipped"
	}
	return row
}

func (h *Handler) grantsPage(w http.ResponseWriter, r *http.Request) {
	if err := h.showGrants(w, r, http.StatusOK, "", nil); err != nil {
		h.failPage(w, r, err)
	}
}

// showGrants renders the grants page with status and errMsg, and
// fieldErrs beside the create form's fields. When it returns an error, it
// has written nothing.
func (h *Handler) showGrants(w http.ResponseWriter, r *http.Request, status int, errMsg string, fieldErrs map[string]string) error {
	q := r.URL.Query()
	v := &grantsView{chrome: h.chrome(r, "Grants", "grants"), Enabled: h.sc != nil, Subject: q.Get("subject"), FieldErrors: fieldErrs}
	v.Error = errMsg
	if r.Method == http.MethodPost {
		v.Form = grantForm{Subject: r.PostFormValue("subject"), Scopes: r.PostFormValue("scopes"),
			ExpiresIn: r.PostFormValue("expires_in"), ExpiresAt: r.PostFormValue("expires_at")}
	}
	if !v.Enabled {
		h.render(w, r, status, grantsTemplate, v)
		return nil
	}
	params, err := grantListParams(r)
	if err != nil {
		return err
	}
	v.Revoked = params.Revoked
	grants, err := h.sc.ListGrants(r.Context(), params)
	if err != nil {
		return err
	}
	for _, g := range grants {
		v.Rows = append(v.Rows, grantRowOf(g, v.Now))
	}
	last := uuid.Nil
	if n := len(grants); n > 0 {
		last = grants[n-1].ID
	}
	v.Pager = h.pagerOf("/grants", q, len(grants) > 0 && len(grants) == params.Limit, last)
	h.render(w, r, status, grantsTemplate, v)
	return nil
}

// createGrantForm serves POST /grants, a form of subject, scopes,
// expires_in or expires_at, and opens the new grant's page.
func (h *Handler) createGrantForm(w http.ResponseWriter, r *http.Request) {
	err := h.createGrantFromForm(w, r)
	if err == nil {
		return
	}
	err = grantError(err, "", false)
	status, msg := h.statusOf(err)
	var fieldErrs map[string]string
	if field := grantFormField(err); field != "" {
		fieldErrs = map[string]string{field: msg}
	}
	if h.showGrants(w, r, status, msg, fieldErrs) != nil {
		h.errorPage(w, r, status, msg)
	}
}

func (h *Handler) createGrantFromForm(w http.ResponseWriter, r *http.Request) error {
	if h.sc == nil {
		return errNoSchedules
	}
	if err := parseForm(r); err != nil {
		return err
	}
	p, err := grantParamsOf(r, time.Now())
	if err != nil {
		return err
	}
	g, err := h.sc.CreateGrant(r.Context(), p)
	if err != nil {
		return err
	}
	h.seeOther(w, r, grantPath(g.ID, ""), "grant-created", nil)
	return nil
}

// grantParamsOf reads the create form of r, its expires_in counted from
// now.
func grantParamsOf(r *http.Request, now time.Time) (*schedule.GrantParams, error) {
	p := &schedule.GrantParams{
		Subject: strings.TrimSpace(r.PostFormValue("subject")),
		Scopes: strings.FieldsFunc(r.PostFormValue("scopes"), func(c rune) bool {
			return c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n'
		}),
	}
	in, at := strings.TrimSpace(r.PostFormValue("expires_in")), strings.TrimSpace(r.PostFormValue("expires_at"))
	switch {
	case in != "" && at != "":
		return nil, inField("expires_in", badRequest("give an expiry as a duration or as a time, not both; leave both empty for a grant that lasts until revoked"))
	case in != "":
		d, err := time.ParseDuration(in)
		if err != nil || d <= 0 {
			return nil, inField("expires_in", badRequest("%q is not a positive Go duration such as 720h (30 days); leave it empty for a grant that lasts until revoked", in))
		}
		p.ExpiresAt = now.Add(d)
	case at != "":
		t, err := formTime("expiry", at, time.UTC)
		if err != nil {
			return nil, inField("expires_at", err)
		}
		p.ExpiresAt = t
	}
	return p, nil
}

// grantFormField is the form field a grant form's error is about:
// subject, scopes, expires_in or expires_at; "" for none.
func grantFormField(err error) string {
	var (
		field    string
		apiErr   *apiError
		fieldErr *fieldError
	)
	switch {
	case errors.As(err, &fieldErr):
		field = fieldErr.field
	case errors.As(err, &apiErr):
		field = apiErr.field
	}
	switch field {
	case "subject", "scopes", "expires_in", "expires_at":
		return field
	}
	return ""
}

// grantPageRoute serves a page or a form about the grant {id}: without a
// schedule client, or when fn fails, it answers the grant's page with the
// error, or an error page when the grant cannot be shown.
func (h *Handler) grantPageRoute(fn func(w http.ResponseWriter, r *http.Request, id uuid.UUID) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.sc == nil {
			h.failPage(w, r, errNoSchedules)
			return
		}
		id, err := parseID(r, "grant")
		if err != nil {
			h.failPage(w, r, err)
			return
		}
		if err = fn(w, r, id); err == nil {
			return
		}
		status, msg := h.statusOf(grantError(err, id.String(), false))
		if status == http.StatusNotFound || h.showGrant(w, r, id, status, msg) != nil {
			h.errorPage(w, r, status, msg)
		}
	})
}

func (h *Handler) grantPage(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	return h.showGrant(w, r, id, http.StatusOK, "")
}

// showGrant renders the page of grant id with status and errMsg, and the
// revoke form as posted when the request is a POST. When it returns an
// error, it has written nothing.
func (h *Handler) showGrant(w http.ResponseWriter, r *http.Request, id uuid.UUID, status int, errMsg string) error {
	ctx := r.Context()
	g, err := h.sc.GetGrant(ctx, id)
	if err != nil {
		return err
	}
	schedules, err := h.sc.GrantSchedules(ctx, id, maxGrantSchedules)
	if err != nil {
		return err
	}
	v := &grantView{chrome: h.chrome(r, "Grant "+g.Subject, "grants"), MaxReason: maxRevokeReason}
	v.grantRow = grantRowOf(g, v.Now)
	v.Error = errMsg
	v.More = len(schedules) == maxGrantSchedules
	for _, s := range schedules {
		_, loc := describe(s)
		row := grantScheduleRow{S: s, Warning: grantWarning(g, s, loc, v.Now)}
		if !s.Paused {
			row.Next = momentIn(s.NextFireAt, loc, v.Now)
		}
		v.Schedules = append(v.Schedules, row)
	}
	if r.Method == http.MethodPost {
		v.Reason = r.PostFormValue("reason")
	}
	h.render(w, r, status, grantTemplate, v)
	return nil
}

// revokeGrantForm serves POST /grants/{id}/revoke, a form of reason:
// refused, with the reason on the grant's page, for a grant revoked
// already.
func (h *Handler) revokeGrantForm(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	if err := parseForm(r); err != nil {
		return err
	}
	if _, err := h.revoke(r.Context(), id, r.PostFormValue("reason")); err != nil {
		return err
	}
	h.seeOther(w, r, grantPath(id, ""), "grant-revoked", nil)
	return nil
}

// grantWarning says what grant g (nil: it no longer exists) does to the
// slots of schedule s, whose zone is loc, as of now: that it skips every
// slot (revoked, expired, or without the scope of s's workflow type, by the
// rule of schedule.Grant.Check), or that it expires before s's next slot,
// which it will skip with every one after it; "" when it allows the next
// slot, or s is paused and the grant would allow a slot now.
func grantWarning(g *schedule.Grant, s *schedule.Schedule, loc *time.Location, now time.Time) string {
	if err := g.Check(s.Workflow, now); err != nil {
		var ge *schedule.GrantError
		if !errors.As(err, &ge) {
			return err.Error()
		}
		if g == nil {
			return fmt.Sprintf("grant %s no longer exists: every slot is skipped (%s)", s.GrantID, ge.Reason)
		}
		switch ge.Reason {
		case schedule.SkipReasonGrantRevoked:
			why := ""
			if g.RevokeReason != "" {
				why = fmt.Sprintf(" (%q)", g.RevokeReason)
			}
			return fmt.Sprintf("grant %s of %s was revoked %s%s: every slot is skipped (%s)", g.ID, g.Subject, utcText(*g.RevokedAt), why, ge.Reason)
		case schedule.SkipReasonGrantExpired:
			return fmt.Sprintf("grant %s of %s expired %s: every slot is skipped (%s)", g.ID, g.Subject, utcText(*g.ExpiresAt), ge.Reason)
		}
		return fmt.Sprintf("grant %s of %s does not have the scope %q or \"*\": every slot is skipped (%s)", g.ID, g.Subject, schedule.ScopeExecute(s.Workflow), ge.Reason)
	}
	if s.Paused || s.NextFireAt == nil || g.ExpiresAt == nil || g.ExpiresAt.After(*s.NextFireAt) {
		return ""
	}
	return fmt.Sprintf("grant %s of %s expires %s, before the next slot at %s: that slot and every one after it will be skipped (%s)",
		g.ID, g.Subject, utcText(*g.ExpiresAt), s.NextFireAt.In(loc).Format("2006-01-02 15:04 MST"), schedule.SkipReasonGrantExpired)
}

// utcText shows t in UTC to the minute, as the grant warnings do.
func utcText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 MST") }
