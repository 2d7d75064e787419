package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
)

// newScheduleDeleteCommand is `tributary schedule delete`.
func newScheduleDeleteCommand(env *Env) *cobra.Command {
	return refCommand(env, &cobra.Command{
		Use:   "delete " + scheduleRefUsage + " [flags]",
		Short: "Delete a schedule; its past runs stay, and its pending slot does not fire",
		Example: `tributary schedule delete 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e
			tributary schedule delete nightly-report --owner acme`,
	}, setupScheduleDelete)
}

func setupScheduleDelete(fs *pflag.FlagSet, env *Env) Action {
	return scheduleCommand(fs, env, "delete", "print the schedule as it was before the deletion, as JSON (like get --json, without next_fire_times and worker_live)", func(ctx context.Context, c *commandRun, ref schedule.Ref) error {
		s, err := c.sc.Get(ctx, ref)
		if err != nil {
			return scheduleError(err, ref)
		}
		if err := c.sc.Delete(ctx, schedule.ByID(s.ID)); err != nil {
			return scheduleError(err, schedule.ByID(s.ID))
		}
		if c.asJSON {
			return printJSON(env.Stdout, wire.NewSchedule(s))
		}
		_, err = fmt.Fprintf(env.Stdout, "deleted schedule %s (%q); its past runs stay, and its pending slot does not fire\n", s.ID, s.Name)
		return err
	})
}
