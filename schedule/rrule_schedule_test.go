package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestRRuleSchedule: a schedule of an RRULE is stored, read back, fired
// (here by backfill) with its DST policy like a cron schedule, updated to
// a cron expression and back, and bad rules write nothing.
func TestRRuleSchedule(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 60*time.Second)

	// Every other Tuesday at 02:30 in New York; its spring-forward
	// Tuesday... none: Sundays. The gap policy still applies to any.
	rule := "DTSTART:20260303T023000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU"
	s, err := sc.Create(ctx, &Params{Name: "fortnightly", Workflow: "tick", RRule: rule, TimeZone: "America/New_York",
		Overlap: OverlapAllow, Owner: "acme", Key: "fortnightly"})
	require.NoError(t, err)
	require.Equal(t, rule, s.RRule)
	require.Empty(t, s.Cron)
	got, err := sc.Get(ctx, ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, rule, got.RRule)
	require.Empty(t, got.Cron)

	res, err := sc.Backfill(ctx, ByID(s.ID), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 15, 0, 0, 0, 0, time.UTC), nil)
	require.NoError(t, err)
	require.Equal(t, 4, res.Slots)
	history, err := sc.History(ctx, ByID(s.ID), nil)
	require.NoError(t, err)
	var fired []string
	for _, run := range history {
		fired = append(fired, run.FireAt.UTC().Format(time.RFC3339))
	}
	require.Equal(t, []string{"2026-04-14T06:30:00Z", "2026-03-31T06:30:00Z", "2026-03-17T06:30:00Z", "2026-03-03T07:30:00Z"}, fired)

	// Creating it again with the same rule is the same schedule.
	again, err := sc.Create(ctx, &Params{Name: "fortnightly", Workflow: "tick", RRule: rule, TimeZone: "America/New_York",
		Overlap: OverlapAllow, Owner: "acme", Key: "fortnightly"})
	require.NoError(t, err)
	require.True(t, again.Existing)

	// To a cron expression and back.
	cron := "0 9 * * 1"
	s, err = sc.Update(ctx, ByID(s.ID), &UpdateParams{Cron: &cron})
	require.NoError(t, err)
	require.Equal(t, cron, s.Cron)
	require.Empty(t, s.RRule)
	s, err = sc.Update(ctx, ByID(s.ID), &UpdateParams{RRule: &rule})
	require.NoError(t, err)
	require.Equal(t, rule, s.RRule)
	require.Empty(t, s.Cron)
	require.NotNil(t, s.NextFireAt)
	require.Equal(t, time.Tuesday, s.NextFireAt.In(mustZone(t, "America/New_York")).Weekday())

	// Bad input writes nothing: both rules, a malformed rule, a rule
	// without its DTSTART.
	_, err = sc.Create(ctx, &Params{Name: "both", Workflow: "tick", Cron: "@daily", RRule: rule})
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "RRule", verr.Field)
	_, err = sc.Create(ctx, &Params{Name: "bad", Workflow: "tick", RRule: "DTSTART:20260303T023000\nRRULE:FREQ=FORTNIGHTLY"})
	var rerr *RRuleError
	require.ErrorAs(t, err, &rerr)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = sc.Create(ctx, &Params{Name: "bad", Workflow: "tick", RRule: "RRULE:FREQ=DAILY"})
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, "DTSTART", rerr.Part)
	list, err := sc.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list, 1)

	// Simulate takes an RRULE too.
	slots, err := Simulate(&Params{RRule: rule, TimeZone: "America/New_York"},
		&SimulateOpts{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	require.Len(t, slots, 3)
}
