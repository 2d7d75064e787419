package riverui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-go/tributary/workflow"
)

// tenantsView is the tenants page: the tenants of limited and rated
// workflow types (workflow.Client.Tenants), and forms to set or clear a
// tenant's own limit and rate.
type tenantsView struct {
	chrome
	Filtered bool
	Type     string
	Tenant   string
	Types    []string
	Rows     []tenantRow
	// The limit form as posted, when it failed.
	FormType, FormTenant, FormMax string
	// The rate form as posted, when it failed.
	RateType, RateTenant, RateLimit, RatePer string
}

// tenantRow is a tenant on the tenants page.
type tenantRow struct {
	T *workflow.Tenant
	// HeldLink lists its held runs on the runs page.
	HeldLink string
	// Source says where its limit comes from, for people; RateSource
	// where its rate does.
	Source     string
	RateSource string
	// NextToken is when its next token comes, for people ("2.3s"), while
	// runs wait for its rate.
	NextToken string
}

func (h *Handler) tenantsPage(w http.ResponseWriter, r *http.Request) {
	if err := h.showTenants(w, r, http.StatusOK, ""); err != nil {
		h.failPage(w, r, err)
	}
}

// showTenants renders the tenants page with status and errMsg. When it
// returns an error, it has written nothing.
func (h *Handler) showTenants(w http.ResponseWriter, r *http.Request, status int, errMsg string) error {
	q := r.URL.Query()
	v := &tenantsView{chrome: h.chrome(r, "Tenants", "tenants"), Type: q.Get("type"), Tenant: q.Get("tenant"), Types: h.wf.Types()}
	v.Error = errMsg
	v.Filtered = v.Type != "" || v.Tenant != ""
	v.FormType, v.FormTenant = v.Type, v.Tenant
	v.RateType, v.RateTenant = v.Type, v.Tenant
	switch {
	case r.Method == http.MethodPost && r.URL.Path == h.prefix+"/tenants/rate":
		v.RateType, v.RateTenant = r.PostFormValue("type"), r.PostFormValue("tenant")
		v.RateLimit, v.RatePer = r.PostFormValue("limit"), r.PostFormValue("per")
	case r.Method == http.MethodPost:
		v.FormType, v.FormTenant, v.FormMax = r.PostFormValue("type"), r.PostFormValue("tenant"), r.PostFormValue("max_running")
	}
	params, err := tenantParams(r)
	if err != nil {
		return err
	}
	tenants, err := h.wf.Tenants(r.Context(), params)
	if err != nil {
		return err
	}
	live := false
	for _, t := range tenants {
		row := tenantRow{T: t, HeldLink: h.runsQuery(url.Values{"type": {t.Type}, "tenant": {t.Tenant}, "status": {string(workflow.StatusPending)}})}
		if t.LimitSource != "" {
			row.Source = limitSourceText(t.LimitSource)
		}
		if t.RateSource != "" {
			row.RateSource = rateSourceText(t.RateSource)
		}
		if t.NextToken > 0 {
			row.NextToken = roundWait(t.NextToken).String()
		}
		v.Rows = append(v.Rows, row)
		live = live || t.Running > 0 || t.Held > 0 || t.RateLimited > 0
	}
	v.live(r, live)
	h.render(w, r, status, tenantsTemplate, v)
	return nil
}

// limitSourceText says where a tenant's limit comes from, for people.
func limitSourceText(source string) string {
	if source == "tenant" {
		return "limit set for the tenant"
	}
	return "the workflow type's limit"
}

// rateSourceText says where a tenant's rate comes from, for people.
func rateSourceText(source string) string {
	if source == "tenant" {
		return "rate set for the tenant"
	}
	return "the workflow type's rate"
}

// roundWait rounds a wait for people: to the millisecond under a second,
// to the tenth of a second above (as workflow.Tenant.RateWhy does).
func roundWait(d time.Duration) time.Duration {
	if d < time.Second {
		return max(d.Round(time.Millisecond), time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// tenantLimitForm serves POST /tenants/limit, a form of type, tenant and
// max_running: the tenant's own limit becomes max_running, or is removed
// when it is 0 or the form's clear button was pressed; back to the
// tenants page, filtered on the tenant, with a notice.
func (h *Handler) tenantLimitForm(w http.ResponseWriter, r *http.Request) {
	err := parseForm(r)
	if err == nil {
		err = h.setTenantLimitForm(w, r)
	}
	if err != nil {
		status, msg := h.statusOf(err)
		if h.showTenants(w, r, status, msg) != nil {
			h.errorPage(w, r, status, msg)
		}
	}
}

func (h *Handler) setTenantLimitForm(w http.ResponseWriter, r *http.Request) error {
	typ, tenant := strings.TrimSpace(r.PostFormValue("type")), r.PostFormValue("tenant")
	maxRunning := 0
	if r.PostFormValue("clear") == "" {
		s := strings.TrimSpace(r.PostFormValue("max_running"))
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return badField("max_running", "%q is not a number of runs; use 1 or more, or clear the tenant's own limit", s)
		}
		maxRunning = n
	}
	if err := typeField(h.wf.SetTenantLimit(r.Context(), typ, tenant, maxRunning)); err != nil {
		return err
	}
	notice := "limit-set"
	if maxRunning == 0 {
		notice = "limit-cleared"
	}
	h.seeOther(w, r, "/tenants", notice, url.Values{"type": {typ}, "tenant": {tenant}})
	return nil
}

// tenantRateForm serves POST /tenants/rate, a form of type, tenant, limit
// and per (a Go duration such as 1m): the tenant's own rate becomes limit
// per per, or is removed when limit is 0 or the form's clear button was
// pressed; back to the tenants page, filtered on the tenant, with a
// notice.
func (h *Handler) tenantRateForm(w http.ResponseWriter, r *http.Request) {
	err := parseForm(r)
	if err == nil {
		err = h.setTenantRateForm(w, r)
	}
	if err != nil {
		status, msg := h.statusOf(err)
		if h.showTenants(w, r, status, msg) != nil {
			h.errorPage(w, r, status, msg)
		}
	}
}

func (h *Handler) setTenantRateForm(w http.ResponseWriter, r *http.Request) error {
	typ, tenant := strings.TrimSpace(r.PostFormValue("type")), r.PostFormValue("tenant")
	var rate workflow.Rate
	if r.PostFormValue("clear") == "" {
		s := strings.TrimSpace(r.PostFormValue("limit"))
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return badField("limit", "%q is not a number of starts; use 1 or more, or clear the tenant's own rate", s)
		}
		if n > 0 {
			p := strings.TrimSpace(r.PostFormValue("per"))
			per, err := time.ParseDuration(p)
			if err != nil || per <= 0 {
				return badField("per", "%q is not a period; use a Go duration such as 1s, 1m or 1h", p)
			}
			rate = workflow.Rate{Limit: n, Per: per}
		}
	}
	if err := typeField(h.wf.SetTenantRate(r.Context(), typ, tenant, rate)); err != nil {
		return err
	}
	notice := "rate-set"
	if rate == (workflow.Rate{}) {
		notice = "rate-cleared"
	}
	h.seeOther(w, r, "/tenants", notice, url.Values{"type": {typ}, "tenant": {tenant}})
	return nil
}
