package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
)

// newGrantCommand is the `tributary grant` group: execution grants, the
// authority a schedule's runs act under (schedule create --grant).
func newGrantCommand(env *Env) *cobra.Command {
	return group(&cobra.Command{
		Use:   "grant",
		Short: "Create, list, inspect and revoke execution grants, the authority schedules' runs act under",
		Long: `An execution grant is a durable, scoped and revocable authority: a
schedule made with --grant runs its slots as the grant's subject, and a slot
whose grant is revoked, expired or out of scope is recorded as skipped with
the reason, its chain going on. A scope is "workflow:execute:<type>" for one
workflow type, or "*" for all. A revocation takes effect at the next slot.`,
		Example: `tributary grant create --subject user-42 --scope workflow:execute:send_report --expires-in 720h
			tributary grant list --subject user-42
			tributary grant revoke 01a1ffb2-3fa1-781c-b9a9-3cd3e9d01250 --reason "user left"`,
	},
		newGrantCreateCommand(env),
		newGrantListCommand(env),
		newGrantGetCommand(env),
		newGrantRevokeCommand(env),
	)
}

func newGrantCreateCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "create --subject <subject> --scope <scope> [--scope <scope>…] [--expires-in <duration>] [flags]",
		Short:   "Create an execution grant and print its id",
		Example: `tributary grant create --subject user-42 --scope workflow:execute:send_report --expires-in 720h`,
	}, func(fs *pflag.FlagSet, env *Env) Action {
		subject := fs.String("subject", "", "who the runs act for, such as a user id (required)")
		scopes := fs.StringArray("scope", nil, "what the grant allows: workflow:execute:<type>, or * for every type; repeat for more (required)")
		expiresIn := fs.Duration("expires-in", 0, "how long the grant lasts, a `duration` such as 720h (default: until revoked)")
		parse := func(args []string) (*schedule.GrantParams, error) {
			if err := noArgs(args); err != nil {
				return nil, err
			}
			switch {
			case strings.TrimSpace(*subject) == "":
				return nil, withHint(usageErrorf("grant create needs --subject"), "name who the runs act for, e.g. --subject user-42")
			case len(*scopes) == 0:
				return nil, withHint(usageErrorf("grant create needs --scope"), "e.g. --scope workflow:execute:send_report, or --scope '*' for every type")
			case *expiresIn < 0:
				return nil, withHint(usageErrorf("--expires-in must not be negative, not %s", *expiresIn), "leave it out for a grant that lasts until revoked")
			}
			return &schedule.GrantParams{Subject: *subject, Scopes: *scopes}, nil
		}
		return dbCommand(fs, env, dbSpec{json: "print the grant as JSON instead of its id", schedules: true}, parse, func(ctx context.Context, c *commandRun, p *schedule.GrantParams) error {
			if *expiresIn > 0 {
				p.ExpiresAt = time.Now().Add(*expiresIn)
			}
			g, err := c.sc.CreateGrant(ctx, p)
			if err != nil {
				return grantError(err, uuid.Nil)
			}
			if c.asJSON {
				return printJSON(env.Stdout, wire.NewGrant(g))
			}
			_, err = fmt.Fprintln(env.Stdout, g.ID)
			return err
		})
	})
}

func newGrantListCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "list [--subject <subject>] [--revoked] [--limit <n>] [--after <id>] [flags]",
		Short:   "List execution grants, newest first",
		Example: `tributary grant list --subject user-42`,
	}, func(fs *pflag.FlagSet, env *Env) Action {
		subject := fs.String("subject", "", "list only the grants of this `subject`")
		revoked := fs.Bool("revoked", false, "list revoked grants too")
		limit := fs.Int("limit", defaultListLimit, fmt.Sprintf("list at most `n` grants, at most %d (default %d)", maxListLimit, defaultListLimit))
		after := fs.String("after", "", "list the grants older than this grant `id`, to page")
		parse := func(args []string) (*schedule.ListGrantsParams, error) {
			if err := noArgs(args); err != nil {
				return nil, err
			}
			if err := checkLimit(*limit); err != nil {
				return nil, err
			}
			params := &schedule.ListGrantsParams{Subject: *subject, Revoked: *revoked, Limit: *limit}
			if *after != "" {
				id, err := parseGrantArg("--after", *after)
				if err != nil {
					return nil, err
				}
				params.After = &id
			}
			return params, nil
		}
		spec := dbSpec{json: `print the page as JSON, {"grants": […], "next_after": …} as GET /api/grants answers it, instead of a table`, schedules: true}
		return dbCommand(fs, env, spec, parse, func(ctx context.Context, c *commandRun, params *schedule.ListGrantsParams) error {
			grants, err := c.sc.ListGrants(ctx, params)
			if err != nil {
				return grantError(err, uuid.Nil)
			}
			if c.asJSON {
				return printJSON(env.Stdout, wire.GrantPage(grants, *limit))
			}
			if len(grants) == 0 {
				_, err := fmt.Fprintln(env.Stdout, "no grants")
				return err
			}
			now := time.Now()
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSUBJECT\tSCOPES\tSTATE\tEXPIRES\tCREATED")
			for _, g := range grants {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", g.ID, oneLine(g.Subject), strings.Join(g.Scopes, ","), grantState(g, now),
					grantExpiry(g), g.CreatedAt.UTC().Format(time.RFC3339))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if len(grants) == *limit {
				fmt.Fprintf(env.Stderr, "note: there may be more grants; see them with --after %s\n", grants[len(grants)-1].ID)
			}
			return nil
		})
	})
}

func newGrantGetCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "get <id> [flags]",
		Short:   "Print a grant, and the schedules that run under it",
		Example: `tributary grant get 01a1ffb2-3fa1-781c-b9a9-3cd3e9d01250`,
	}, func(fs *pflag.FlagSet, env *Env) Action {
		parse := func(args []string) (uuid.UUID, error) { return grantArg("get", args) }
		return dbCommand(fs, env, dbSpec{json: "print the grant and its schedules' ids as JSON", schedules: true}, parse, func(ctx context.Context, c *commandRun, id uuid.UUID) error {
			g, err := c.sc.GetGrant(ctx, id)
			if err != nil {
				return grantError(err, id)
			}
			schedules, err := c.sc.GrantSchedules(ctx, id, maxListLimit)
			if err != nil {
				return grantError(err, id)
			}
			if c.asJSON {
				return printJSON(env.Stdout, wire.NewGrantDetail(g, schedules))
			}
			now := time.Now()
			fmt.Fprintf(env.Stdout, "ID:         %s\nSubject:    %s\nScopes:     %s\nState:      %s\nExpires:    %s\nCreated:    %s\n",
				g.ID, g.Subject, strings.Join(g.Scopes, ", "), grantState(g, now), grantExpiry(g), g.CreatedAt.UTC().Format(time.RFC3339))
			if g.RevokedAt != nil {
				fmt.Fprintf(env.Stdout, "Revoked:    %s (%s)\n", g.RevokedAt.UTC().Format(time.RFC3339), orDash(g.RevokeReason))
			}
			if len(schedules) == 0 {
				_, err := fmt.Fprintln(env.Stdout, "\nno schedule runs under it")
				return err
			}
			fmt.Fprintln(env.Stdout)
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SCHEDULE\tNAME\tWORKFLOW\tNEXT FIRE\tNOTE")
			for _, s := range schedules {
				next, note := "-", grantSkipReason(g, s.Workflow, now)
				if s.NextFireAt != nil {
					next = s.NextFireAt.UTC().Format(time.RFC3339)
					if note == "" && g.ExpiresAt != nil && !g.ExpiresAt.After(*s.NextFireAt) {
						note = "warning: the grant expires before this slot, which will be skipped"
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, oneLine(s.Name), s.Workflow, next, orDash(note))
			}
			return tw.Flush()
		})
	})
}

func newGrantRevokeCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "revoke <id> [--reason <text>] [flags]",
		Short:   "Revoke a grant: from the next slot on, the schedules under it record their slots as skipped",
		Example: `tributary grant revoke 01a1ffb2-3fa1-781c-b9a9-3cd3e9d01250 --reason "user left"`,
	}, func(fs *pflag.FlagSet, env *Env) Action {
		reason := fs.String("reason", "", "why, kept for the ledger")
		parse := func(args []string) (uuid.UUID, error) { return grantArg("revoke", args) }
		return dbCommand(fs, env, dbSpec{json: "print the grant as JSON", schedules: true}, parse, func(ctx context.Context, c *commandRun, id uuid.UUID) error {
			g, err := c.sc.RevokeGrant(ctx, id, *reason)
			if err != nil {
				return grantError(err, id)
			}
			if c.asJSON {
				return printJSON(env.Stdout, wire.NewGrant(g))
			}
			_, err = fmt.Fprintf(env.Stdout, "revoked grant %s (%s) at %s; the schedules under it skip their slots from the next one\n",
				g.ID, g.Subject, g.RevokedAt.UTC().Format(time.RFC3339))
			return err
		})
	})
}

// grantArg checks the arguments of `grant <cmd>`: one grant id.
func grantArg(cmd string, args []string) (uuid.UUID, error) {
	switch {
	case len(args) == 0:
		return uuid.Nil, withHint(usageErrorf("grant %s needs <id>", cmd), "see 'tributary grant list'")
	case len(args) > 1:
		return uuid.Nil, withHint(usageErrorf("unexpected argument %q", args[1]), "grant "+cmd+" takes one grant id")
	}
	return parseGrantArg("<id>", args[0])
}

func parseGrantArg(what, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, withHint(usageErrorf("%s %q is not a grant id", what, s), grantIDHint)
	}
	return id, nil
}

// grantError says what to do about an error of the grant calls.
func grantError(err error, id uuid.UUID) error {
	var validation *schedule.ValidationError
	switch {
	case errors.As(err, &validation):
		return &usageError{err: err}
	case errors.Is(err, schedule.ErrGrantNotFound):
		return withHint(fmt.Errorf("no grant %s", id), "see 'tributary grant list'")
	}
	return scheduleError(err, schedule.Ref{})
}

// grantState is "active", "expired" or "revoked".
func grantState(g *schedule.Grant, now time.Time) string {
	switch {
	case g.RevokedAt != nil:
		return "revoked"
	case g.ExpiresAt != nil && !g.ExpiresAt.After(now):
		return "expired"
	}
	return "active"
}

// grantExpiry is when the grant expires, or "never".
func grantExpiry(g *schedule.Grant) string {
	if g.ExpiresAt == nil {
		return "never"
	}
	return g.ExpiresAt.UTC().Format(time.RFC3339)
}
