package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/workflow"
)

// newTenantsRateCommand is the `tributary tenants rate` group.
func newTenantsRateCommand(env *Env) *cobra.Command {
	return group(&cobra.Command{
		Use:     "rate",
		Short:   "Set or clear one tenant's own rate of attempts started",
		Example: `tributary tenants rate set call_partner acme 100 1m`,
	},
		newTenantsRateSetCommand(env),
		newTenantsRateClearCommand(env),
	)
}

// newTenantsRateSetCommand is `tributary tenants rate set`.
func newTenantsRateSetCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "set <type> <tenant> <n> <per> [flags]",
		Short: "Let at most n attempts of a workflow type and tenant start per period, in place of the type's TenantRate",
		Long: `set gives a tenant its own rate, in place of the workflow type's
DefineOpts.TenantRate, across every client, from the next fetch: at most
<n> attempts of the tenant's runs start per <per>, a Go duration such as
1s, 1m or 1h. The tenant's bucket keeps its tokens and refills at the new
rate from when it was last read; a run already started is not stopped.
Only types defined with a TenantRate are rated: a tenant's rate on another
type is kept, and applies once the type has one.`,
		Example: `tributary tenants rate set call_partner acme 100 1m`,
	}, setupTenantsRateSet)
}

// newTenantsRateClearCommand is `tributary tenants rate clear`.
func newTenantsRateClearCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "clear <type> <tenant> [flags]",
		Short:   "Remove a tenant's own rate: the workflow type's TenantRate applies again",
		Example: `tributary tenants rate clear call_partner acme`,
	}, setupTenantsRateClear)
}

// tenantRate is what `tenants rate set` and `clear` are asked: a workflow
// type's tenant and its own rate, the zero Rate to clear it.
type tenantRate struct {
	typ, tenant string
	rate        workflow.Rate
}

func setupTenantsRateSet(fs *pflag.FlagSet, env *Env) Action {
	parse := func(args []string) (tenantRate, error) {
		if err := tenantArgs("rate set", args, "type", "tenant", "n", "per"); err != nil {
			return tenantRate{}, err
		}
		example := fmt.Sprintf("'tributary tenants rate set %s %s 100 1m'", args[0], args[1])
		n, err := strconv.Atoi(args[2])
		switch {
		case err != nil || n < 0:
			return tenantRate{}, withHint(usageErrorf("<n> %q is not a number of attempts", args[2]), "pass 1 or more, such as "+example)
		case n == 0:
			return tenantRate{}, withHint(usageErrorf("<n> is 0, which would let no attempt of the tenant start"),
				fmt.Sprintf("pass 1 or more; to remove the tenant's own rate run 'tributary tenants rate clear %s %s'", args[0], args[1]))
		}
		per, err := time.ParseDuration(args[3])
		if err != nil || per <= 0 {
			return tenantRate{}, withHint(usageErrorf("<per> %q is not a period", args[3]), "pass a Go duration such as 1s, 1m or 1h: "+example)
		}
		return tenantRate{args[0], args[1], workflow.Rate{Limit: n, Per: per}}, nil
	}
	return dbCommand(fs, env, dbSpec{}, parse, changeTenantRate)
}

func setupTenantsRateClear(fs *pflag.FlagSet, env *Env) Action {
	parse := func(args []string) (tenantRate, error) {
		if err := tenantArgs("rate clear", args, "type", "tenant"); err != nil {
			return tenantRate{}, err
		}
		return tenantRate{typ: args[0], tenant: args[1]}, nil
	}
	return dbCommand(fs, env, dbSpec{}, parse, changeTenantRate)
}

// changeTenantRate sets r's tenant's own rate to r.rate, or clears it for
// the zero Rate, and prints what changed.
func changeTenantRate(ctx context.Context, c *commandRun, r tenantRate) error {
	client, typ, tenant, rate := c.wf, r.typ, r.tenant, r.rate

	before, err := findTenant(ctx, client, typ, tenant)
	if err != nil {
		return workflowError(err, uuid.Nil)
	}
	if err := client.SetTenantRate(ctx, typ, tenant, rate); err != nil {
		var invalid *workflow.ValidationError
		if errors.As(err, &invalid) {
			switch invalid.Field {
			case "name":
				return withHint(usageErrorf("<type> %s", invalid.Problem), "pass the workflow type's name, as 'tributary tenants' lists it")
			case "rate.Limit":
				return usageErrorf("<n> %s", invalid.Problem)
			case "rate.Per":
				return usageErrorf("<per> %s", invalid.Problem)
			}
		}
		return workflowError(err, uuid.Nil)
	}
	after, err := findTenant(ctx, client, typ, tenant)
	if err != nil {
		return workflowError(err, uuid.Nil)
	}
	_, err = fmt.Fprintln(c.env.Stdout, tenantRateChange(typ, tenant, rate, before, after))
	return err
}

// tenantRateChange says what setting typ's tenant's own rate to rate (the
// zero Rate: clearing it) changed, from how the tenant stood before to
// after (nil when not listed).
func tenantRateChange(typ, tenant string, rate workflow.Rate, before, after *workflow.Tenant) string {
	was := "no rate of its own"
	if before != nil && before.RateSource == "tenant" {
		was = "its own rate of " + before.Rate.String()
	}
	now := "no rate applies unless the type has a TenantRate"
	if after != nil && after.RateSource != "" {
		now = fmt.Sprintf("%d ready, %d rate-limited, rate %s", after.Ready, after.RateLimited, rateText(after))
		if after.RateLimited > 0 && after.NextToken > 0 {
			now += fmt.Sprintf("; next token in %s", roundWait(after.NextToken))
		}
	}
	subject := fmt.Sprintf("tenant %s of %s", oneLine(tenant), oneLine(typ))
	switch {
	case rate != (workflow.Rate{}):
		return fmt.Sprintf("%s: at most %d attempts per %s (was %s); now %s", subject, rate.Limit, rate.Per, was, now)
	case before == nil || before.RateSource != "tenant":
		return fmt.Sprintf("%s had no rate of its own; nothing changed (%s)", subject, now)
	}
	return fmt.Sprintf("%s: removed its own rate of %s; now %s", subject, before.Rate, now)
}
