package schedule_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

// TestParseCalendarLines: the lines of dates the CLI's --file and the
// dashboard's form take, ranges expanded a day each with the line's note,
// and what each bad line says.
func TestParseCalendarLines(t *testing.T) {
	t.Parallel()

	got, err := schedule.ParseCalendarLines("# US, 2027\r\n2027-12-24..2027-12-26\tChristmas\n\n2027-12-31, New Year's Eve\n")
	require.NoError(t, err)
	require.Equal(t, []schedule.CalendarDate{
		{Date: "2027-12-24", Note: "Christmas"}, {Date: "2027-12-25", Note: "Christmas"}, {Date: "2027-12-26", Note: "Christmas"},
		{Date: "2027-12-31", Note: "New Year's Eve"},
	}, got)

	for text, want := range map[string]string{
		"2027-12-24\nChristmas":  `line 2: "Christmas" is not a date`,
		"2027-12-26..2027-12-24": `line 1: "2027-12-26..2027-12-24" is not a range of dates, first to last`,
		"2027-01-01..2028-06-01": `line 1: "2027-01-01..2028-06-01" is longer than a year`,
		"2027-02-30":             `line 1: "2027-02-30" is not a date`,
	} {
		_, err := schedule.ParseCalendarLines(text)
		require.EqualError(t, err, want, "%q", text)
	}

	days, err := schedule.ExpandCalendarDate("2028-02-28..2028-03-01")
	require.NoError(t, err)
	require.Equal(t, []string{"2028-02-28", "2028-02-29", "2028-03-01"}, days)
}
