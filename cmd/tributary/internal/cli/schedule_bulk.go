package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
)

// newScheduleBulkCommand is `tributary schedule bulk`, whose pause and
// resume act on every schedule of an owner (schedule.Client.PauseOwner and
// ResumeOwner).
func newScheduleBulkCommand(env *Env) *cobra.Command {
	return group(&cobra.Command{
		Use:   "bulk",
		Short: "Pause or resume every schedule of an owner, in batches",
		Example: `tributary schedule bulk pause --owner acme --note "incident 42" --yes
			tributary schedule bulk resume --owner acme --yes`,
	},
		command(env, &cobra.Command{
			Use:     "pause --owner <owner> [--note <text>] [--dry-run] [--yes] [flags]",
			Short:   "Pause every schedule of an owner that is not paused; those paused already keep their note",
			Example: `tributary schedule bulk pause --owner acme --note "incident 42" --yes`,
		}, func(fs *pflag.FlagSet, env *Env) Action { return setupScheduleBulk(fs, env, "pause") }),
		command(env, &cobra.Command{
			Use:     "resume --owner <owner> [--missed skip|latest|backfill] [--dry-run] [--yes] [flags]",
			Short:   "Resume every paused schedule of an owner at its next slot",
			Example: `tributary schedule bulk resume --owner acme --missed latest --yes`,
		}, func(fs *pflag.FlagSet, env *Env) Action { return setupScheduleBulk(fs, env, "resume") }),
	)
}

func setupScheduleBulk(fs *pflag.FlagSet, env *Env, action string) Action {
	owner := fs.String("owner", "", "act on the schedules of this `owner` (required)")
	var note, missed *string
	if action == "pause" {
		note = fs.String("note", "", "`text` saying why the schedules are paused, shown by 'schedule get'")
	} else {
		missed = fs.String("missed", string(schedule.MissedSkip), "what the slots missed while a schedule was paused do, a `policy`: skip, latest or backfill (default skip)")
	}
	dryRun := fs.Bool("dry-run", false, "count the schedules that would change, and change nothing")
	yes := fs.Bool("yes", false, fmt.Sprintf("do not ask before acting on more than %d schedules", confirmBulkAbove))
	parse := func(args []string) (*schedule.ResumeOpts, error) {
		if err := noArgs(args); err != nil {
			return nil, err
		}
		if *owner == "" {
			return nil, withHint(usageErrorf("--owner is required"), "name the owner whose schedules to "+action)
		}
		opts := &schedule.ResumeOpts{}
		if missed != nil {
			opts.Missed = schedule.MissedPolicy(*missed)
			if !slices.Contains([]schedule.MissedPolicy{schedule.MissedSkip, schedule.MissedLatest, schedule.MissedBackfill}, opts.Missed) {
				return nil, withHint(usageErrorf("--missed %q is not skip, latest or backfill", *missed),
					"pass --missed skip to skip the slots missed while paused, latest to run the most recent of them, or backfill to run each")
			}
		}
		return opts, nil
	}
	spec := dbSpec{json: "print the result as JSON, as POST /api/schedules/bulk answers it (the schedules changed, the ids of those left as they were)", schedules: true}
	return dbCommand(fs, env, spec, parse, func(ctx context.Context, c *commandRun, opts *schedule.ResumeOpts) error {
		// Count what would change: the owner's schedules not paused (for a
		// pause) or paused (for a resume).
		paused := action == "resume"
		n, err := c.sc.Count(ctx, &schedule.ListParams{Owner: *owner, Paused: &paused})
		if err != nil {
			return scheduleError(err, schedule.Ref{})
		}
		what := fmt.Sprintf("%s %d schedules of owner %q", action, n, *owner)
		switch {
		case *dryRun:
			_, err := fmt.Fprintf(env.Stdout, "would %s; nothing was changed (dry run)\n", what)
			return err
		case n > confirmBulkAbove && !*yes:
			if err := confirmBulk(env, "would "+what); err != nil {
				return err
			}
		}

		var res *schedule.OwnerResult
		if action == "pause" {
			res, err = c.sc.PauseOwner(ctx, *owner, *note)
		} else {
			res, err = c.sc.ResumeOwner(ctx, *owner, opts)
		}
		switch {
		case errors.Is(err, schedule.ErrNotFound):
			return withHint(fmt.Errorf("owner %q has no schedules", *owner), "see 'tributary schedule list --owner'")
		case err != nil && res != nil && res.Batches > 0:
			fmt.Fprintf(env.Stderr, "stopped after %d schedules changed\n", len(res.Changed))
			return scheduleError(err, schedule.Ref{})
		case err != nil:
			return scheduleError(err, schedule.Ref{})
		case c.asJSON:
			return printJSON(env.Stdout, wire.NewOwnerBulk(*owner, action, res))
		}
		_, err = fmt.Fprintf(env.Stdout, "%sd %d schedules of owner %q; %d left as they were (%s)\n",
			action, len(res.Changed), *owner, len(res.Unchanged), map[string]string{"pause": "paused already", "resume": "not paused"}[action])
		return err
	})
}
