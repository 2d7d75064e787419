package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestDSTPolicyStored: a schedule's DST policy is stored, read back,
// updated and compared like its other fields, and its slots follow it: a
// slot the gap policy skips is in the ledger as skipped, with its note;
// the fold policy both runs a repeated wall time twice.
func TestDSTPolicyStored(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 60*time.Second)

	s, err := sc.Create(ctx, &Params{Name: "payroll", Workflow: "tick", Cron: "30 2 * * *", TimeZone: "America/New_York",
		Overlap: OverlapAllow, DSTGap: DSTGapSkip, DSTFold: DSTFoldBoth, Owner: "acme", Key: "payroll"})
	require.NoError(t, err)
	require.Equal(t, DSTGapSkip, s.DSTGap)
	require.Equal(t, DSTFoldBoth, s.DSTFold)
	got, err := sc.Get(ctx, ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, DSTPolicy{Gap: DSTGapSkip, Fold: DSTFoldBoth}, got.dst())
	spec, err := got.Spec()
	require.NoError(t, err)
	require.Equal(t, DSTPolicy{Gap: DSTGapSkip, Fold: DSTFoldBoth}, spec.DST())

	// The spring-forward day: the 02:30 slot is recorded as skipped.
	res, err := sc.Backfill(ctx, ByID(s.ID), time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC), nil)
	require.NoError(t, err)
	require.Equal(t, 3, res.Slots)
	history, err := sc.History(ctx, ByID(s.ID), nil)
	require.NoError(t, err)
	require.Len(t, history, 3)
	skipped := history[1] // newest first
	require.Equal(t, "2026-03-08T07:00:00Z", skipped.FireAt.UTC().Format(time.RFC3339))
	require.Equal(t, SkipReasonDSTGap, skipped.SkipReason)
	require.Equal(t, "skipped", string(skipped.Status))
	require.Equal(t, "2026-03-08T02:30:00", metaField(t, skipped.Metadata, "schedule_nominal"))
	require.Equal(t, "02:30 does not exist on 2026-03-08 in America/New_York (clocks jump from 02:00 to 03:00); skipped, as the schedule's DST policy says (gap: skip)",
		metaField(t, skipped.Metadata, "schedule_dst_note"))
	require.Empty(t, history[0].SkipReason)
	require.Empty(t, history[2].SkipReason)

	// Fall back, with fold both: 01:30 twice. Update moves the schedule to
	// 01:30 and to gap shift.
	cron, gap := "30 1 * * *", DSTGapShift
	s, err = sc.Update(ctx, ByID(s.ID), &UpdateParams{Cron: &cron, DSTGap: &gap})
	require.NoError(t, err)
	require.Equal(t, DSTPolicy{Gap: DSTGapShift, Fold: DSTFoldBoth}, s.dst())
	res, err = sc.Backfill(ctx, ByID(s.ID), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC), nil)
	require.NoError(t, err)
	require.Equal(t, 2, res.Slots)
	history, err = sc.History(ctx, ByID(s.ID), nil)
	require.NoError(t, err)
	require.Equal(t, "2026-11-01T06:30:00Z", history[0].FireAt.UTC().Format(time.RFC3339))
	require.Equal(t, "2026-11-01T05:30:00Z", history[1].FireAt.UTC().Format(time.RFC3339))

	// A key's spec includes its policy: creating it again with another is
	// a conflict naming the field.
	_, err = sc.Create(ctx, &Params{Name: "payroll", Workflow: "tick", Cron: cron, TimeZone: "America/New_York",
		Overlap: OverlapAllow, DSTGap: DSTGapShift, Owner: "acme", Key: "payroll"})
	var conflict *KeyConflictError
	require.ErrorAs(t, err, &conflict)
	require.Len(t, conflict.Diffs, 1)
	require.Equal(t, "DSTFold", conflict.Diffs[0].Field)

	// A bad policy: a ValidationError naming the field, nothing written.
	_, err = sc.Create(ctx, &Params{Name: "bad", Workflow: "tick", Cron: "30 2 * * *", DSTGap: "later"})
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "DSTGap", verr.Field)
	list, err := sc.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
}

// TestSimulateDSTPolicy: Simulate follows the schedule's DST policy.
func TestSimulateDSTPolicy(t *testing.T) {
	t.Parallel()

	slots, err := Simulate(&Params{Cron: "30 2 * * *", TimeZone: "America/New_York", DSTGap: DSTGapSkip},
		&SimulateOpts{From: time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	require.Len(t, slots, 3)
	require.Equal(t, SkipReasonDSTGap, slots[1].Skipped)
	require.Empty(t, slots[0].Skipped)
}
