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
	dbFlags := addDatabaseFlags(fs, env)
	refFlags := addRefFlags(fs)
	asJSON := fs.Bool("json", false, "print the schedule as it was before the deletion, as JSON (like get --json, without next_fire_times and worker_live)")

	return func(ctx context.Context, args []string) error {
		ref, err := refFlags.ref("delete", args)
		if err != nil {
			return err
		}
		sc, closeClient, err := dbFlags.scheduleClient(ctx)
		if err != nil {
			return err
		}
		defer closeClient()

		s, err := sc.Get(ctx, ref)
		if err != nil {
			return scheduleError(err, ref)
		}
		if err := sc.Delete(ctx, schedule.ByID(s.ID)); err != nil {
			return scheduleError(err, schedule.ByID(s.ID))
		}
		if *asJSON {
			return printJSON(env.Stdout, wire.NewSchedule(s))
		}
		_, err = fmt.Fprintf(env.Stdout, "deleted schedule %s (%q); its past runs stay, and its pending slot does not fire\n", s.ID, s.Name)
		return err
	}
}
