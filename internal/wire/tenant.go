package wire

import (
	"time"

	"github.com/tributary-go/tributary/workflow"
)

// Tenant is a tenant of a workflow type: workflow.Tenant on the wire.
type Tenant struct {
	Type        string `json:"type"`
	Tenant      string `json:"tenant"`
	Running     int    `json:"running"`
	Ready       int    `json:"ready"`
	Held        int    `json:"held"`
	RateLimited int    `json:"rate_limited"`
	Limit       int    `json:"limit"`
	LimitSource string `json:"limit_source"`
	Rate        *Rate  `json:"rate"`
	RateSource  string `json:"rate_source"`
	// NextToken is workflow.Tenant.NextToken, a Go duration to the
	// millisecond; "" while no run waits for the rate.
	NextToken string `json:"next_token"`
}

// Rate is a workflow.Rate on the wire: {"limit": 100, "per": "1m0s"}.
type Rate struct {
	Limit int      `json:"limit"`
	Per   Duration `json:"per"`
}

// NewTenant is t on the wire.
func NewTenant(t *workflow.Tenant) Tenant {
	out := Tenant{Type: t.Type, Tenant: t.Tenant, Running: t.Running, Ready: t.Ready, Held: t.Held, RateLimited: t.RateLimited,
		Limit: t.Limit, LimitSource: t.LimitSource, RateSource: t.RateSource}
	if t.Rate != (workflow.Rate{}) {
		out.Rate = &Rate{Limit: t.Rate.Limit, Per: Duration(t.Rate.Per)}
	}
	if t.NextToken > 0 {
		out.NextToken = max(t.NextToken.Round(time.Millisecond), time.Millisecond).String()
	}
	return out
}

// TenantList is a listing of tenants.
type TenantList struct {
	Tenants []Tenant `json:"tenants"`
}

// NewTenantList is tenants on the wire.
func NewTenantList(tenants []*workflow.Tenant) *TenantList {
	out := &TenantList{Tenants: make([]Tenant, 0, len(tenants))}
	for _, t := range tenants {
		out.Tenants = append(out.Tenants, NewTenant(t))
	}
	return out
}
