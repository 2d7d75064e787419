package schedule

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSpecDescribe(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct {
		expr, want string
	}{
		// Seconds.
		{"* * * * * *", "every second"},
		{"*/10 * * * * *", "every 10 seconds"},
		{"0,15,30,45 * * * * *", "every 15 seconds"},
		{"30 * * * * *", "every minute at second 30"},
		{"*/7 * * * * *", "*/7 * * * * *"}, // 56 to 0 is 4 seconds: not "every 7"
		{"5/10 * * * * *", "5/10 * * * * *"},

		// Minutes and hours.
		{"* * * * *", "every minute"},
		{"0 * * * * *", "every minute"},
		{"*/5 * * * *", "every 5 minutes"},
		{"0,30 * * * *", "every 30 minutes"},
		{"*/7 * * * *", "*/7 * * * *"},
		{"0 * * * *", "every hour"},
		{"15 * * * *", "every hour at minute 15"},
		{"5,35 * * * *", "every hour at minutes 5 and 35"},
		{"0 */2 * * *", "every 2 hours"},
		{"30 */6 * * *", "every 6 hours at minute 30"},
		{"0 */5 * * *", "at 00:00, 05:00, 10:00, 15:00 and 20:00 every day"},
		{"0 1-23/2 * * *", "0 1-23/2 * * *"},
		{"0 9-17 * * *", "every hour from 09:00 to 17:00"},
		{"30 9-17 * * *", "every hour from 09:30 to 17:30"},
		{"*/15 9-17 * * *", "every 15 minutes from 09:00 to 17:45"},
		{"* 9-17 * * *", "every minute from 09:00 to 17:59"},

		// Fixed times of day.
		{"0 9 * * *", "at 09:00 every day"},
		{"30 2 * * *", "at 02:30 every day"},
		{"0,30 8,20 * * *", "at 08:00, 08:30, 20:00 and 20:30 every day"},
		{"15 30 9 * * *", "at 09:30:15 every day"},
		{"0 0 9 * * *", "at 09:00 every day"},
		{"0 1,2,3,4,5,6,7 * * *", "every hour from 01:00 to 07:00"},
		{"0 1,3,5,7,9,11,13 * * *", "0 1,3,5,7,9,11,13 * * *"},

		// Calendar terms.
		{"0 18 LW * *", "at 18:00 on the last business day of the month"},
		{"0 0 L * *", "at 00:00 on the last day of the month"},
		{"0 0 L-2 * *", "at 00:00 on the 3rd-to-last day of the month"},
		{"0 9 15W * *", "at 09:00 on the business day nearest day 15 of the month"},
		{"0 9 1,15,L * *", "at 09:00 on day 1, day 15 and the last day of the month"},
		{"0 9 * * MON#2", "at 09:00 on the second Monday of the month"},
		{"0 9 * * 5L", "at 09:00 on the last Friday of the month"},
		{"0 9 * * 1,5L", "at 09:00 on Monday and the last Friday of the month"},
		{"0 9 L * 5", "at 09:00 on the last day of the month or on Friday"},
		{"0 9 L 1,7 *", "at 09:00 on the last day of January and July"},
		{"0 0 * 2 FRI#5", "at 00:00 on the fifth Friday of February"},
		{"0 9 * 5 1,5L", "0 9 * 5 1,5L"},

		// Days of the week.
		{"0 9 * * 1-5", "at 09:00 on Monday through Friday"},
		{"0 9 * * MON-FRI", "at 09:00 on Monday through Friday"},
		{"0 9 * * 1,3,5", "at 09:00 on Monday, Wednesday and Friday"},
		{"0 9 * * 6,0", "at 09:00 on Saturday and Sunday"},
		{"0 9 * * 5,6,0", "at 09:00 on Friday through Sunday"},
		{"0 9 * * 1-3,5", "at 09:00 on Monday through Wednesday and Friday"},
		{"0 9 * * 0", "at 09:00 on Sunday"},
		{"*/10 * * * 1-5", "every 10 minutes on Monday through Friday"},
		{"0 9 ? * 1-5", "at 09:00 on Monday through Friday"},
		{"0 9 * * 0-6", "at 09:00 every day"},

		// Days of the month and months.
		{"0 0 1 * *", "at 00:00 on day 1 of the month"},
		{"0 0 1,15 * *", "at 00:00 on days 1 and 15 of the month"},
		{"0 0 1-7 * *", "at 00:00 on days 1 through 7 of the month"},
		{"0 0 31 * *", "at 00:00 on day 31 of the month"},
		{"0 0 1 1,7 *", "at 00:00 on day 1 of January and July"},
		{"0 0 25 12 *", "at 00:00 on 25 December"},
		{"0 0 29 2 *", "at 00:00 on 29 February"},
		{"0 9 * 1 *", "at 09:00 every day in January"},
		{"0 9 * 3-5 *", "at 09:00 every day in March through May"},
		{"0 9 * DEC 1-5", "at 09:00 on Monday through Friday in December"},
		{"*/30 * * 6 *", "every 30 minutes in June"},
		{"0 0 */2 * *", "0 0 */2 * *"},

		// cron's day rule: both restricted means either.
		{"0 0 13 * 5", "at 00:00 on day 13 of the month or on Friday"},
		{"0 0 1-31 * 1-5", "at 00:00 every day"},
		{"0 0 13 1 5", "0 0 13 1 5"},

		// Descriptors.
		{"@yearly", "at 00:00 on 1 January"},
		{"@annually", "at 00:00 on 1 January"},
		{"@monthly", "at 00:00 on day 1 of the month"},
		{"@weekly", "at 00:00 on Sunday"},
		{"@daily", "at 00:00 every day"},
		{"@midnight", "at 00:00 every day"},
		{"@hourly", "every hour"},
		{"@every 1h", "every hour"},
		{"@every 1s", "every second"},
		{"@every 10s", "every 10 seconds"},
		{"@every 1h30m", "every 1 hour 30 minutes"},
		{"@every 90s", "every 1 minute 30 seconds"},
		{"@every 36h", "every 36 hours"},
	} {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()

			spec, err := ParseSpec(tt.expr, "Europe/Paris")
			require.NoError(t, err)
			require.Equal(t, tt.want, spec.Describe())
		})
	}
}

// TestSpecDescribeFallback checks that an expression described by itself
// comes back normalized, as Expr returns it.
func TestSpecDescribeFallback(t *testing.T) {
	t.Parallel()

	spec, err := ParseSpec("  */7   * * * * ", "")
	require.NoError(t, err)
	require.Equal(t, "*/7 * * * *", spec.Describe())
}
