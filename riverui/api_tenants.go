package riverui

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/workflow"
)

// The tenants of limited and rated workflow types
// (workflow.DefineOpts.TenantLimit, TenantRate) on the wire: GET
// /api/tenants lists them (workflow.Client.Tenants); PUT and DELETE
// /api/tenants/{type}/{tenant}/limit set and remove a tenant's own limit
// (workflow.Client.SetTenantLimit), and /api/tenants/{type}/{tenant}/rate
// its own rate (workflow.Client.SetTenantRate).

func (h *Handler) listTenants(w http.ResponseWriter, r *http.Request) {
	err := checkQuery(r, "type", "tenant", "limit")
	var params *workflow.TenantParams
	if err == nil {
		params, err = tenantParams(r)
	}
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	tenants, err := h.wf.Tenants(r.Context(), params)
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.NewTenantList(tenants))
}

// tenantParams reads type=, tenant= and limit= of a tenant listing. A
// tenant= that is not a tenant name is refused: no run has it.
func tenantParams(r *http.Request) (*workflow.TenantParams, error) {
	q := r.URL.Query()
	params := &workflow.TenantParams{Type: strings.TrimSpace(q.Get("type"))}
	if params.Tenant = strings.TrimSpace(q.Get("tenant")); params.Tenant != "" {
		if err := workflow.CheckTenant("tenant", params.Tenant); err != nil {
			return nil, err
		}
	}
	var err error
	params.Limit, err = intParam(q.Get("limit"), defaultLimit)
	return params, err
}

// tenantLimitBody is the body of PUT /api/tenants/{type}/{tenant}/limit.
type tenantLimitBody struct {
	MaxRunning opt[int]
}

func (b *tenantLimitBody) spec() *bodySpec {
	return &bodySpec{what: "a limit", required: true, members: []member{{name: "max_running", dst: &b.MaxRunning}}}
}

// putTenantLimit answers PUT /api/tenants/{type}/{tenant}/limit, a
// {"max_running": n} body: the tenant's own limit becomes n (0 removes
// it), and the answer is the tenant as it stands then.
func (h *Handler) putTenantLimit(w http.ResponseWriter, r *http.Request) {
	var b tenantLimitBody
	_, err := b.spec().read(r)
	if err == nil && !b.MaxRunning.set {
		err = badField("max_running", `is missing; send the most runs of the tenant that may work at once: {"max_running": 5}, or 0 to remove the tenant's own limit`)
	}
	if err == nil {
		err = h.setTenantLimit(w, r, b.MaxRunning.value())
	}
	if err != nil {
		h.failJSON(w, r, err)
	}
}

// deleteTenantLimit answers DELETE /api/tenants/{type}/{tenant}/limit: the
// tenant's own limit is removed, and the answer is the tenant as it
// stands then.
func (h *Handler) deleteTenantLimit(w http.ResponseWriter, r *http.Request) {
	if err := h.setTenantLimit(w, r, 0); err != nil {
		h.failJSON(w, r, err)
	}
}

// setTenantLimit sets the limit of the path's {type} and {tenant} and
// answers the tenant.
func (h *Handler) setTenantLimit(w http.ResponseWriter, r *http.Request, maxRunning int) error {
	return h.setTenant(w, r, func(ctx context.Context, typ, tenant string) error {
		return h.wf.SetTenantLimit(ctx, typ, tenant, maxRunning)
	})
}

// setTenant applies set (a limit or a rate) to the path's {type} and
// {tenant} and answers the tenant as it then stands.
func (h *Handler) setTenant(w http.ResponseWriter, r *http.Request, set func(ctx context.Context, typ, tenant string) error) error {
	typ, tenant := r.PathValue("type"), r.PathValue("tenant")
	if err := typeField(set(r.Context(), typ, tenant)); err != nil {
		return err
	}
	t, err := wire.ReadTenant(r.Context(), h.wf, typ, tenant)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.NewTenant(t))
	return nil
}

// tenantRateBody is the body of PUT /api/tenants/{type}/{tenant}/rate.
type tenantRateBody struct {
	Limit opt[int]
	Per   opt[wire.Duration]
}

func (b *tenantRateBody) spec() *bodySpec {
	return &bodySpec{what: "a rate", required: true, members: []member{{name: "limit", dst: &b.Limit}, {name: "per", dst: &b.Per}}}
}

// putTenantRate answers PUT /api/tenants/{type}/{tenant}/rate, a
// {"limit": 100, "per": "1m"} body: the tenant's own rate becomes limit
// per per ({"limit": 0} removes it), and the answer is the tenant as it
// stands then.
func (h *Handler) putTenantRate(w http.ResponseWriter, r *http.Request) {
	var b tenantRateBody
	_, err := b.spec().read(r)
	if err == nil {
		var rate workflow.Rate
		if rate, err = b.rate(); err == nil {
			err = h.setTenantRate(w, r, rate)
		}
	}
	if err != nil {
		h.failJSON(w, r, err)
	}
}

// rate is the body's rate, the zero Rate for a limit of 0.
func (b *tenantRateBody) rate() (workflow.Rate, error) {
	limit, per := b.Limit.value(), time.Duration(b.Per.value())
	switch {
	case !b.Limit.set || b.Limit.null:
		return workflow.Rate{}, badField("limit", `is missing; send the most attempts of the tenant's runs that start per period: {"limit": 100, "per": "1m"}, or {"limit": 0} to remove the tenant's own rate`)
	case limit < 0:
		return workflow.Rate{}, badField("limit", "is %d; use 1 or more, or 0 to remove the tenant's own rate", limit)
	case limit == 0:
		return workflow.Rate{}, nil
	case per == 0:
		return workflow.Rate{}, badField("per", `is missing or 0s; send the rate's period, a Go duration such as "1m": {"limit": %d, "per": "1m"}`, limit)
	}
	return workflow.Rate{Limit: limit, Per: per}, nil
}

// deleteTenantRate answers DELETE /api/tenants/{type}/{tenant}/rate: the
// tenant's own rate is removed, and the answer is the tenant as it stands
// then.
func (h *Handler) deleteTenantRate(w http.ResponseWriter, r *http.Request) {
	if err := h.setTenantRate(w, r, workflow.Rate{}); err != nil {
		h.failJSON(w, r, err)
	}
}

// setTenantRate sets the rate of the path's {type} and {tenant} and
// answers the tenant.
func (h *Handler) setTenantRate(w http.ResponseWriter, r *http.Request, rate workflow.Rate) error {
	return h.setTenant(w, r, func(ctx context.Context, typ, tenant string) error {
		return h.wf.SetTenantRate(ctx, typ, tenant, rate)
	})
}

// typeField names the workflow type of a tenant's limit or rate "type",
// as the API and the forms do, in a validation error of
// workflow.SetTenantLimit or SetTenantRate, which call it "name".
func typeField(err error) error {
	var invalid *workflow.ValidationError
	if errors.As(err, &invalid) && invalid.Field == "name" {
		return badField("type", "%s", invalid.Problem)
	}
	return err
}
