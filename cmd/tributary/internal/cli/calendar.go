package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
)

// newCalendarCommand is the `tributary calendar` group: holiday calendars,
// the dates schedules exclude (schedule create --calendars).
func newCalendarCommand(env *Env) *cobra.Command {
	return group(&cobra.Command{
		Use:   "calendar",
		Short: "Create and change holiday calendars, the dates schedules exclude",
		Long: `A holiday calendar is a named set of local dates. A schedule that names it
(schedule create --calendars us-holidays) does not run as usual on its
dates: the slot is recorded as skipped, naming the calendar and the date,
or, with --on-excluded next-business-day, moves to the same time on the
next Monday-to-Friday date not excluded. A change to a calendar applies to
the slots not yet fired.

Dates come from --dates (2027-12-24,2027-12-31) or --file: a file of dates,
one a line ("2027-12-24 Christmas Day (observed)", "2027-12-24..2027-12-26"
for a range, # for comments), or an iCalendar file (.ics) of all-day events,
whose summaries become the dates' notes.`,
		Example: `tributary calendar create us-holidays --file us-holidays-2027.ics
			tributary calendar add us-holidays --dates 2028-01-17 --note "Martin Luther King Jr. Day"
			tributary calendar get us-holidays`,
	},
		newCalendarCreateCommand(env),
		newCalendarAddCommand(env),
		newCalendarRemoveCommand(env),
		newCalendarListCommand(env),
		newCalendarGetCommand(env),
		newCalendarDeleteCommand(env),
	)
}

func newCalendarCreateCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "create <name> [--description <text>] [--dates <dates>] [--file <path>] [flags]",
		Short:   "Create a calendar, with its dates",
		Example: `tributary calendar create us-holidays --description "US federal holidays" --file us-holidays-2027.ics`,
	}, setupCalendarChange("create"))
}

func newCalendarAddCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "add <name> (--dates <dates> | --file <path>) [flags]",
		Short:   "Add dates to a calendar; the schedules that exclude it skip or move their slots on them",
		Example: `tributary calendar add us-holidays --dates 2028-01-17 --note "Martin Luther King Jr. Day"`,
	}, setupCalendarChange("add"))
}

func newCalendarRemoveCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "remove <name> (--dates <dates> | --file <path>) [flags]",
		Short:   "Remove dates from a calendar; the schedules that exclude it run on them again",
		Example: `tributary calendar remove us-holidays --dates 2027-12-24`,
	}, setupCalendarChange("remove"))
}

// setupCalendarChange sets up create, add and remove, which take a name
// and dates.
func setupCalendarChange(cmd string) func(fs *pflag.FlagSet, env *Env) Action {
	return func(fs *pflag.FlagSet, env *Env) Action {
		dates := fs.String("dates", "", "local `dates`, comma-separated, such as 2027-12-24,2027-12-31; a range as 2027-12-24..2027-12-26")
		file := fs.String("file", "", "a `path` to read dates from: one a line with an optional note, or an iCalendar file (.ics) of all-day events; - for standard input")
		note := fs.String("note", "", "the `text` of each date of --dates, such as \"Christmas Day\"")
		var description *string
		if cmd == "create" {
			description = fs.String("description", "", "free `text` about the calendar")
		}
		type change struct {
			name  string
			given []schedule.CalendarDate
		}
		parse := func(args []string) (change, error) {
			name, err := calendarArg(cmd, args)
			if err != nil {
				return change{}, err
			}
			if cmd != "create" && *dates == "" && *file == "" {
				return change{}, withHint(usageErrorf("calendar %s needs --dates or --file", cmd),
					fmt.Sprintf("e.g. tributary calendar %s %s --dates 2027-12-24", cmd, name))
			}
			given, err := readDateFlags(env, *dates, *note, *file)
			return change{name, given}, err
		}
		return dbCommand(fs, env, dbSpec{json: "print the calendar as JSON", schedules: true}, parse, func(ctx context.Context, c *commandRun, ch change) error {
			name, given := ch.name, ch.given

			var cal *schedule.Calendar
			var err error
			switch cmd {
			case "create":
				cal, err = c.sc.CreateCalendar(ctx, &schedule.CalendarParams{Name: name, Description: *description, Dates: given})
			case "add":
				cal, err = c.sc.AddCalendarDates(ctx, name, given)
			default:
				days := make([]string, len(given))
				for i, d := range given {
					days[i] = d.Date
				}
				cal, err = c.sc.RemoveCalendarDates(ctx, name, days)
			}
			if err != nil {
				return calendarError(err, name)
			}
			if c.asJSON {
				return printJSON(env.Stdout, wire.NewCalendar(cal))
			}
			verb := map[string]string{"create": "created", "add": "added to", "remove": "removed from"}[cmd]
			if cmd == "create" {
				_, err = fmt.Fprintf(env.Stdout, "created calendar %s with %s\n", cal.Name, counted(len(cal.Dates), "date", "dates"))
			} else {
				excludes := counted(cal.Schedules, "schedule excludes", "schedules exclude")
				_, err = fmt.Fprintf(env.Stdout, "%s %s calendar %s; it holds %d, and %s it\n",
					counted(len(given), "date", "dates"), verb, cal.Name, len(cal.Dates), excludes)
			}
			return err
		})
	}
}

func newCalendarListCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "list [flags]",
		Short:   "List the calendars, with how many dates they hold and how many schedules exclude them",
		Example: `tributary calendar list`,
	}, func(fs *pflag.FlagSet, env *Env) Action {
		parse := func(args []string) (struct{}, error) { return struct{}{}, noArgs(args) }
		spec := dbSpec{json: `print the calendars as JSON, {"calendars": […]} as GET /api/calendars answers it (without their dates)`, schedules: true}
		return dbCommand(fs, env, spec, parse, func(ctx context.Context, c *commandRun, _ struct{}) error {
			cals, err := c.sc.ListCalendars(ctx)
			if err != nil {
				return calendarError(err, "")
			}
			if c.asJSON {
				return printJSON(env.Stdout, wire.NewCalendarList(cals))
			}
			if len(cals) == 0 {
				_, err := fmt.Fprintln(env.Stdout, "no calendars; create one with 'tributary calendar create'")
				return err
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tDATES\tSCHEDULES\tUPDATED\tDESCRIPTION")
			for _, cal := range cals {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", cal.Name, cal.DateCount, cal.Schedules, cal.UpdatedAt.UTC().Format(time.RFC3339), orDash(oneLine(cal.Description)))
			}
			return tw.Flush()
		})
	})
}

func newCalendarGetCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "get <name> [flags]",
		Short:   "Print a calendar and its dates",
		Example: `tributary calendar get us-holidays`,
	}, func(fs *pflag.FlagSet, env *Env) Action {
		parse := func(args []string) (string, error) { return calendarArg("get", args) }
		return dbCommand(fs, env, dbSpec{json: "print the calendar as JSON", schedules: true}, parse, func(ctx context.Context, c *commandRun, name string) error {
			cal, err := c.sc.GetCalendar(ctx, name)
			if err != nil {
				return calendarError(err, name)
			}
			if c.asJSON {
				return printJSON(env.Stdout, wire.NewCalendar(cal))
			}
			fmt.Fprintf(env.Stdout, "Name:         %s\n", cal.Name)
			if cal.Description != "" {
				fmt.Fprintf(env.Stdout, "Description:  %s\n", oneLine(cal.Description))
			}
			fmt.Fprintf(env.Stdout, "Schedules:    %d exclude it\nUpdated:      %s\n\n", cal.Schedules, cal.UpdatedAt.UTC().Format(time.RFC3339))
			if len(cal.Dates) == 0 {
				_, err := fmt.Fprintln(env.Stdout, "no dates")
				return err
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "DATE\tDAY\tNOTE")
			for _, d := range cal.Dates {
				day, _ := time.Parse(time.DateOnly, d.Date)
				fmt.Fprintf(tw, "%s\t%s\t%s\n", d.Date, day.Weekday().String()[:3], orDash(d.Note))
			}
			return tw.Flush()
		})
	})
}

func newCalendarDeleteCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "delete <name> [flags]",
		Short:   "Delete a calendar that no schedule excludes",
		Example: `tributary calendar delete us-holidays-2026`,
	}, func(fs *pflag.FlagSet, env *Env) Action {
		parse := func(args []string) (string, error) { return calendarArg("delete", args) }
		return dbCommand(fs, env, dbSpec{schedules: true}, parse, func(ctx context.Context, c *commandRun, name string) error {
			if err := c.sc.DeleteCalendar(ctx, name); err != nil {
				return calendarError(err, name)
			}
			_, err := fmt.Fprintf(env.Stdout, "deleted calendar %s\n", name)
			return err
		})
	})
}

// calendarArg checks the arguments of `calendar <cmd>`: one name.
func calendarArg(cmd string, args []string) (string, error) {
	switch {
	case len(args) == 0:
		return "", withHint(usageErrorf("calendar %s needs <name>", cmd), "e.g. tributary calendar "+cmd+" us-holidays")
	case len(args) > 1:
		return "", withHint(usageErrorf("unexpected argument %q", args[1]), "calendar "+cmd+" takes one name; pass dates with --dates or --file")
	}
	return args[0], nil
}

// calendarError says what to do about an error of the calendar calls.
func calendarError(err error, name string) error {
	var validation *schedule.ValidationError
	var inUse *schedule.CalendarInUseError
	switch {
	case errors.As(err, &validation):
		return &usageError{err: err}
	case errors.As(err, &inUse):
		return err // it says what to do
	case errors.Is(err, schedule.ErrCalendarNotFound):
		return withHint(fmt.Errorf("no calendar %q", name), "see 'tributary calendar list', or create it with 'tributary calendar create "+name+"'")
	}
	return scheduleError(err, schedule.Ref{})
}

// readDateFlags reads the dates of --dates (with --note) and --file.
func readDateFlags(env *Env, dates, note, file string) ([]schedule.CalendarDate, error) {
	var out []schedule.CalendarDate
	for _, item := range strings.Split(dates, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		days, err := schedule.ExpandCalendarDate(item)
		if err != nil {
			return nil, withHint(usageErrorf("--dates: %v", err), "use dates like 2027-12-24, comma-separated, or a range like 2027-12-24..2027-12-26")
		}
		for _, d := range days {
			out = append(out, schedule.CalendarDate{Date: d, Note: note})
		}
	}
	if file == "" {
		return out, nil
	}
	var data []byte
	var err error
	if file == "-" {
		if env.Stdin == nil {
			return nil, usageErrorf("--file - reads standard input, and there is none")
		}
		data, err = io.ReadAll(env.Stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, withHint(usageErrorf("--file %s: %v", file, err), "pass the path of a file of dates, one a line, or of an iCalendar file")
	}
	var fromFile []schedule.CalendarDate
	if strings.HasPrefix(strings.TrimSpace(string(data)), "BEGIN:VCALENDAR") {
		fromFile, err = parseICalendarDates(string(data))
	} else {
		fromFile, err = schedule.ParseCalendarLines(string(data))
	}
	if err != nil {
		return nil, withHint(usageErrorf("--file %s: %v", file, err), "fix the file: a date a line (2027-12-24 Christmas Day), or all-day events of an iCalendar file")
	}
	return append(out, fromFile...), nil
}

// parseICalendarDates reads the all-day events of an iCalendar file (RFC
// 5545): each VEVENT's DTSTART;VALUE=DATE to its DTEND (exclusive; one
// day without), its SUMMARY as the note. An event with a time of day is
// refused: a calendar holds whole dates.
func parseICalendarDates(text string) ([]schedule.CalendarDate, error) {
	// Unfold: a line beginning with a space or a tab continues the last.
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\n ", ""), "\n\t", "")
	var out []schedule.CalendarDate
	var in bool
	var start, end, summary string
	for n, line := range strings.Split(text, "\n") {
		name, value, _ := strings.Cut(line, ":")
		prop, _, _ := strings.Cut(name, ";")
		switch strings.ToUpper(prop) {
		case "BEGIN":
			if strings.EqualFold(value, "VEVENT") {
				in, start, end, summary = true, "", "", ""
			}
		case "DTSTART":
			start = value
		case "DTEND":
			end = value
		case "SUMMARY":
			summary = strings.NewReplacer(`\,`, ",", `\;`, ";", `\n`, " ", `\\`, `\`).Replace(value)
		case "END":
			if !in || !strings.EqualFold(value, "VEVENT") {
				continue
			}
			in = false
			first, err := time.Parse("20060102", strings.TrimSpace(start))
			if err != nil {
				return nil, fmt.Errorf("line %d: the event %q starts at %q, which is not a date (an all-day event's DTSTART;VALUE=DATE:YYYYMMDD)", n+1, summary, start)
			}
			last := first
			if end != "" {
				if last, err = time.Parse("20060102", strings.TrimSpace(end)); err != nil || !last.After(first) {
					return nil, fmt.Errorf("line %d: the event %q ends at %q, which is not a date after its start", n+1, summary, end)
				}
				last = last.AddDate(0, 0, -1) // DTEND is exclusive
			}
			for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
				out = append(out, schedule.CalendarDate{Date: d.Format(time.DateOnly), Note: summary})
			}
		}
	}
	return out, nil
}
