package cli

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/schedule"
)

// newScheduleResumeCommand is `tributary schedule resume`.
func newScheduleResumeCommand(env *Env) *cobra.Command {
	return refCommand(env, &cobra.Command{
		Use:   "resume " + scheduleRefUsage + " [--missed skip|latest|backfill] [flags]",
		Short: "Resume a paused schedule at its next slot; --missed says what the slots missed while it was paused do (default: skipped)",
		Example: `tributary schedule resume 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e
			tributary schedule resume nightly-report --owner acme --missed latest`,
	}, setupScheduleResume)
}

func setupScheduleResume(fs *pflag.FlagSet, env *Env) Action {
	refFlags := addRefFlags(fs)
	missed := fs.String("missed", string(schedule.MissedSkip), fmt.Sprintf("what the slots missed while the schedule was paused do, a `policy`: skip (none runs), "+
		"latest (the most recent one runs, once, now) or backfill (each one runs once, now, oldest first; at most %d) (default skip)", schedule.MaxBackfill))
	parse := func(args []string) (schedule.Ref, error) {
		ref, err := refFlags.ref("resume", args)
		if err != nil {
			return ref, err
		}
		if !slices.Contains([]schedule.MissedPolicy{schedule.MissedSkip, schedule.MissedLatest, schedule.MissedBackfill}, schedule.MissedPolicy(*missed)) {
			return ref, withHint(usageErrorf("--missed %q is not skip, latest or backfill", *missed),
				"pass --missed skip to skip the slots missed while paused, latest to run the most recent of them, or backfill to run each")
		}
		return ref, nil
	}
	spec := dbSpec{json: "print the schedule as it is after the resumption, as JSON (as 'get --json' prints it)", schedules: true}
	return dbCommand(fs, env, spec, parse, func(ctx context.Context, c *commandRun, ref schedule.Ref) error {
		policy := schedule.MissedPolicy(*missed)

		// Resume does nothing to a schedule that is not paused; read it
		// first to say so.
		s, err := c.sc.Get(ctx, ref)
		if err != nil {
			return scheduleError(err, ref)
		}
		id := s.ID
		wasPaused := s.Paused
		var due []schedule.Occurrence // the missed slots that run
		if wasPaused {
			if due, err = s.MissedSlots(policy, time.Now()); err != nil {
				return scheduleError(err, schedule.ByID(id))
			}
			if s, err = c.sc.Resume(ctx, schedule.ByID(id), &schedule.ResumeOpts{Missed: policy}); err != nil {
				return scheduleError(err, schedule.ByID(id))
			}
		}
		if c.asJSON {
			return printScheduleAnswer(ctx, env, c.sc, c.wf, s, nil)
		}
		next := nextFireText(s, time.Now())
		loc := scheduleLocation(s)
		switch {
		case !wasPaused:
			_, err = fmt.Fprintf(env.Stdout, "schedule %s (%q) is not paused; %s\n", id, s.Name, next)
		case policy == schedule.MissedSkip:
			_, err = fmt.Fprintf(env.Stdout, "resumed schedule %s (%q); %s\n", id, s.Name, next)
		case len(due) == 0:
			_, err = fmt.Fprintf(env.Stdout, "resumed schedule %s (%q); no slot was missed while it was paused; %s\n", id, s.Name, next)
		case policy == schedule.MissedLatest:
			_, err = fmt.Fprintf(env.Stdout, "resumed schedule %s (%q); the latest slot missed while it was paused, %s, runs now; %s\n",
				id, s.Name, zonedTime(due[0].At, loc), next)
		default:
			_, err = fmt.Fprintf(env.Stdout, "resumed schedule %s (%q); the %s missed while it was paused (%s … %s) run now, one after the other, oldest first; %s\n",
				id, s.Name, counted(len(due), "slot", "slots"), zonedTime(due[0].At, loc), zonedTime(due[len(due)-1].At, loc), next)
		}
		return err
	})
}
