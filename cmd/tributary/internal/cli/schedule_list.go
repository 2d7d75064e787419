package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/durfmt"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
)

// nameColumnWidth is where `schedule list` cuts a schedule's name.
const nameColumnWidth = 40

// newScheduleListCommand is `tributary schedule list`.
func newScheduleListCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "list [--name <text>] [--owner <owner>] [--workflow <type>] [--paused true|false] [--calendar <name>] [--limit <n>] [--after <schedule-id>] [flags]",
		Short: "List schedules, newest first, with when each fires next",
		Example: `tributary schedule list --owner team-42
			tributary schedule list --name digest
			tributary schedule list --paused true --json`,
	}, setupScheduleList)
}

func setupScheduleList(fs *pflag.FlagSet, env *Env) Action {
	name := fs.String("name", "", "list only the schedules whose name contains this `text`, in any case")
	owner := fs.String("owner", "", "list only the schedules of this `owner`")
	workflowType := fs.String("workflow", "", "list only the schedules that start this workflow `type`")
	paused := fs.String("paused", "", "`true|false`: list only paused schedules, or only active ones")
	calendar := fs.String("calendar", "", "list only the schedules that exclude this holiday calendar's dates (`name`)")
	limit := fs.Int("limit", defaultListLimit, fmt.Sprintf("list at most `n` schedules, at most %d (default %d)", maxListLimit, defaultListLimit))
	after := fs.String("after", "", "list the schedules after this `schedule-id` (the last one of the previous page)")
	parse := func(args []string) (*schedule.ListParams, error) {
		if err := noArgs(args); err != nil {
			return nil, err
		}
		params := &schedule.ListParams{Name: *name, Owner: *owner, Workflow: *workflowType, Calendar: *calendar, Limit: *limit}
		if *paused != "" {
			b, err := strconv.ParseBool(*paused)
			if err != nil {
				return nil, withHint(usageErrorf("--paused %q is not true or false", *paused),
					"pass --paused true for paused schedules, or --paused false for active ones")
			}
			params.Paused = &b
		}
		if err := checkLimit(*limit); err != nil {
			return nil, err
		}
		if *after != "" {
			id, err := parseScheduleID("--after", *after)
			if err != nil {
				return nil, err
			}
			params.After = &id
		}
		return params, nil
	}
	return dbCommand(fs, env, dbSpec{json: `print the page as JSON, {"schedules": […], "next_after": …} as GET /api/schedules answers it, instead of a table`, schedules: true}, parse, func(ctx context.Context, c *commandRun, params *schedule.ListParams) error {
		schedules, err := c.sc.List(ctx, params)
		if err != nil {
			return scheduleError(err, schedule.Ref{})
		}
		if c.asJSON {
			return printJSON(env.Stdout, wire.SchedulePage(schedules, *limit))
		}
		return printListing(env, schedules, *limit, "schedules",
			func(s *schedule.Schedule) uuid.UUID { return s.ID },
			func(w io.Writer) error { return printSchedulesTable(w, schedules, time.Now()) })
	})
}

func printSchedulesTable(w io.Writer, schedules []*schedule.Schedule, now time.Time) error {
	locations := make(map[string]*time.Location)
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "ID\tNAME\tOWNER\tKEY\tTENANT\tWORKFLOW\tCRON\tZONE\tNEXT\tRUNS\tFAILURES\tPAUSED")
	for _, s := range schedules {
		next := "-"
		if s.NextFireAt != nil {
			loc, ok := locations[s.TimeZone]
			if !ok {
				loc = scheduleLocation(s)
				locations[s.TimeZone] = loc
			}
			next = zonedTime(*s.NextFireAt, loc) + " (" + durfmt.RelativeDays(*s.NextFireAt, now) + ")"
		}
		fmt.Fprintf(table, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", s.ID, shorten(oneLine(s.Name), nameColumnWidth),
			orDash(oneLine(s.Owner)), orDash(s.Key), runTenantText(s), oneLine(s.Workflow), oneLine(orDash(s.Cron+strings.ReplaceAll(s.RRule, "\n", "; "))), s.TimeZone, next, s.RunCount, s.FailureCount, yesNo(s.Paused))
	}
	return table.Flush()
}
