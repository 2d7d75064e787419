package workflow

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// tenantChild returns its run's tenant; tenantParent returns its own and
// its child's, the child started with opts' tenant.
var (
	tenantChild  = Define("tenant_child", func(ctx Context, _ struct{}) (string, error) { return ctx.Run().Tenant, nil }, nil)
	tenantParent = Define("tenant_parent", func(ctx Context, childTenant string) ([2]string, error) {
		var opts *StartOpts
		if childTenant != "" {
			opts = &StartOpts{Tenant: childTenant}
		}
		child, err := RunChild(ctx, "child", tenantChild, struct{}{}, opts)
		return [2]string{ctx.Run().Tenant, child}, err
	}, nil)
)

// TestTenant starts runs with a tenant: the run stores it, GetRun and
// ListRuns show it, the workflow reads it from RunInfo, and a child run
// carries its parent's unless its StartOpts name another.
func TestTenant(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	c := startClient(t, db, tenantParent, tenantChild)
	ctx := ctxT(t)

	inherit, err := tenantParent.Start(ctx, c, "", &StartOpts{Tenant: "acme"})
	require.NoError(t, err)
	own, err := tenantParent.Start(ctx, c, "partner-7", &StartOpts{Tenant: "Globex Corp"})
	require.NoError(t, err)
	none, err := tenantParent.Start(ctx, c, "", nil)
	require.NoError(t, err)

	out, err := inherit.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, [2]string{"acme", "acme"}, out, "the child carries its parent's tenant")
	out, err = own.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, [2]string{"Globex Corp", "partner-7"}, out, "the child's StartOpts name its own")
	out, err = none.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, [2]string{"", ""}, out)

	run, err := c.GetRun(ctx, inherit.ID)
	require.NoError(t, err)
	require.Equal(t, "acme", run.Tenant)

	tenants := func(p *ListParams) []string {
		runs, err := c.ListRuns(ctx, p)
		require.NoError(t, err)
		var found []string
		for _, r := range runs {
			found = append(found, r.Type+"/"+r.Tenant)
		}
		return found
	}
	require.Equal(t, []string{"tenant_child/acme", "tenant_parent/acme"}, tenants(&ListParams{Tenant: "acme"}))
	require.Equal(t, []string{"tenant_parent/acme"}, tenants(&ListParams{Tenant: "acme", Type: "tenant_parent"}))
	require.Equal(t, []string{"tenant_child/partner-7"}, tenants(&ListParams{Tenant: "partner-7", Status: StatusCompleted}))
	require.Empty(t, tenants(&ListParams{Tenant: "nobody"}))
}

// TestTenantRefused: a tenant that is empty where one is required, too
// long, not UTF-8, with a character that cannot be shown, or with a space
// at an end is a *ValidationError naming StartOpts.Tenant, and nothing is
// written.
func TestTenantRefused(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	c, err := NewClient(db.Pool, &Config{Schema: db.Schema})
	require.NoError(t, err)
	ctx := ctxT(t)

	for _, tenant := range []string{
		strings.Repeat("t", MaxTenantBytes+1),
		"acme\xff",
		"acme\nco",
		"tab\there",
		"zero\u200bwidth",
		" acme",
		"acme ",
	} {
		_, err := c.StartByName(ctx, "report", nil, &StartOpts{Tenant: tenant})
		var verr *ValidationError
		require.ErrorAs(t, err, &verr, "%q", tenant)
		require.Equal(t, "StartOpts.Tenant", verr.Field, "%q", tenant)
		require.ErrorIs(t, err, ErrInvalid)
	}
	require.Zero(t, countRows(t, db.Pool, "SELECT count(*) FROM workflow_runs"))
	require.Zero(t, countRows(t, db.Pool, "SELECT count(*) FROM river_job"))

	require.NoError(t, CheckTenant("t", strings.Repeat("é", MaxTenantBytes/2)), "100 bytes of two-byte characters")
	require.Error(t, CheckTenant("t", ""))
}
