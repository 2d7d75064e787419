package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/schedule"
)

// newSchedulePauseCommand is `tributary schedule pause`.
func newSchedulePauseCommand(env *Env) *cobra.Command {
	return refCommand(env, &cobra.Command{
		Use:   "pause " + scheduleRefUsage + " [--note <text>] [flags]",
		Short: "Pause a schedule: no slot fires until it is resumed",
		Example: `tributary schedule pause 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --note "until the migration is done"
			tributary schedule pause nightly-report --owner acme`,
	}, setupSchedulePause)
}

func setupSchedulePause(fs *pflag.FlagSet, env *Env) Action {
	note := fs.String("note", "", "`text` saying why the schedule is paused, shown by 'schedule get'")
	return scheduleCommand(fs, env, "pause", "print the schedule as it is after the pause, as JSON (as 'get --json' prints it)", func(ctx context.Context, c *commandRun, ref schedule.Ref) error {
		noteSet := fs.Changed("note")

		s, err := c.sc.Get(ctx, ref)
		if err != nil {
			return scheduleError(err, ref)
		}
		id := s.ID
		// Pausing again would clear the note unless a new one is given.
		wasPaused := s.Paused
		if !wasPaused || noteSet {
			if s, err = c.sc.Pause(ctx, schedule.ByID(id), *note); err != nil {
				return scheduleError(err, schedule.ByID(id))
			}
		}
		if c.asJSON {
			return printScheduleAnswer(ctx, env, c.sc, c.wf, s, nil)
		}
		switch {
		case wasPaused && noteSet:
			_, err = fmt.Fprintf(env.Stdout, "schedule %s (%q) was already paused; its note is now %q\n", id, s.Name, s.PauseNote)
		case wasPaused:
			_, err = fmt.Fprintf(env.Stdout, "schedule %s (%q) is already paused\n", id, s.Name)
		default:
			_, err = fmt.Fprintf(env.Stdout, "paused schedule %s (%q); no slot fires until 'tributary schedule resume %s'\n", id, s.Name, scheduleArgs(s))
		}
		return err
	})
}
