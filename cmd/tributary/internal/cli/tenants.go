package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/workflow"
)

// newTenantsCommand is `tributary tenants`, which lists how the tenants of
// limited and rated workflow types stand, and the groups of its `limit`
// subcommands (tenants_limit.go), which set and clear a tenant's own limit,
// and of its `rate` subcommands (tenants_rate.go), its own rate.
func newTenantsCommand(env *Env) *cobra.Command {
	return group(command(env, &cobra.Command{
		Use:   "tenants [--type <type>] [--tenant <tenant>] [--limit <n>] [flags]",
		Short: "List the tenants with runs working or waiting, or a limit or rate of their own, with their limit and rate",
		Long: `A workflow type defined with a TenantLimit lets at most that many runs of
one tenant work at once; a run over the limit is held back (status pending,
shown as "pending (held)" by 'workflow list'; its River job stays available)
until a run of its tenant ends its attempt. One defined with a TenantRate
starts at most so many attempts of one tenant per period; a ready run beyond
its tenant's tokens waits for the rate ("pending (rate-limited)") and starts
in its tenant's turn once a token is there for it.
An operator may give one tenant a limit or a rate of its own in place of
the type's: 'tributary tenants limit set', 'tributary tenants rate set'.

tenants lists the tenants that have runs working or waiting, or a limit or
rate of their own, those with the most runs waiting first. A tenant with as
many runs working as its limit has its waiting runs counted as HELD. Of the
others, those whose place in their tenant's line (its ready runs of the
type in their queue, oldest first) is beyond the whole tokens of the
tenant's bucket are RATE-LIMITED (with when its next token comes), and the
rest READY (waiting for their tenant's turn or a free worker). LIMIT and
RATE say where each comes from: "(tenant)" for the tenant's own, "(type)"
for the type's TenantLimit or TenantRate as its live workers register it;
"-" for none.`,
		Example: `tributary tenants
			tributary tenants --type send_report --tenant acme
			tributary tenants limit set send_report acme 10
			tributary tenants rate set call_partner acme 100 1m`,
	}, setupTenants), newTenantsLimitCommand(env), newTenantsRateCommand(env))
}

func setupTenants(fs *pflag.FlagSet, env *Env) Action {
	typeName := fs.String("type", "", "list only the tenants of this workflow `type`")
	tenant := fs.String("tenant", "", "list only this `tenant`")
	limit := fs.Int("limit", defaultListLimit, fmt.Sprintf("list at most `n` tenants, at most %d (default %d)", maxListLimit, defaultListLimit))
	parse := func(args []string) (struct{}, error) {
		if err := noArgs(args); err != nil {
			return struct{}{}, err
		}
		if err := checkTenantFlag(*tenant); err != nil {
			return struct{}{}, err
		}
		if err := checkLimit(*limit); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, nil
	}
	return dbCommand(fs, env, dbSpec{json: `print the tenants as JSON, {"tenants": […]} as GET /api/tenants answers it, instead of a table`}, parse, func(ctx context.Context, c *commandRun, _ struct{}) error {
		tenants, err := c.wf.Tenants(ctx, &workflow.TenantParams{Type: *typeName, Tenant: *tenant, Limit: *limit})
		if err != nil {
			return workflowError(err, uuid.Nil)
		}
		if c.asJSON {
			return printJSON(env.Stdout, wire.NewTenantList(tenants))
		}
		if len(tenants) == 0 {
			_, err := fmt.Fprintln(env.Stdout, "no tenant has runs working or waiting, or a limit or rate of its own")
			return err
		}
		if err := printTenants(env.Stdout, tenants); err != nil {
			return err
		}
		if len(tenants) == *limit {
			fmt.Fprintf(env.Stderr, "note: there may be more tenants; narrow with --type or --tenant, or raise --limit (at most %d)\n", maxListLimit)
		}
		return nil
	})
}

func printTenants(w io.Writer, tenants []*workflow.Tenant) error {
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "WORKFLOW\tTENANT\tRUNNING\tREADY\tHELD\tRATE-LIMITED\tLIMIT\tRATE")
	for _, t := range tenants {
		fmt.Fprintf(table, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n", oneLine(t.Type), oneLine(t.Tenant), t.Running, t.Ready, t.Held,
			rateLimitedText(t), limitText(t), rateText(t))
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

// rateText is a tenant's rate and where it comes from: "100 per 1m0s
// (tenant)", or "-" for none.
func rateText(t *workflow.Tenant) string {
	if t.RateSource == "" {
		return "-"
	}
	return fmt.Sprintf("%s (%s)", t.Rate, t.RateSource)
}

// rateLimitedText is how many of a tenant's runs wait for its rate, and
// when its next token comes: "4 (next in 2.3s)", or "0".
func rateLimitedText(t *workflow.Tenant) string {
	if t.RateLimited == 0 || t.NextToken <= 0 {
		return fmt.Sprint(t.RateLimited)
	}
	return fmt.Sprintf("%d (next in %s)", t.RateLimited, roundWait(t.NextToken))
}

// roundWait rounds a wait for people: to the millisecond under a second,
// to the tenth of a second above (as workflow.Tenant.RateWhy does).
func roundWait(d time.Duration) time.Duration {
	if d < time.Second {
		return max(d.Round(time.Millisecond), time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// findTenant returns how tenant of typ stands, or nil when Tenants does
// not list it (no runs working or waiting, no limit or rate of its own).
func findTenant(ctx context.Context, client *workflow.Client, typ, tenant string) (*workflow.Tenant, error) {
	tenants, err := client.Tenants(ctx, &workflow.TenantParams{Type: typ, Tenant: tenant, Limit: 1})
	if err != nil || len(tenants) == 0 {
		return nil, err
	}
	return tenants[0], nil
}

// heldText says why a run held for reason (workflow.Run.Held) waits, for
// `workflow get`: "waiting for a slot: acme has 5 of 5 running (limit set
// for the tenant)", or "waiting for its rate: acme is at its rate, 100 per
// 1m0s; next token in 2.3s (the workflow type's rate)".
func heldText(reason string, t *workflow.Tenant) string {
	if reason == workflow.HeldTenantRate {
		if t == nil || t.RateSource == "" {
			return "waiting for its rate"
		}
		return fmt.Sprintf("waiting for its rate: %s (%s)", t.RateWhy(), rateSourceText(t.RateSource))
	}
	if t == nil || t.LimitSource == "" {
		return "waiting for a slot of its tenant"
	}
	return fmt.Sprintf("waiting for a slot: %s (%s)", t.Why(), limitSourceText(t.LimitSource))
}

// rateSourceText says where a rate comes from, in words.
func rateSourceText(source string) string {
	if source == "tenant" {
		return "rate set for the tenant"
	}
	return "the workflow type's rate"
}

// limitSourceText says where a limit comes from, in words.
func limitSourceText(source string) string {
	if source == "tenant" {
		return "limit set for the tenant"
	}
	return "the workflow type's limit"
}
