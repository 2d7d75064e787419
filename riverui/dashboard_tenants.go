package riverui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tributary-go/tributary/workflow"
)

// tenantsView is the tenants page: the tenants of limited workflow types
// (workflow.Client.Tenants), and a form to set or clear a tenant's own
// limit.
type tenantsView struct {
	chrome
	Filtered bool
	Type     string
	Tenant   string
	Types    []string
	Rows     []tenantRow
	// The limit form as posted, when it failed.
	FormType, FormTenant, FormMax string
}

// tenantRow is a tenant on the tenants page.
type tenantRow struct {
	T *workflow.Tenant
	// HeldLink lists its held runs on the runs page.
	HeldLink string
	// Source says where its limit comes from, for people.
	Source string
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
	if r.Method == http.MethodPost {
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
		v.Rows = append(v.Rows, row)
		live = live || t.Running > 0 || t.Held > 0
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
