package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

// TestCalendarCommands: a calendar imported from an iCalendar file,
// changed from a file of dates and from --dates, listed, read and
// deleted; a schedule that excludes it, from the CLI; the errors.
func TestCalendarCommands(t *testing.T) {
	t.Parallel()

	_, vars := migratedDB(t)

	res := runCLI(t, vars, "calendar", "create", "us-holidays", "--description", "US federal holidays", "--file", "testdata/us-holidays-2027.ics")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "created calendar us-holidays with 12 dates\n", res.stdout)

	res = runCLI(t, vars, "calendar", "get", "us-holidays")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, "Name:         us-holidays\nDescription:  US federal holidays\nSchedules:    0 exclude it\n")
	require.Contains(t, res.stdout, "2027-01-18  Mon  Martin Luther King, Jr. Day\n")
	require.Contains(t, res.stdout, "2027-12-31  Fri  New Year's Day (observed)\n")

	// A file of dates, with a range and comments; --dates with a note.
	file := filepath.Join(t.TempDir(), "office.txt")
	require.NoError(t, os.WriteFile(file, []byte("# office closed\n2027-12-27..2027-12-30 winter break\n\n2028-01-17 Martin Luther King, Jr. Day\n"), 0o600))
	res = runCLI(t, vars, "calendar", "add", "us-holidays", "--file", file)
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "5 dates added to calendar us-holidays; it holds 17, and 0 schedules exclude it\n", res.stdout)
	res = runCLI(t, vars, "calendar", "remove", "us-holidays", "--dates", "2027-12-27..2027-12-30")
	require.Equal(t, ExitOK, res.code, res.stderr)
	res = runCLI(t, vars, "calendar", "remove", "us-holidays", "--dates", "2028-01-17")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "1 date removed from calendar us-holidays; it holds 12, and 0 schedules exclude it\n", res.stdout)
	res = runCLI(t, vars, "calendar", "add", "us-holidays", "--dates", "2028-01-17", "--note", "Martin Luther King, Jr. Day")
	require.Equal(t, ExitOK, res.code, res.stderr)
	res = runCLI(t, vars, "calendar", "add", "us-holidays", "--dates", "2028-02-21", "--note", "Washington's Birthday", "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var cal schedule.Calendar
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &cal))
	require.Len(t, cal.Dates, 14)
	require.Equal(t, schedule.CalendarDate{Date: "2028-02-21", Note: "Washington's Birthday"}, cal.Dates[13])

	// The last business day of each month at 18:00 in New York, skipping
	// US holidays: December 2027's (the 31st) is skipped.
	id := createSchedule(t, vars, "--name", "month end", "--cron", "0 18 LW * *", "--tz", "America/New_York", "--workflow", "w",
		"--owner", "calendars", "--calendars", "us-holidays")
	s := getSchedule(t, vars, id)
	require.Equal(t, []string{"us-holidays"}, s.Calendars)
	res = runCLI(t, vars, "schedule", "get", id.String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, "\nCalendars:        us-holidays (a slot on their dates is skipped)\n")
	res = runCLI(t, vars, "schedule", "update", id.String(), "--on-excluded", "next-business-day")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, schedule.ExcludedNextBusinessDay, getSchedule(t, vars, id).OnExcluded)

	res = runCLI(t, vars, "calendar", "list")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `^NAME +DATES +SCHEDULES +UPDATED +DESCRIPTION\nus-holidays +14 +1 +\S+ +US federal holidays\n$`, res.stdout)
	// Which schedules they are.
	res = runCLI(t, vars, "schedule", "list", "--calendar", "us-holidays")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, "month end")
	res = runCLI(t, vars, "schedule", "list", "--calendar", "other")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.NotContains(t, res.stdout, "month end")

	// In use: not deleted, and the error says what to do.
	res = runCLI(t, vars, "calendar", "delete", "us-holidays")
	require.Equal(t, ExitError, res.code)
	require.Contains(t, res.stderr, `calendar "us-holidays" is excluded by 1 schedules (`+id.String()+`); remove it from them first`)
	res = runCLI(t, vars, "schedule", "update", id.String(), "--calendars", "")
	require.Equal(t, ExitOK, res.code, res.stderr)
	res = runCLI(t, vars, "calendar", "delete", "us-holidays")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "deleted calendar us-holidays\n", res.stdout)

	// Errors.
	res = runCLI(t, vars, "calendar", "get", "us-holidays")
	require.Equal(t, ExitError, res.code)
	require.Equal(t, "tributary: no calendar \"us-holidays\"; see 'tributary calendar list', or create it with 'tributary calendar create us-holidays'\n", res.stderr)
	res = runCLI(t, vars, "calendar", "create", "US Holidays")
	require.Equal(t, ExitUsage, res.code)
	require.Contains(t, res.stderr, `"US Holidays" is not a calendar name`)
	res = runCLI(t, vars, "calendar", "add", "x")
	require.Equal(t, ExitUsage, res.code)
	require.Contains(t, res.stderr, "calendar add needs --dates or --file")
	res = runCLI(t, vars, "calendar", "create", "y", "--dates", "12/25/2027")
	require.Equal(t, ExitUsage, res.code)
	require.Contains(t, res.stderr, `--dates: "12/25/2027" is not a date`)
	res = runCLI(t, vars, "schedule", "create", "--name", "z", "--cron", "@daily", "--workflow", "w", "--calendars", "no-such")
	require.Equal(t, ExitUsage, res.code)
	require.Contains(t, res.stderr, `there is no calendar "no-such"; create it first`)
}

// TestICalendarDates reads all-day events, folded lines and escapes, and
// refuses an event with a time of day.
func TestICalendarDates(t *testing.T) {
	t.Parallel()

	dates, err := parseICalendarDates("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20271224\r\nDTEND;VALUE=DATE:20271227\r\nSUMMARY:Winter\r\n  break\\, long\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
	require.NoError(t, err)
	require.Equal(t, []schedule.CalendarDate{{Date: "2027-12-24", Note: "Winter break, long"}, {Date: "2027-12-25", Note: "Winter break, long"}, {Date: "2027-12-26", Note: "Winter break, long"}}, dates)
	_, err = parseICalendarDates("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20271224T090000Z\nSUMMARY:Meeting\nEND:VEVENT\nEND:VCALENDAR\n")
	require.ErrorContains(t, err, `the event "Meeting" starts at "20271224T090000Z", which is not a date`)
}
