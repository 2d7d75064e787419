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

// newScheduleUpdateCommand is `tributary schedule update`.
func newScheduleUpdateCommand(env *Env) *cobra.Command {
	return refCommand(env, &cobra.Command{
		Use:   "update " + scheduleRefUsage + " [--name <name>] [--cron <expression>] [--tz <zone>] [--input <json>] [--overlap <policy>] [flags]",
		Short: "Change a schedule's settings: a new --cron or --tz takes effect at once, the others from the next slot",
		Long: `A schedule that a service declares in its code (schedule get shows where a schedule comes
			from) keeps an update only until the service's next Declare puts the code's spec back.`,
		Example: `tributary schedule update 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --cron "0 3 * * *" --tz Europe/Paris
			tributary schedule update nightly-report --owner acme --overlap allow --max-attempts 5 --json
			tributary schedule update nightly-report --owner acme --tenant acme-eu`,
	}, setupScheduleUpdate)
}

func setupScheduleUpdate(fs *pflag.FlagSet, env *Env) Action {
	refFlags := addRefFlags(fs)
	name := fs.String("name", "", "the schedule's new `name`")
	description := fs.String("description", "", "the schedule's new description, free `text` (\"\" clears it)")
	workflowType := fs.String("workflow", "", "the new workflow `type` the next slots start, as a service registers it")
	expr := fs.String("cron", "", "the new cron `expression`; the pending slot is replaced by the first slot of the new timing")
	rruleText := fs.String("rrule", "", "a new RFC 5545 recurrence `rule` in place of the schedule's cron expression or rule (see 'schedule create --help'); the pending slot is replaced like --cron's")
	zone := fs.String("tz", "", "the new IANA time `zone` of the expression, such as Europe/Paris (\"\" for UTC); the pending slot is replaced like --cron's")
	input := fs.String("input", "", "the new input of each run, a `JSON` value such as '{\"to\": \"ops\"}', @file.json or - for standard input")
	overlap := fs.String("overlap", "", "the new overlap `policy`: "+overlapPolicies+" (see 'schedule create --help')")
	catchUp := fs.Duration("catchup", 0, "the new catch-up window, how late a slot may fire and still run, a `duration` such as 5m (0: not at all)")
	maxAttempts := fs.Int("max-attempts", 0, "the new number `n` of attempts of each run, or 0 for the workflow type's default")
	priority := fs.Int("priority", 0, "the new River priority of each run, `n` from 1 (highest) to 4, or 0 for the workflow type's default")
	queue := fs.String("queue", "", "the new River `queue` of each run, or \"\" for the workflow type's default")
	retry := addRetryFlags(fs, "each run's", "the schedule's; given, they replace its whole policy, and --retry-delay 0 alone removes it, leaving the workflow type's")
	keepRuns := fs.Int("keep-runs", 0, "the new number `n` of latest runs kept whatever their age, or 0 to let the run retention apply to all")
	tenant := fs.String("tenant", "", "the new `tenant` of the runs the schedule starts from now on, or \"\" for the owner's")
	calendars := fs.String("calendars", "", "the new holiday `calendars` the schedule excludes, comma-separated, or \"\" for none (see 'tributary calendar')")
	onExcluded := fs.String("on-excluded", "", "the new `policy` of slots on excluded dates: skip or next-business-day")
	dstGap := fs.String("dst-gap", "", "the new DST gap policy: `jump|shift|skip` (see 'schedule create --help'); the pending slot is replaced like --cron's")
	dstFold := fs.String("dst-fold", "", "the new DST fold policy: `first|last|both` (see 'schedule create --help'); the pending slot is replaced like --cron's")
	timeout := fs.Duration("timeout", 0, "the new time limit of each run's attempts, a `duration` such as 10m, or 0 for the workflow type's default")
	type update struct {
		ref schedule.Ref
		p   *schedule.UpdateParams
	}
	parse := func(args []string) (update, error) {
		ref, err := refFlags.ref("update", args)
		if err != nil {
			return update{}, err
		}
		// Only the flags given change: a flag's zero value is a setting too
		// (--description "", --max-attempts 0).
		p := &schedule.UpdateParams{}
		changed, inputSet := false, false
		fs.Visit(func(f *pflag.Flag) {
			changed = changed || slices.Contains(updateFlags, f.Name)
			switch f.Name {
			case "name":
				p.Name = name
			case "workflow":
				p.Workflow = workflowType
			case "description":
				p.Description = description
			case "cron":
				p.Cron = expr
			case "rrule":
				lines := rruleLines(*rruleText)
				p.RRule = &lines
			case "tz":
				p.TimeZone = zone
			case "input":
				inputSet = true
			case "overlap":
				p.Overlap = (*schedule.OverlapPolicy)(overlap)
			case "catchup":
				p.CatchUpWindow = catchUp
			case "max-attempts":
				p.MaxAttempts = maxAttempts
			case "priority":
				p.Priority = priority
			case "queue":
				p.Queue = queue
			case "timeout":
				p.Timeout = timeout
			case "keep-runs":
				p.KeepRuns = keepRuns
			case "tenant":
				p.Tenant = tenant
			case "calendars":
				list := splitList(*calendars)
				p.Calendars = &list
			case "on-excluded":
				p.OnExcluded = (*schedule.OnExcluded)(onExcluded)
			case "dst-gap":
				p.DSTGap = (*schedule.DSTGap)(dstGap)
			case "dst-fold":
				p.DSTFold = (*schedule.DSTFold)(dstFold)
			}
		})
		if inputSet {
			input, err := jsonFlag(env, "input", *input, `{"to": "ops"}`)
			if err != nil {
				return update{}, err
			}
			p.Input = input
		}
		if err := checkTenantFlag(*tenant); err != nil {
			return update{}, err
		}
		if p.Retry, err = retry.policy(fs); err != nil {
			return update{}, err
		}
		if p.DSTGap != nil || p.DSTFold != nil {
			policy := schedule.DSTPolicy{}
			if p.DSTGap != nil {
				policy.Gap = *p.DSTGap
			}
			if p.DSTFold != nil {
				policy.Fold = *p.DSTFold
			}
			if err := policy.Validate(); err != nil {
				return update{}, dstUsageError(err)
			}
		}
		switch {
		case p.Cron != nil && p.RRule != nil:
			return update{}, withHint(usageErrorf("pass --cron or --rrule, not both"), "a schedule has one rule")
		case !changed:
			return update{}, withHint(usageErrorf("schedule update needs a setting to change"),
				fmt.Sprintf(`pass one or more of %s, e.g. tributary schedule update %s --cron "0 3 * * *"`, joinWords(flagNames(updateFlags)), refArgs(ref)))
		case *catchUp < 0:
			return update{}, withHint(usageErrorf("--catchup must not be negative, not %s", *catchUp), "pass --catchup 0 to skip every slot found late")
		case *maxAttempts < 0:
			return update{}, withHint(usageErrorf("--max-attempts must be at least 1, or 0 for the workflow type's default, not %d", *maxAttempts), "leave it out to keep the schedule's")
		case *priority < 0 || *priority > 4:
			return update{}, withHint(usageErrorf("--priority must be from 1 to 4, or 0 for the workflow type's default, not %d", *priority), "leave it out to keep the schedule's")
		case *timeout < 0:
			return update{}, withHint(usageErrorf("--timeout must not be negative, not %s", *timeout), "pass --timeout 0 for the workflow type's default, or leave it out to keep the schedule's")
		}
		return update{ref, p}, nil
	}
	spec := dbSpec{json: "print the schedule as it is after the update, as JSON (as 'get --json' prints it)", schedules: true}
	return dbCommand(fs, env, spec, parse, func(ctx context.Context, c *commandRun, u update) error {
		ref, p := u.ref, u.p

		before, err := c.sc.Get(ctx, ref)
		if err != nil {
			return scheduleError(err, ref)
		}
		ref = schedule.ByID(before.ID) // the schedule read is the one updated
		switch {
		case p.CatchUpWindow != nil && *p.CatchUpWindow == 0:
			none := time.Duration(-1) // a window of 0 means the default to Update, and a negative one none
			p.CatchUpWindow = &none
		case p.CatchUpWindow == nil && before.CatchUpWindow == 0:
			// Update reads the stored window of 0 back as "the default",
			// and would reset it to a minute: keep it.
			none := time.Duration(-1)
			p.CatchUpWindow = &none
		}
		s, err := c.sc.Update(ctx, ref, p)
		if err != nil {
			return paramsError(err, ref, updateValidationHints)
		}
		if c.asJSON {
			err = printScheduleAnswer(ctx, env, c.sc, c.wf, s, nil)
		} else {
			_, err = fmt.Fprintf(env.Stdout, "updated schedule %s (%q); %s\n", s.ID, s.Name, nextFireText(s, time.Now()))
		}
		if note := declaredNote(s); note != "" && err == nil {
			fmt.Fprintf(env.Stderr, "note: schedule %s is %s: %s\n", s.ID, s.Origin(), note)
		}
		return err
	})
}

// updateFlags are the flags of update that change a setting, in the
// order its messages list them.
var updateFlags = []string{"name", "description", "workflow", "cron", "rrule", "tz", "input", "overlap", "catchup",
	"max-attempts", "priority", "queue", "timeout", "keep-runs", "tenant", "calendars", "on-excluded", "dst-gap", "dst-fold",
	"retry-delay", "retry-backoff", "retry-jitter"}

// flagNames are names with "--" before each.
func flagNames(names []string) []string {
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = "--" + name
	}
	return out
}

// updateValidationHints say which flag of update to fix for a
// *schedule.ValidationError whose message does not say what to do.
var updateValidationHints = map[string]string{
	"Name":     "pass a shorter --name",
	"Workflow": "fix --workflow",
	"Overlap":  "fix --overlap",
	"Input":    "pass a smaller --input",
	"Queue":    "fix --queue",
	"Cron":     "fix --cron or --tz",
	"Tenant":   "fix --tenant",
}
