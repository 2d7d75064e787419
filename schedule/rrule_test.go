package schedule

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rrWall parses a wall time written as in DTSTART, "19970902T090000".
func rrWall(t testing.TB, s string) time.Time {
	t.Helper()
	w, err := time.ParseInLocation("20060102T150405", s, time.UTC)
	require.NoError(t, err)
	return w
}

// rrDays returns the wall times at hhmmss on every step-th day from first to
// last, both written YYYYMMDD: the RFC's "September 2-30".
func rrDays(first, last, hhmmss string, step int) []string {
	from, _ := time.Parse("20060102", first)
	to, _ := time.Parse("20060102", last)
	var walls []string
	for d := from; !d.After(to); d = d.AddDate(0, 0, step) {
		walls = append(walls, d.Format("20060102")+"T"+hhmmss)
	}
	return walls
}

// rrAt returns the wall times on date YYYYMMDD at each hhmm.
func rrAt(date string, hhmms ...string) []string {
	walls := make([]string, len(hhmms))
	for i, hhmm := range hhmms {
		walls[i] = date + "T" + hhmm + "00"
	}
	return walls
}

// rrDates returns the wall times at 09:00 on each date, written YYYYMMDD.
func rrDates(dates ...string) []string {
	walls := make([]string, len(dates))
	for i, d := range dates {
		walls[i] = d + "T090000"
	}
	return walls
}

func rrConcat(lists ...[]string) []string {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	return all
}

// rrFirst returns the first n occurrences of r after DTSTART minus a second.
func rrFirst(t testing.TB, r *rrule, n int) []string {
	t.Helper()
	var got []string
	after := r.dtstart().Add(-time.Second)
	limit := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	for len(got) < n {
		w, ok := r.next(after, limit)
		if !ok {
			break
		}
		got = append(got, w.Format("20060102T150405"))
		after = w
	}
	return got
}

// The examples of RFC 5545 section 3.8.5.3. They are given in
// America/New_York; as wall times they are zone-free, so the expected
// values are the local times the RFC lists. UNTIL in UTC (which the
// package refuses) is written as the local time it names in New York:
// 19971224T000000Z is 19971223T190000. For rules that go on forever, the
// test checks the occurrences the RFC lists and that there are more; for
// the others, that there are no more.
func TestRRuleRFC5545Examples(t *testing.T) {
	t.Parallel()

	everyTwentyMinutes := func(date string) []string {
		var walls []string
		for h := 9; h <= 16; h++ {
			for _, m := range []int{0, 20, 40} {
				walls = append(walls, fmt.Sprintf("%sT%02d%02d00", date, h, m))
			}
		}
		return walls
	}
	thursdays := rrDates(
		"19970605", "19970612", "19970619", "19970626", "19970703", "19970710", "19970717", "19970724", "19970731",
		"19970807", "19970814", "19970821", "19970828",
		"19980604", "19980611", "19980618", "19980625", "19980702", "19980709", "19980716", "19980723", "19980730",
		"19980806", "19980813", "19980820", "19980827",
		"19990603", "19990610", "19990617", "19990624", "19990701", "19990708", "19990715", "19990722", "19990729",
		"19990805", "19990812", "19990819", "19990826",
	)

	for _, tt := range []struct {
		name    string
		start   string
		rule    string
		want    []string
		forever bool
	}{
		{"DailyFor10", "19970902T090000", "FREQ=DAILY;COUNT=10", rrDays("19970902", "19970911", "090000", 1), false},
		{"DailyUntilDecember24", "19970902T090000", "FREQ=DAILY;UNTIL=19971223T190000", rrDays("19970902", "19971223", "090000", 1), false},
		{"EveryOtherDay", "19970902T090000", "FREQ=DAILY;INTERVAL=2", rrDays("19970902", "19971203", "090000", 2), true},
		{"Every10DaysFor5", "19970902T090000", "FREQ=DAILY;INTERVAL=10;COUNT=5", rrDates("19970902", "19970912", "19970922", "19971002", "19971012"), false},
		{"EveryDayInJanuaryYearly", "19980101T090000", "FREQ=YEARLY;UNTIL=20000131T090000;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA",
			rrConcat(rrDays("19980101", "19980131", "090000", 1), rrDays("19990101", "19990131", "090000", 1), rrDays("20000101", "20000131", "090000", 1)), false},
		{"EveryDayInJanuaryDaily", "19980101T090000", "FREQ=DAILY;UNTIL=20000131T090000;BYMONTH=1",
			rrConcat(rrDays("19980101", "19980131", "090000", 1), rrDays("19990101", "19990131", "090000", 1), rrDays("20000101", "20000131", "090000", 1)), false},
		{"WeeklyFor10", "19970902T090000", "FREQ=WEEKLY;COUNT=10", rrDays("19970902", "19971104", "090000", 7), false},
		{"WeeklyUntilDecember24", "19970902T090000", "FREQ=WEEKLY;UNTIL=19971223T190000", rrDays("19970902", "19971223", "090000", 7), false},
		{"EveryOtherWeek", "19970902T090000", "FREQ=WEEKLY;INTERVAL=2;WKST=SU", rrDays("19970902", "19980217", "090000", 14), true},
		{"TuesdayThursdayFiveWeeksUntil", "19970902T090000", "FREQ=WEEKLY;UNTIL=19971006T200000;WKST=SU;BYDAY=TU,TH",
			rrDates("19970902", "19970904", "19970909", "19970911", "19970916", "19970918", "19970923", "19970925", "19970930", "19971002"), false},
		{"TuesdayThursdayFiveWeeksCount", "19970902T090000", "FREQ=WEEKLY;COUNT=10;WKST=SU;BYDAY=TU,TH",
			rrDates("19970902", "19970904", "19970909", "19970911", "19970916", "19970918", "19970923", "19970925", "19970930", "19971002"), false},
		{"EveryOtherWeekMondayWednesdayFriday", "19970901T090000", "FREQ=WEEKLY;INTERVAL=2;UNTIL=19971223T190000;WKST=SU;BYDAY=MO,WE,FR",
			rrDates("19970901", "19970903", "19970905", "19970915", "19970917", "19970919", "19970929",
				"19971001", "19971003", "19971013", "19971015", "19971017", "19971027", "19971029", "19971031",
				"19971110", "19971112", "19971114", "19971124", "19971126", "19971128",
				"19971208", "19971210", "19971212", "19971222"), false},
		{"EveryOtherWeekTuesdayThursdayFor8", "19970902T090000", "FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH",
			rrDates("19970902", "19970904", "19970916", "19970918", "19970930", "19971002", "19971014", "19971016"), false},
		{"FirstFridayFor10", "19970905T090000", "FREQ=MONTHLY;COUNT=10;BYDAY=1FR",
			rrDates("19970905", "19971003", "19971107", "19971205", "19980102", "19980206", "19980306", "19980403", "19980501", "19980605"), false},
		{"FirstFridayUntilDecember24", "19970905T090000", "FREQ=MONTHLY;UNTIL=19971223T190000;BYDAY=1FR",
			rrDates("19970905", "19971003", "19971107", "19971205"), false},
		{"EveryOtherMonthFirstAndLastSunday", "19970907T090000", "FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU",
			rrDates("19970907", "19970928", "19971102", "19971130", "19980104", "19980125", "19980301", "19980329", "19980503", "19980531"), false},
		{"SecondToLastMondayFor6Months", "19970922T090000", "FREQ=MONTHLY;COUNT=6;BYDAY=-2MO",
			rrDates("19970922", "19971020", "19971117", "19971222", "19980119", "19980216"), false},
		{"ThirdToLastDay", "19970928T090000", "FREQ=MONTHLY;BYMONTHDAY=-3",
			rrDates("19970928", "19971029", "19971128", "19971229", "19980129", "19980226"), true},
		{"SecondAndFifteenthFor10", "19970902T090000", "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15",
			rrDates("19970902", "19970915", "19971002", "19971015", "19971102", "19971115", "19971202", "19971215", "19980102", "19980115"), false},
		{"FirstAndLastDayFor10", "19970930T090000", "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1",
			rrDates("19970930", "19971001", "19971031", "19971101", "19971130", "19971201", "19971231", "19980101", "19980131", "19980201"), false},
		{"Every18MonthsTenthToFifteenth", "19970910T090000", "FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15",
			rrConcat(rrDays("19970910", "19970915", "090000", 1), rrDays("19990310", "19990313", "090000", 1)), false},
		{"EveryTuesdayEveryOtherMonth", "19970902T090000", "FREQ=MONTHLY;INTERVAL=2;BYDAY=TU",
			rrDates("19970902", "19970909", "19970916", "19970923", "19970930", "19971104", "19971111", "19971118", "19971125",
				"19980106", "19980113", "19980120", "19980127", "19980303", "19980310", "19980317", "19980324", "19980331"), true},
		{"YearlyInJuneAndJulyFor10", "19970610T090000", "FREQ=YEARLY;COUNT=10;BYMONTH=6,7",
			rrDates("19970610", "19970710", "19980610", "19980710", "19990610", "19990710", "20000610", "20000710", "20010610", "20010710"), false},
		{"EveryOtherYearJanuaryFebruaryMarchFor10", "19970310T090000", "FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3",
			rrDates("19970310", "19990110", "19990210", "19990310", "20010110", "20010210", "20010310", "20030110", "20030210", "20030310"), false},
		{"EveryThirdYearYearDaysFor10", "19970101T090000", "FREQ=YEARLY;INTERVAL=3;COUNT=10;BYYEARDAY=1,100,200",
			rrDates("19970101", "19970410", "19970719", "20000101", "20000409", "20000718", "20030101", "20030410", "20030719", "20060101"), false},
		{"Every20thMonday", "19970519T090000", "FREQ=YEARLY;BYDAY=20MO", rrDates("19970519", "19980518", "19990517"), true},
		{"MondayOfWeek20", "19970512T090000", "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO", rrDates("19970512", "19980511", "19990517"), true},
		{"EveryThursdayInMarch", "19970313T090000", "FREQ=YEARLY;BYMONTH=3;BYDAY=TH",
			rrDates("19970313", "19970320", "19970327", "19980305", "19980312", "19980319", "19980326", "19990304", "19990311", "19990318", "19990325"), true},
		{"EveryThursdayInSummer", "19970605T090000", "FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8", thursdays, true},
		// DTSTART does not match, so it is no occurrence: the RFC's
		// EXDATE of it is not needed.
		{"FridayThe13th", "19970902T090000", "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13",
			rrDates("19980213", "19980313", "19981113", "19990813", "20001013"), true},
		{"FirstSaturdayAfterFirstSunday", "19970913T090000", "FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13",
			rrDates("19970913", "19971011", "19971108", "19971213", "19980110", "19980207", "19980307", "19980411", "19980509", "19980613"), true},
		{"ElectionDay", "19961105T090000", "FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8",
			rrDates("19961105", "20001107", "20041102"), true},
		{"ThirdTuesdayWednesdayOrThursday", "19970904T090000", "FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3",
			rrDates("19970904", "19971007", "19971106"), false},
		{"SecondToLastWeekday", "19970929T090000", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2",
			rrDates("19970929", "19971030", "19971127", "19971230", "19980129", "19980226", "19980330"), true},
		// The RFC's UNTIL=19970902T170000Z is 13:00 in New York, which
		// would end before 15:00; its errata 1817 corrects the UTC time to
		// 21:00Z, 17:00 local, as written here.
		{"Every3HoursFrom9To5", "19970902T090000", "FREQ=HOURLY;INTERVAL=3;UNTIL=19970902T170000", rrAt("19970902", "0900", "1200", "1500"), false},
		{"Every15MinutesFor6", "19970902T090000", "FREQ=MINUTELY;INTERVAL=15;COUNT=6", rrAt("19970902", "0900", "0915", "0930", "0945", "1000", "1015"), false},
		{"EveryHourAndAHalfFor4", "19970902T090000", "FREQ=MINUTELY;INTERVAL=90;COUNT=4", rrAt("19970902", "0900", "1030", "1200", "1330"), false},
		{"Every20MinutesDaily", "19970902T090000", "FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16;BYMINUTE=0,20,40",
			rrConcat(everyTwentyMinutes("19970902"), everyTwentyMinutes("19970903")), true},
		{"Every20MinutesMinutely", "19970902T090000", "FREQ=MINUTELY;INTERVAL=20;BYHOUR=9,10,11,12,13,14,15,16",
			rrConcat(everyTwentyMinutes("19970902"), everyTwentyMinutes("19970903")), true},
		{"WeekStartMonday", "19970805T090000", "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO", rrDates("19970805", "19970810", "19970819", "19970824"), false},
		{"WeekStartSunday", "19970805T090000", "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU", rrDates("19970805", "19970817", "19970819", "19970831"), false},
		{"February30Ignored", "20070115T090000", "FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5", rrDates("20070115", "20070130", "20070215", "20070315", "20070330"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			r, err := parseRRule("DTSTART:" + tt.start + "\nRRULE:" + tt.rule)
			require.NoError(t, err)
			got := rrFirst(t, r, len(tt.want)+1)
			if tt.forever {
				require.Len(t, got, len(tt.want)+1, "the rule goes on")
				got = got[:len(tt.want)]
			}
			require.Equal(t, tt.want, got)

			// Each occurrence matches, and so does nothing between two.
			for i, s := range got {
				w := rrWall(t, s)
				require.True(t, r.matches(w), s)
				require.False(t, r.matches(w.Add(-time.Second)), s)
				if i > 0 {
					if prev := rrWall(t, got[i-1]); w.Sub(prev) > time.Second {
						require.False(t, r.matches(prev.Add(w.Sub(prev)/2).Truncate(time.Second)))
					}
				}
			}
		})
	}
}

func TestRRuleParse(t *testing.T) {
	t.Parallel()

	t.Run("Forms", func(t *testing.T) {
		t.Parallel()

		want := "DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=1MO,-1FR,TU;BYSETPOS=1;WKST=SU"
		for _, text := range []string{
			"DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=1MO,-1FR,TU;BYSETPOS=1;WKST=SU",
			"  RRULE:wkst=su;bysetpos=+1;byday=+1mo,-1fr,tu;interval=02;freq=weekly;\r\n\n dtstart:20270105t090000  \n",
			"FREQ=WEEKLY;INTERVAL=2;BYDAY=1MO,-1FR,TU;BYSETPOS=1;WKST=SU\nDTSTART:20270105T090000",
		} {
			// An ordinal in a WEEKLY rule is refused, so parse its MONTHLY twin.
			text = strings.NewReplacer("WEEKLY", "MONTHLY", "weekly", "monthly").Replace(text)
			r, err := parseRRule(text)
			require.NoError(t, err, text)
			require.Equal(t, strings.Replace(want, "WEEKLY", "MONTHLY", 1), r.String())
			require.Equal(t, rrWall(t, "20270105T090000"), r.dtstart())

			again, err := parseRRule(r.String())
			require.NoError(t, err)
			require.Equal(t, r.String(), again.String())
		}
	})

	t.Run("UntilDateIncludesTheDay", func(t *testing.T) {
		t.Parallel()

		r, err := parseRRule("DTSTART:20270105T090000\nRRULE:FREQ=DAILY;BYHOUR=9,23;UNTIL=20270106")
		require.NoError(t, err)
		require.Equal(t, []string{"20270105T090000", "20270105T230000", "20270106T090000", "20270106T230000"}, rrFirst(t, r, 10))
	})

	t.Run("ByDayWithAndWithoutOrdinals", func(t *testing.T) {
		t.Parallel()

		// Every Sunday and the first Tuesday of each month.
		r, err := parseRRule("DTSTART:20270101T090000\nRRULE:FREQ=MONTHLY;BYDAY=SU,1TU")
		require.NoError(t, err)
		require.Equal(t, rrDates("20270103", "20270105", "20270110", "20270117", "20270124", "20270131", "20270202", "20270207"), rrFirst(t, r, 8))
	})

	t.Run("DefaultsFromDTSTART", func(t *testing.T) {
		t.Parallel()

		for _, tt := range []struct {
			rule string
			want []string
		}{
			{"FREQ=YEARLY;COUNT=3", []string{"20270105T093007", "20280105T093007", "20290105T093007"}},
			{"FREQ=MONTHLY;COUNT=2", []string{"20270105T093007", "20270205T093007"}},
			{"FREQ=WEEKLY;COUNT=2", []string{"20270105T093007", "20270112T093007"}},
			{"FREQ=HOURLY;COUNT=2", []string{"20270105T093007", "20270105T103007"}},
			{"FREQ=MINUTELY;COUNT=2", []string{"20270105T093007", "20270105T093107"}},
			{"FREQ=SECONDLY;COUNT=2", []string{"20270105T093007", "20270105T093008"}},
			{"FREQ=DAILY;BYHOUR=8,10;COUNT=3", []string{"20270105T103007", "20270106T083007", "20270106T103007"}},
			{"FREQ=HOURLY;BYMINUTE=0;COUNT=2", []string{"20270105T100007", "20270105T110007"}},
		} {
			r, err := parseRRule("DTSTART:20270105T093007\nRRULE:" + tt.rule)
			require.NoError(t, err, tt.rule)
			require.Equal(t, tt.want, rrFirst(t, r, 10), tt.rule)
		}
	})
}

func TestRRuleErrors(t *testing.T) {
	t.Parallel()

	const start = "DTSTART:20270105T090000\n"
	for _, tt := range []struct {
		text string
		part string
	}{
		{"RRULE:FREQ=DAILY", "DTSTART"},
		{"DTSTART:20270105T090000", "RRULE"},
		{start + "RRULE:INTERVAL=2", "FREQ"},
		{start + "RRULE:FREQ=FORTNIGHTLY", "FREQ=FORTNIGHTLY"},
		{start + "RRULE:FREQ=DAILY;FOO=1", "FOO=1"},
		{start + "RRULE:FREQ=DAILY;BYHOUR", "BYHOUR"},
		{start + "RRULE:FREQ=DAILY;BYHOUR=", "BYHOUR="},
		{start + "RRULE:FREQ=DAILY;FREQ=WEEKLY", "FREQ=WEEKLY"},
		{start + "RRULE:FREQ=DAILY;INTERVAL=0", "INTERVAL=0"},
		{start + "RRULE:FREQ=DAILY;INTERVAL=-1", "INTERVAL=-1"},
		{start + "RRULE:FREQ=DAILY;INTERVAL=x", "INTERVAL=x"},
		{start + "RRULE:FREQ=DAILY;COUNT=0", "COUNT=0"},
		{start + "RRULE:FREQ=DAILY;COUNT=100001", "COUNT=100001"},
		{start + "RRULE:FREQ=DAILY;COUNT=3;UNTIL=20280101", "UNTIL=20280101"},
		{start + "RRULE:FREQ=DAILY;UNTIL=20280101T000000Z", "UNTIL=20280101T000000Z"},
		{start + "RRULE:FREQ=DAILY;UNTIL=2028-01-01", "UNTIL=2028-01-01"},
		{start + "RRULE:FREQ=DAILY;UNTIL=20280230", "UNTIL=20280230"},
		{start + "RRULE:FREQ=DAILY;UNTIL=20260101", "UNTIL=20260101"},
		{start + "RRULE:FREQ=MONTHLY;BYDAY=8MO", "BYDAY=8MO"},
		{start + "RRULE:FREQ=MONTHLY;BYDAY=0MO", "BYDAY=0MO"},
		{start + "RRULE:FREQ=YEARLY;BYDAY=54MO", "BYDAY=54MO"},
		{start + "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=6MO", "BYDAY=6MO"},
		{start + "RRULE:FREQ=WEEKLY;BYDAY=1MO", "BYDAY=1MO"},
		{start + "RRULE:FREQ=DAILY;BYDAY=MON", "BYDAY=MON"},
		{start + "RRULE:FREQ=DAILY;BYDAY=M", "BYDAY=M"},
		{start + "RRULE:FREQ=YEARLY;BYWEEKNO=20;BYDAY=1MO", "BYDAY=1MO"},
		{start + "RRULE:FREQ=MONTHLY;BYMONTHDAY=32", "BYMONTHDAY=32"},
		{start + "RRULE:FREQ=MONTHLY;BYMONTHDAY=0", "BYMONTHDAY=0"},
		{start + "RRULE:FREQ=WEEKLY;BYMONTHDAY=1", "BYMONTHDAY=1"},
		{start + "RRULE:FREQ=YEARLY;BYMONTH=13", "BYMONTH=13"},
		{start + "RRULE:FREQ=YEARLY;BYMONTH=1,,2", "BYMONTH=1,,2"},
		{start + "RRULE:FREQ=YEARLY;BYYEARDAY=367", "BYYEARDAY=367"},
		{start + "RRULE:FREQ=MONTHLY;BYYEARDAY=1", "BYYEARDAY=1"},
		{start + "RRULE:FREQ=YEARLY;BYWEEKNO=54", "BYWEEKNO=54"},
		{start + "RRULE:FREQ=MONTHLY;BYWEEKNO=1", "BYWEEKNO=1"},
		{start + "RRULE:FREQ=DAILY;BYHOUR=24", "BYHOUR=24"},
		{start + "RRULE:FREQ=DAILY;BYMINUTE=60", "BYMINUTE=60"},
		{start + "RRULE:FREQ=DAILY;BYSECOND=60", "BYSECOND=60"},
		{start + "RRULE:FREQ=MONTHLY;BYDAY=MO;BYSETPOS=0", "BYSETPOS=0"},
		{start + "RRULE:FREQ=MONTHLY;BYDAY=MO;BYSETPOS=367", "BYSETPOS=367"},
		{start + "RRULE:FREQ=MONTHLY;BYSETPOS=1", "BYSETPOS=1"},
		{start + "RRULE:FREQ=WEEKLY;WKST=XX", "WKST=XX"},
		{start + "RRULE:FREQ=DAILY;BYHOUR=9;", ""}, // valid: a trailing semicolon
		{"DTSTART:20270105T090000Z\nRRULE:FREQ=DAILY", "DTSTART:20270105T090000Z"},
		{"DTSTART;TZID=Europe/Paris:20270105T090000\nRRULE:FREQ=DAILY", "DTSTART;TZID=Europe/Paris"},
		{"DTSTART:20270105\nRRULE:FREQ=DAILY", "DTSTART:20270105"},
		{"DTSTART:20270105T250000\nRRULE:FREQ=DAILY", "DTSTART:20270105T250000"},
		{start + start + "RRULE:FREQ=DAILY", "DTSTART:20270105T090000"},
		{start + "RRULE:FREQ=DAILY\nRRULE:FREQ=WEEKLY", "RRULE:FREQ=WEEKLY"},
		{start + "RRULE;X-FOO=1:FREQ=DAILY", "RRULE;X-FOO=1"},
		{start + "RRULE:FREQ=DAILY\nEXDATE:20270106T090000", "EXDATE"},
		{start + "RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"},
		{start + "RRULE:FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31", "FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31"},
		{start + "RRULE:FREQ=HOURLY;INTERVAL=24;BYHOUR=5", "FREQ=HOURLY;INTERVAL=24;BYHOUR=5"},
		{start + "RRULE:FREQ=MINUTELY;INTERVAL=60;BYMINUTE=30", "FREQ=MINUTELY;INTERVAL=60;BYMINUTE=30"},
		{start + "RRULE:FREQ=MONTHLY;BYMONTHDAY=4;UNTIL=20270203", "FREQ=MONTHLY;BYMONTHDAY=4;UNTIL=20270203"},
	} {
		r, err := parseRRule(tt.text)
		if tt.part == "" {
			require.NoError(t, err, tt.text)
			require.NotNil(t, r)
			continue
		}
		require.Error(t, err, tt.text)
		var rerr *RRuleError
		require.ErrorAs(t, err, &rerr, tt.text)
		require.Equal(t, tt.part, rerr.Part, tt.text)
		require.Equal(t, tt.text, rerr.Rule)
		require.ErrorIs(t, err, ErrInvalid)
		require.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("schedule: bad RRULE %q: %s: ", tt.text, tt.part)), err.Error())
		require.Contains(t, err.Error(), "; ", "says what to do")
	}

	_, err := parseRRule("RRULE:FREQ=DAILY")
	require.EqualError(t, err, `schedule: bad RRULE "RRULE:FREQ=DAILY": DTSTART: an RRULE needs a DTSTART line: the first occurrence's local date and time, such as DTSTART:20270105T090000; `+
		`write a DTSTART line and an RRULE, such as "DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR" (RFC 5545 section 3.3.10)`)
}

// rrBruteRules are checked against a brute-force reading of RFC 5545: each
// with a function that says, from first principles, whether a wall time on
// or after DTSTART is an occurrence.
var rrBruteRules = []struct {
	start, rule string
	step        time.Duration // candidates are DTSTART plus multiples of step
	is          func(w time.Time) bool
}{
	{"20240105T090000", "FREQ=DAILY;BYHOUR=9", time.Hour, func(w time.Time) bool {
		return w.Hour() == 9
	}},
	{"20240102T090000", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", time.Hour, func(w time.Time) bool {
		days := int(w.Sub(rrMustWall("20240102T000000")).Hours()) / 24
		return w.Weekday() == time.Tuesday && w.Hour() == 9 && days/7%2 == 0
	}},
	{"20240131T170000", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", time.Hour, func(w time.Time) bool {
		// The last weekday of the month: no weekday follows it in its month.
		if w.Hour() != 17 || w.Weekday() == time.Saturday || w.Weekday() == time.Sunday {
			return false
		}
		for d := w.AddDate(0, 0, 1); d.Month() == w.Month(); d = d.AddDate(0, 0, 1) {
			if d.Weekday() != time.Saturday && d.Weekday() != time.Sunday {
				return false
			}
		}
		return true
	}},
	{"20240229T000000", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", time.Hour, func(w time.Time) bool {
		return w.Month() == time.February && w.Day() == 29 && w.Hour() == 0
	}},
	{"20240101T080000", "FREQ=MONTHLY;BYDAY=-1FR,2MO;BYHOUR=8,18", time.Hour, func(w time.Time) bool {
		last := w.AddDate(0, 0, 7).Month() != w.Month()
		second := w.Day() > 7 && w.Day() <= 14
		return (w.Hour() == 8 || w.Hour() == 18) && (w.Weekday() == time.Friday && last || w.Weekday() == time.Monday && second)
	}},
	{"20240101T000000", "FREQ=YEARLY;BYWEEKNO=1,-1;BYDAY=TH", time.Hour, func(w time.Time) bool {
		// ISO weeks, as WKST is MO by default.
		_, week := w.ISOWeek()
		_, lastWeek := time.Date(w.Year(), 12, 28, 0, 0, 0, 0, time.UTC).ISOWeek()
		y, _ := w.ISOWeek()
		if y != w.Year() {
			_, lastWeek = time.Date(y, 12, 28, 0, 0, 0, 0, time.UTC).ISOWeek()
		}
		return w.Weekday() == time.Thursday && w.Hour() == 0 && (week == 1 || week == lastWeek)
	}},
	{"20240101T000000", "FREQ=YEARLY;BYYEARDAY=-1,60,100", time.Hour, func(w time.Time) bool {
		lastDay := time.Date(w.Year(), 12, 31, 0, 0, 0, 0, time.UTC).YearDay()
		return w.Hour() == 0 && (w.YearDay() == lastDay || w.YearDay() == 60 || w.YearDay() == 100)
	}},
	{"20240101T003000", "FREQ=HOURLY;INTERVAL=5;BYDAY=SA,SU;BYMONTHDAY=1,2,3,4,5,6,7", 30 * time.Minute, func(w time.Time) bool {
		hours := int(w.Sub(rrMustWall("20240101T000000")).Hours())
		return w.Minute() == 30 && hours%5 == 0 && w.Day() <= 7 && (w.Weekday() == time.Saturday || w.Weekday() == time.Sunday)
	}},
	{"20240101T000000", "FREQ=MINUTELY;INTERVAL=7;BYHOUR=6;BYMONTH=1,7", time.Minute, func(w time.Time) bool {
		minutes := int(w.Sub(rrMustWall("20240101T000000")).Minutes())
		return minutes%7 == 0 && w.Hour() == 6 && (w.Month() == 1 || w.Month() == 7)
	}},
}

func rrMustWall(s string) time.Time {
	w, err := time.ParseInLocation("20060102T150405", s, time.UTC)
	if err != nil {
		panic(err)
	}
	return w
}

// TestRRuleBruteForce enumerates every candidate wall time for a few years
// and checks that matches agrees with a brute-force reading of the rule, and
// that next, from a candidate, returns the next one that does.
func TestRRuleBruteForce(t *testing.T) {
	t.Parallel()

	for _, tt := range rrBruteRules {
		t.Run(tt.rule, func(t *testing.T) {
			t.Parallel()

			r, err := parseRRule("DTSTART:" + tt.start + "\nRRULE:" + tt.rule)
			require.NoError(t, err)

			start := rrMustWall(tt.start)
			end := start.AddDate(4, 0, 0)
			var occurrences []time.Time
			for w := start; w.Before(end); w = w.Add(tt.step) {
				want := tt.is(w)
				require.Equal(t, want, r.matches(w), "matches(%s)", w.Format(time.DateTime))
				if want {
					occurrences = append(occurrences, w)
				}
			}
			require.NotEmpty(t, occurrences)

			// next from before DTSTART, from each occurrence, and from a
			// second before it.
			got, ok := r.next(start.AddDate(-1, 0, 0), end)
			require.True(t, ok)
			require.Equal(t, occurrences[0], got)
			for i, w := range occurrences[1:] {
				got, ok := r.next(occurrences[i], end)
				require.True(t, ok)
				require.Equal(t, w, got)
				got, ok = r.next(w.Add(-time.Second), w)
				require.True(t, ok)
				require.Equal(t, w, got)
				_, ok = r.next(w.Add(-time.Second), w.Add(-time.Second))
				require.False(t, ok, "limit")
			}

			// next from random wall times, not only candidates.
			rnd := rand.New(rand.NewPCG(1, 2))
			for range 2000 {
				after := start.Add(time.Duration(rnd.Int64N(int64(end.Sub(start)))))
				want := time.Time{}
				for _, w := range occurrences {
					if w.After(after.Truncate(time.Second)) {
						want = w
						break
					}
				}
				got, ok := r.next(after, end.Add(-time.Second))
				require.Equal(t, !want.IsZero(), ok, "next(%s)", after)
				require.Equal(t, want, got, "next(%s)", after)
			}
		})
	}
}

func TestRRuleEnds(t *testing.T) {
	t.Parallel()

	far := rrMustWall("99991231T235959")
	for _, text := range []string{
		"DTSTART:20270105T090000\nRRULE:FREQ=SECONDLY;COUNT=100000",
		"DTSTART:20270105T090000\nRRULE:FREQ=DAILY;UNTIL=20270110",
		"DTSTART:20270105T090000\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;COUNT=3",
	} {
		r, err := parseRRule(text)
		require.NoError(t, err)
		began := time.Now()
		_, ok := r.next(rrMustWall("20400101T000000"), far)
		require.False(t, ok, text)
		require.Less(t, time.Since(began), 10*time.Millisecond, text)
	}

	// A rule that goes on to year 9999 and no further.
	r, err := parseRRule("DTSTART:20270105T090000\nRRULE:FREQ=YEARLY")
	require.NoError(t, err)
	last, ok := r.next(rrMustWall("99990101T000000"), far.AddDate(5, 0, 0))
	require.True(t, ok)
	require.Equal(t, rrMustWall("99990105T090000"), last)
	_, ok = r.next(last, far.AddDate(5, 0, 0))
	require.False(t, ok)

	// A sparse rule: 29 February on a Monday, 28 or 40 years apart (2100
	// is no leap year).
	r, err = parseRRule("DTSTART:20240101T000000\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO")
	require.NoError(t, err)
	require.Equal(t, []string{"20440229T000000", "20720229T000000", "21120229T000000"}, rrFirst(t, r, 3))
	_, ok = r.next(rrMustWall("20440301T000000"), rrMustWall("20720228T235959"))
	require.False(t, ok, "limit")
}

func TestRRuleConcurrent(t *testing.T) {
	t.Parallel()

	r, err := parseRRule("DTSTART:20270105T090000\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=500")
	require.NoError(t, err)
	want := rrFirst(t, r, 500)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			if got := rrFirst(t, r, 500); !equalStrings(got, want) {
				errs <- errors.New("different occurrences")
				return
			}
			errs <- nil
		}()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
}

func equalStrings(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }
