package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/workflow"
)

// newTenantsCommand is `tributary tenants`, which lists how the tenants of
// limited workflow types stand, and the group of its `limit` subcommands
// (tenants_limit.go), which set and clear a tenant's own limit.
func newTenantsCommand(env *Env) *cobra.Command {
	return group(command(env, &cobra.Command{
		Use:   "tenants [--type <type>] [--tenant <tenant>] [--limit <n>] [flags]",
		Short: "List the tenants with runs working or held back, or a limit of their own, with their limit",
		Long: `A workflow type defined with a TenantLimit lets at most that many runs of
one tenant work at once; a run over the limit is held back (status pending,
shown as "pending (held)" by 'workflow list'; its River job stays available)
until a run of its tenant ends its attempt.
An operator may give one tenant a limit of its own in place of the type's:
'tributary tenants limit set'.

tenants lists the tenants that have runs working, ready or held back, or a
limit of their own, those with the most runs waiting first. A tenant with as
many runs working as its limit has its waiting runs counted as HELD, else as
READY (waiting for its turn, its rate or a free worker). LIMIT says where the limit
comes from: "(tenant)" for the tenant's own, "(type)" for the type's
TenantLimit as its live workers register it; "-" for none.`,
		Example: `tributary tenants
			tributary tenants --type send_report --tenant acme
			tributary tenants limit set send_report acme 10`,
	}, setupTenants), newTenantsLimitCommand(env))
}

func setupTenants(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	typeName := fs.String("type", "", "list only the tenants of this workflow `type`")
	tenant := fs.String("tenant", "", "list only this `tenant`")
	limit := fs.Int("limit", defaultListLimit, fmt.Sprintf("list at most `n` tenants, at most %d (default %d)", maxListLimit, defaultListLimit))
	asJSON := fs.Bool("json", false, "print a JSON array of tenants instead of a table")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if err := checkTenantFlag(*tenant); err != nil {
			return err
		}
		if err := checkLimit(*limit); err != nil {
			return err
		}
		client, closePool, err := dbFlags.workflowClient(ctx)
		if err != nil {
			return err
		}
		defer closePool()

		tenants, err := client.Tenants(ctx, &workflow.TenantParams{Type: *typeName, Tenant: *tenant, Limit: *limit})
		if err != nil {
			return workflowError(err, uuid.Nil)
		}
		if *asJSON {
			return printJSON(env.Stdout, tenants)
		}
		if len(tenants) == 0 {
			_, err := fmt.Fprintln(env.Stdout, "no tenant has runs working or held back, or a limit of its own")
			return err
		}
		if err := printTenants(env.Stdout, tenants); err != nil {
			return err
		}
		if len(tenants) == *limit {
			fmt.Fprintf(env.Stderr, "note: there may be more tenants; narrow with --type or --tenant, or raise --limit (at most %d)\n", maxListLimit)
		}
		return nil
	}
}

func printTenants(w io.Writer, tenants []*workflow.Tenant) error {
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "WORKFLOW\tTENANT\tRUNNING\tREADY\tHELD\tLIMIT")
	for _, t := range tenants {
		fmt.Fprintf(table, "%s\t%s\t%d\t%d\t%d\t%s\n", oneLine(t.Type), oneLine(t.Tenant), t.Running, t.Ready, t.Held, limitText(t))
	}
	return table.Flush()
}

// limitText is a tenant's limit and where it comes from: "5 (tenant)", "2
// (type)", or "-" for none.
func limitText(t *workflow.Tenant) string {
	if t.LimitSource == "" {
		return "-"
	}
	return fmt.Sprintf("%d (%s)", t.Limit, t.LimitSource)
}

// findTenant returns how tenant of typ stands, or nil when Tenants does
// not list it (no runs working or held back, no limit of its own).
func findTenant(ctx context.Context, client *workflow.Client, typ, tenant string) (*workflow.Tenant, error) {
	tenants, err := client.Tenants(ctx, &workflow.TenantParams{Type: typ, Tenant: tenant, Limit: 1})
	if err != nil || len(tenants) == 0 {
		return nil, err
	}
	return tenants[0], nil
}

// heldText says why a held run waits, for `workflow get`: "waiting for a
// slot: acme has 5 of 5 running (limit set for the tenant)".
func heldText(t *workflow.Tenant) string {
	if t == nil || t.LimitSource == "" {
		return "waiting for a slot of its tenant"
	}
	return fmt.Sprintf("waiting for a slot: %s (%s)", t.Why(), limitSourceText(t.LimitSource))
}

// limitSourceText says where a limit comes from, in words.
func limitSourceText(source string) string {
	if source == "tenant" {
		return "limit set for the tenant"
	}
	return "the workflow type's limit"
}
