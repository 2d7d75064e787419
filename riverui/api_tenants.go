package riverui

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/tributary-go/tributary/workflow"
)

// The tenants of limited workflow types (workflow.DefineOpts.TenantLimit)
// on the wire: GET /api/tenants lists them (workflow.Client.Tenants), and
// PUT and DELETE /api/tenants/{type}/{tenant}/limit set and remove a
// tenant's own limit (workflow.Client.SetTenantLimit).

// tenantJSON is a tenant of a workflow type: workflow.Tenant on the wire.
type tenantJSON struct {
	Type        string `json:"type"`
	Tenant      string `json:"tenant"`
	Running     int    `json:"running"`
	Ready       int    `json:"ready"`
	Held        int    `json:"held"`
	Limit       int    `json:"limit"`
	LimitSource string `json:"limit_source"`
}

// tenantList is the answer of GET /api/tenants.
type tenantList struct {
	Tenants []tenantJSON `json:"tenants"`
}

func tenantWire(t *workflow.Tenant) tenantJSON {
	return tenantJSON{Type: t.Type, Tenant: t.Tenant, Running: t.Running, Ready: t.Ready, Held: t.Held, Limit: t.Limit, LimitSource: t.LimitSource}
}

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
	out := tenantList{Tenants: make([]tenantJSON, 0, len(tenants))}
	for _, t := range tenants {
		out.Tenants = append(out.Tenants, tenantWire(t))
	}
	writeJSON(w, http.StatusOK, out)
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
	typ, tenant := r.PathValue("type"), r.PathValue("tenant")
	if err := typeField(h.wf.SetTenantLimit(r.Context(), typ, tenant, maxRunning)); err != nil {
		return err
	}
	t, err := tenantOf(r.Context(), h.wf, typ, tenant)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tenantWire(t))
	return nil
}

// typeField names the workflow type of a tenant's limit "type", as the
// API and the form do, in a validation error of workflow.SetTenantLimit,
// which calls it "name".
func typeField(err error) error {
	var invalid *workflow.ValidationError
	if errors.As(err, &invalid) && invalid.Field == "name" {
		return badField("type", "%s", invalid.Problem)
	}
	return err
}

// tenantOf is how tenant of typ stands; one Tenants does not list (no runs
// working or held back, no limit of its own) has nothing running or held
// and no limit known.
func tenantOf(ctx context.Context, wf *workflow.Client, typ, tenant string) (*workflow.Tenant, error) {
	tenants, err := wf.Tenants(ctx, &workflow.TenantParams{Type: typ, Tenant: tenant, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(tenants) == 0 {
		return &workflow.Tenant{Type: typ, Tenant: tenant}, nil
	}
	return tenants[0], nil
}

// heldReasons says why each held run of runs waits (workflow.Tenant.Why),
// by run id, reading each tenant of a held run once.
func heldReasons(ctx context.Context, wf *workflow.Client, runs []*workflow.Run) (map[[16]byte]string, error) {
	type pair struct{ typ, tenant string }
	why := map[pair]string{}
	out := map[[16]byte]string{}
	for _, run := range runs {
		if !isHeld(run) {
			continue
		}
		p := pair{run.Type, run.Tenant}
		reason, ok := why[p]
		if !ok {
			t, err := tenantOf(ctx, wf, run.Type, run.Tenant)
			if err != nil {
				return nil, err
			}
			reason = heldReason(t)
			why[p] = reason
		}
		out[run.ID] = reason
	}
	return out, nil
}

// heldReason is why a held run of tenant t waits: "acme has 5 of 5
// running".
func heldReason(t *workflow.Tenant) string {
	if t.LimitSource == "" {
		return t.Tenant + " has every slot taken"
	}
	return t.Why()
}

// isHeld reports whether run is held back (workflow.Run.Held) and still
// waits: a run cancelled while held keeps its mark but waits for nothing.
func isHeld(run *workflow.Run) bool {
	return run.Held != "" && run.Status == workflow.StatusPending
}
