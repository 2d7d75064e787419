package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
)

// maxBackfillSlots bounds the slots one `schedule backfill` runs. It asks
// schedule.Client.Backfill for at most schedule.MaxBackfill at a time.
const maxBackfillSlots = 100 * schedule.MaxBackfill

// newScheduleBackfillCommand is `tributary schedule backfill`.
func newScheduleBackfillCommand(env *Env) *cobra.Command {
	return refCommand(env, &cobra.Command{
		Use:   "backfill " + scheduleRefUsage + " --from <time> --to <time> [flags]",
		Short: "Run the slots of a past time range that have no run yet: each once, oldest first, one after the other by default",
		Long: `Backfills in batches of up to 1000 slots, oldest first, each batch in one transaction,
			with a line of progress per batch. The backfill as a whole is not atomic: when it stops
			half-way (an error, Ctrl-C), the batches it reported are done and stay done, and the error
			says where it stopped. Running it again is safe and finishes it: a slot that has its run
			already is never run twice.`,
		Example: `tributary schedule backfill 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e --from 2026-03-01T00:00:00Z --to 2026-03-08T00:00:00Z
			tributary schedule backfill nightly-report --owner acme --from 2026-03-01T00:00:00Z --to 2026-03-08T00:00:00Z`,
	}, setupScheduleBackfill)
}

func setupScheduleBackfill(fs *pflag.FlagSet, env *Env) Action {
	refFlags := addRefFlags(fs)
	from := fs.String("from", "", "the RFC 3339 `time` the range starts at, such as 2026-03-01T00:00:00Z: the slots at or after it run (required)")
	to := fs.String("to", "", "the RFC 3339 `time` the range ends at, at most now: the slots before it run (required)")
	overlap := fs.String("overlap", "", "how the backfilled runs overlap: buffer (all of them, one after the other), allow (all at once), "+
		"skip or queue (the schedule policies: slots are skipped while one runs), replace (cancel the unfinished runs, then all at once) (default buffer)")
	rerunSkipped := fs.Bool("rerun-skipped", false, "also run the slots that were recorded as skipped (overlap, missed, a grant); their record is replaced by the run")
	type backfill struct {
		ref      schedule.Ref
		from, to time.Time
	}
	parse := func(args []string) (backfill, error) {
		ref, err := refFlags.ref("backfill", args)
		if err != nil {
			return backfill{}, err
		}
		var missing []string
		for flagName, value := range map[string]string{"from": *from, "to": *to} {
			if value == "" {
				missing = append(missing, "--"+flagName)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			return backfill{}, withHint(usageErrorf("schedule backfill needs %s", joinWords(missing)),
				fmt.Sprintf("e.g. tributary schedule backfill %s --from 2026-03-01T00:00:00Z --to 2026-03-08T00:00:00Z", refArgs(ref)))
		}
		fromAt, err := parseFlagTime("from", *from)
		if err != nil {
			return backfill{}, err
		}
		toAt, err := parseFlagTime("to", *to)
		if err != nil {
			return backfill{}, err
		}
		now := time.Now()
		switch {
		case !toAt.After(fromAt):
			return backfill{}, withHint(usageErrorf("--from %s is not before --to %s", *from, *to), "the range runs from --from up to --to; pass a --from earlier than --to")
		case toAt.After(now):
			return backfill{}, withHint(usageErrorf("--to %s is in the future", *to), "a backfill runs past slots, and the future ones fire on their own; pass a --to up to now")
		}
		return backfill{ref, fromAt, toAt}, nil
	}
	spec := dbSpec{json: "print {schedule_id, from, to, slots, started, queued, existing, rerun, skipped} as JSON, as POST /api/schedules/{id}/backfill answers it, instead of progress lines", schedules: true}
	return dbCommand(fs, env, spec, parse, func(ctx context.Context, c *commandRun, bf backfill) error {
		ref, fromAt, toAt := bf.ref, bf.from, bf.to

		s, err := c.sc.Get(ctx, ref)
		if err != nil {
			return scheduleError(err, ref)
		}
		id := s.ID
		ref = schedule.ByID(id) // the schedule read is the one backfilled
		spec, err := s.Spec()
		if err != nil {
			return scheduleError(err, ref)
		}
		// The slots in [from, to), found as Backfill finds them.
		var slots []time.Time
		for after := fromAt.Add(-time.Second); len(slots) <= maxBackfillSlots; {
			occurrence, ok := spec.Next(after)
			if !ok || !occurrence.At.Before(toAt) {
				break
			}
			slots = append(slots, occurrence.At)
			after = occurrence.At
		}
		if len(slots) > maxBackfillSlots {
			return withHint(usageErrorf("%s … %s holds more than %d slots of %q", *from, *to, maxBackfillSlots, s.Cron),
				"backfill a shorter range at a time")
		}

		// Backfill at most schedule.MaxBackfill slots a call, each call one
		// transaction: a backfill stopped half-way leaves its earlier
		// batches done, and running it again skips the slots that have
		// their run.
		loc := scheduleLocation(s)
		total := schedule.BackfillResult{Slots: len(slots)}
		if len(slots) == 0 && !c.asJSON {
			return printBackfillProgress(env.Stdout, fromAt, toAt, loc, &total, "")
		}
		opts := &schedule.BackfillOpts{Overlap: schedule.OverlapPolicy(*overlap), RerunSkipped: *rerunSkipped}
		batches := (len(slots) + schedule.MaxBackfill - 1) / schedule.MaxBackfill
		if batches > 1 && !c.asJSON {
			fmt.Fprintf(env.Stdout, "backfilling %d slots in %d batches of up to %d, one transaction each\n", len(slots), batches, schedule.MaxBackfill)
		}
		for start := 0; start < len(slots); start += schedule.MaxBackfill {
			end := min(start+schedule.MaxBackfill, len(slots))
			// A batch after the first starts right after the previous
			// batch's last slot: Backfill finds its first slot as the one
			// after that, as it was found here (an @every spec counts from
			// there). It is shown starting at its first slot.
			batchFrom, shownFrom, batchTo := fromAt, fromAt, toAt
			if start > 0 {
				batchFrom, shownFrom = slots[start-1].Add(time.Second), slots[start]
			}
			if end < len(slots) {
				batchTo = slots[end]
			}
			// A stop (Ctrl-C) between batches ends the backfill before the
			// next batch starts, so that it stops at a batch's edge.
			err := ctx.Err()
			var res *schedule.BackfillResult
			if err == nil {
				res, err = c.sc.Backfill(ctx, ref, batchFrom, batchTo, opts)
			}
			if err != nil && start > 0 {
				return withHint(fmt.Errorf("backfill stopped at %s, after %d of %d slots: %w", zonedTime(shownFrom, loc), start, len(slots), err),
					fmt.Sprintf("the slots before it are backfilled and stay so: to finish, run the command again with --from %s", shownFrom.UTC().Format(time.RFC3339)))
			}
			if err != nil {
				return runsError(err, ref, "")
			}
			addBackfill(&total, res)
			if !c.asJSON {
				done := ""
				if batches > 1 {
					done = fmt.Sprintf(" (%d of %d slots done)", end, len(slots))
				}
				if err := printBackfillProgress(env.Stdout, shownFrom, batchTo, loc, res, done); err != nil {
					return err
				}
			}
		}
		if c.asJSON {
			return printJSON(env.Stdout, wire.NewBackfill(id, fromAt, toAt, &total))
		}
		if batches > 1 {
			_, err = fmt.Fprintf(env.Stdout, "backfilled schedule %s (%q): %s\n", id, s.Name, &total)
		}
		return err
	})
}

// addBackfill adds a batch's result to the total.
func addBackfill(total, batch *schedule.BackfillResult) {
	total.Started += batch.Started
	total.Queued += batch.Queued
	total.Existing += batch.Existing
	total.Rerun += batch.Rerun
	for reason, n := range batch.Skipped {
		if total.Skipped == nil {
			total.Skipped = map[string]int{}
		}
		total.Skipped[reason] += n
	}
}

// printBackfillProgress prints one batch of a backfill: "backfilling
// 2026-03-01 00:00:00 UTC … 2026-03-08 00:00:00 UTC: 7 slots: 1 started, 6
// queued to run one after the other", and then done.
func printBackfillProgress(w io.Writer, from, to time.Time, loc *time.Location, res *schedule.BackfillResult, done string) error {
	_, err := fmt.Fprintf(w, "backfilling %s … %s: %s%s\n", zonedTime(from, loc), zonedTime(to, loc), res, done)
	return err
}
