package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/workflow"
)

// newTenantsLimitCommand is the `tributary tenants limit` group.
func newTenantsLimitCommand(env *Env) *cobra.Command {
	return group(&cobra.Command{
		Use:     "limit",
		Short:   "Set or clear one tenant's own limit of runs working at once",
		Example: `tributary tenants limit set send_report acme 10`,
	},
		newTenantsLimitSetCommand(env),
		newTenantsLimitClearCommand(env),
	)
}

// newTenantsLimitSetCommand is `tributary tenants limit set`.
func newTenantsLimitSetCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "set <type> <tenant> <n> [flags]",
		Short: "Let at most n runs of a workflow type and tenant work at once, in place of the type's TenantLimit",
		Long: `set gives a tenant its own limit, in place of the workflow type's
DefineOpts.TenantLimit, across every client, at once: a limit raised starts
held runs for the new slots; one lowered holds back the next attempts until
enough running ones have ended (none is stopped). Only types defined with a
TenantLimit are limited: a tenant's limit on another type is kept, and
applies once the type has one.`,
		Example: `tributary tenants limit set send_report acme 10`,
	}, setupTenantsLimitSet)
}

// newTenantsLimitClearCommand is `tributary tenants limit clear`.
func newTenantsLimitClearCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "clear <type> <tenant> [flags]",
		Short:   "Remove a tenant's own limit: the workflow type's TenantLimit applies again",
		Example: `tributary tenants limit clear send_report acme`,
	}, setupTenantsLimitClear)
}

// tenantLimit is what `tenants limit set` and `clear` are asked: a workflow
// type's tenant and its own limit, 0 to clear it.
type tenantLimit struct {
	typ, tenant string
	n           int
}

func setupTenantsLimitSet(fs *pflag.FlagSet, env *Env) Action {
	parse := func(args []string) (tenantLimit, error) {
		if err := tenantLimitArgs("set", args, "type", "tenant", "n"); err != nil {
			return tenantLimit{}, err
		}
		n, err := strconv.Atoi(args[2])
		switch {
		case err != nil || n < 0:
			return tenantLimit{}, withHint(usageErrorf("<n> %q is not a number of runs", args[2]), "pass 1 or more, such as 'tributary tenants limit set "+args[0]+" "+args[1]+" 5'")
		case n == 0:
			return tenantLimit{}, withHint(usageErrorf("<n> is 0, which would let no run of the tenant work"),
				fmt.Sprintf("pass 1 or more; to remove the tenant's own limit run 'tributary tenants limit clear %s %s'", args[0], args[1]))
		}
		return tenantLimit{args[0], args[1], n}, nil
	}
	return dbCommand(fs, env, dbSpec{}, parse, changeTenantLimit)
}

func setupTenantsLimitClear(fs *pflag.FlagSet, env *Env) Action {
	parse := func(args []string) (tenantLimit, error) {
		if err := tenantLimitArgs("clear", args, "type", "tenant"); err != nil {
			return tenantLimit{}, err
		}
		return tenantLimit{typ: args[0], tenant: args[1]}, nil
	}
	return dbCommand(fs, env, dbSpec{}, parse, changeTenantLimit)
}

// tenantLimitArgs checks the arguments of `tenants limit <cmd>`.
func tenantLimitArgs(cmd string, args []string, names ...string) error {
	return tenantArgs("limit "+cmd, args, names...)
}

// tenantArgs checks the arguments of `tenants <cmd>` (such as "limit set"):
// names, the second of which is a tenant.
func tenantArgs(cmd string, args []string, names ...string) error {
	usage := fmt.Sprintf("'tributary tenants %s <%s>'", cmd, joinArgs(names))
	if len(args) < len(names) {
		return withHint(usageErrorf("tenants %s needs <%s>", cmd, joinArgs(names[len(args):])),
			"run it as "+usage+"; see the tenants with 'tributary tenants'")
	}
	if len(args) > len(names) {
		return withHint(usageErrorf("unexpected argument %q", args[len(names)]), "run it as "+usage)
	}
	return checkTenantArg(args[1])
}

func joinArgs(names []string) string {
	out := names[0]
	for _, n := range names[1:] {
		out += "> <" + n
	}
	return out
}

// checkTenantArg refuses a <tenant> that is not a tenant name, in the
// argument's words, before anything is written.
func checkTenantArg(tenant string) error {
	err := workflow.CheckTenant("<tenant>", tenant)
	var invalid *workflow.ValidationError
	if errors.As(err, &invalid) {
		return withHint(usageErrorf("<tenant> %s", invalid.Problem),
			fmt.Sprintf("pass a name of 1 to %d bytes of printable characters, such as acme or customer-42", workflow.MaxTenantBytes))
	}
	return err
}

// changeTenantLimit sets l's tenant's own limit to l.n, or clears it for
// 0, and prints what changed.
func changeTenantLimit(ctx context.Context, c *commandRun, l tenantLimit) error {
	client, typ, tenant, n := c.wf, l.typ, l.tenant, l.n

	before, err := findTenant(ctx, client, typ, tenant)
	if err != nil {
		return workflowError(err, uuid.Nil)
	}
	if err := client.SetTenantLimit(ctx, typ, tenant, n); err != nil {
		var invalid *workflow.ValidationError
		if errors.As(err, &invalid) && invalid.Field == "name" {
			return withHint(usageErrorf("<type> %s", invalid.Problem), "pass the workflow type's name, as 'tributary tenants' lists it")
		}
		return workflowError(err, uuid.Nil)
	}
	after, err := findTenant(ctx, client, typ, tenant)
	if err != nil {
		return workflowError(err, uuid.Nil)
	}
	_, err = fmt.Fprintln(c.env.Stdout, tenantLimitChange(typ, tenant, n, before, after))
	return err
}

// tenantLimitChange says what setting typ's tenant's own limit to n (0:
// clearing it) changed, from how the tenant stood before to after (nil
// when not listed).
func tenantLimitChange(typ, tenant string, n int, before, after *workflow.Tenant) string {
	was := "no limit of its own"
	if before != nil && before.LimitSource == "tenant" {
		was = fmt.Sprintf("its own limit of %d", before.Limit)
	}
	now := "no limit applies unless the type has a TenantLimit"
	if after != nil && after.LimitSource != "" {
		now = fmt.Sprintf("%d running, %d held, limit %s", after.Running, after.Held, limitText(after))
	}
	subject := fmt.Sprintf("tenant %s of %s", oneLine(tenant), oneLine(typ))
	switch {
	case n > 0:
		return fmt.Sprintf("%s: at most %s at once (was %s); now %s", subject, counted(n, "run", "runs"), was, now)
	case before == nil || before.LimitSource != "tenant":
		return fmt.Sprintf("%s had no limit of its own; nothing changed (%s)", subject, now)
	}
	return fmt.Sprintf("%s: removed its own limit of %d; now %s", subject, before.Limit, now)
}
