package schedule

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/runmeta"
	"github.com/tributary-go/tributary/internal/wfruntime"
)

// BackfillOpts override, for the backfilled runs, the schedule's input, and
// choose the overlap policy and whether slots skipped before run now. A nil
// *BackfillOpts backfills with OverlapBuffer and leaves skipped slots as
// they are.
type BackfillOpts struct {
	// Input replaces the schedule's input for these runs.
	Input any
	// Overlap is how the backfilled runs overlap each other and the
	// schedule's unfinished runs: OverlapBuffer (the default) runs them
	// all, one after the other; OverlapAllow starts them all at once;
	// OverlapSkip and OverlapQueue apply the schedule policies of those
	// names slot by slot, so they skip slots while one runs (the result
	// says how many); OverlapReplace cancels the schedule's unfinished
	// runs, then starts them all.
	Overlap OverlapPolicy
	// RerunSkipped runs the slots of the range that were recorded as
	// skipped (overlap, missed, a grant, a refused start): their skip
	// record is replaced by the new run, whose metadata keeps the old
	// reason as schedule_rerun_of. Without it, a skipped slot counts as
	// having run, like any other slot with a record.
	RerunSkipped bool
}

// BackfillResult says what a backfill did with each slot of its range:
// Slots = Started + Queued + Existing + the sum of Skipped.
type BackfillResult struct {
	// Slots is how many slots the range holds.
	Slots int `json:"slots"`
	// Started is how many runs started at once.
	Started int `json:"started"`
	// Queued is how many runs wait for the one before them (OverlapBuffer,
	// OverlapQueue) and start when it finishes.
	Queued int `json:"queued"`
	// Existing is how many slots had their run, or their skip record,
	// already and were left alone.
	Existing int `json:"existing"`
	// Rerun is how many of the started and queued runs replaced a skip
	// record (BackfillOpts.RerunSkipped).
	Rerun int `json:"rerun"`
	// Skipped counts the slots recorded as skipped now, by reason:
	// "overlap" under OverlapSkip or OverlapQueue, a grant's reason.
	Skipped map[string]int `json:"skipped,omitempty"`
}

// String says what became of the slots, for people: "20 slots: 1 started,
// 19 queued to run one after the other", then what was skipped and why,
// what had run already and what ran again after a skip.
func (r *BackfillResult) String() string {
	if r.Slots == 0 {
		return "no slot in this range"
	}
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(r.Started, "started")
	add(r.Queued, "queued to run one after the other")
	for _, reason := range slices.Sorted(maps.Keys(r.Skipped)) {
		add(r.Skipped[reason], "skipped ("+reason+")")
	}
	add(r.Existing, "had run (or been skipped) already")
	add(r.Rerun, "of them run again after a skip")
	slots := fmt.Sprintf("%d slots", r.Slots)
	if r.Slots == 1 {
		slots = "1 slot"
	}
	return slots + ": " + strings.Join(parts, ", ")
}

// Backfill runs the schedule's slots in [from, to) that have no run yet,
// oldest first, each at most once: a slot that has its run, or a record of
// why it was skipped, is left alone (see BackfillOpts.RerunSkipped). A
// backfill is an explicit request to run those slots, so by default it
// runs all of them, one after the other (OverlapBuffer), whatever the
// schedule's own overlap policy; the execution grant applies as at fire
// time. It is one transaction: all of it or none. The result counts what
// happened to every slot of the range. A start the workflow engine refuses
// (an Input over its limit) is an error, and nothing is written.
func (c *Client) Backfill(ctx context.Context, ref Ref, from, to time.Time, opts *BackfillOpts) (*BackfillResult, error) {
	var res *BackfillResult
	err := pgx.BeginFunc(ctx, c.rt.Pool(), func(tx pgx.Tx) error {
		var err error
		res, err = c.BackfillTx(ctx, tx, ref, from, to, opts)
		return err
	})
	return res, err
}

// BackfillTx is like Backfill, within tx; the caller commits or rolls back.
func (c *Client) BackfillTx(ctx context.Context, tx pgx.Tx, ref Ref, from, to time.Time, opts *BackfillOpts) (*BackfillResult, error) {
	if !to.After(from) {
		return nil, &ValidationError{Field: "to", Problem: "is not after from"}
	}
	if opts == nil {
		opts = &BackfillOpts{}
	}
	policy := cmp.Or(opts.Overlap, OverlapBuffer)
	lockPolicy := policy
	if policy == OverlapBuffer {
		lockPolicy = ""
	} else if _, err := overlapOverride("BackfillOpts.Overlap", OverlapSkip, policy); err != nil {
		return nil, &ValidationError{Field: "BackfillOpts.Overlap", Problem: fmt.Sprintf("%q is not an overlap policy; use buffer (the default: all, one after the other), allow, skip, queue or replace", policy)}
	}
	id, err := c.id(ctx, tx, ref)
	if err != nil {
		return nil, err
	}
	s, err := c.lockToStart(ctx, tx, id, lockPolicy)
	if err != nil {
		return nil, err
	}
	if opts.Input != nil {
		input, err := json.Marshal(opts.Input)
		if err != nil {
			return nil, &ValidationError{Field: "BackfillOpts.Input", Problem: fmt.Sprintf("cannot be encoded as JSON: %v", err)}
		}
		s.Input = input
		if err := c.checkInput(ctx, tx, s.Workflow, s.Input, "BackfillOpts.Input"); err != nil {
			return nil, err
		}
	} else if err := c.checkInput(ctx, tx, s.Workflow, s.Input, "Input"); err != nil {
		return nil, fmt.Errorf("%w (the schedule's input; pass BackfillOpts.Input, or Update the schedule)", err)
	}
	if err := c.loadCalendarsTx(ctx, tx, s); err != nil {
		return nil, err
	}
	spec, err := s.Spec()
	if err != nil {
		return nil, err
	}
	var due []Occurrence
	for _, occ := range spec.NextN(from.Add(-time.Second), MaxBackfill+1) {
		if !occ.At.Before(to) {
			break
		}
		due = append(due, occ)
	}
	if len(due) > MaxBackfill {
		return nil, &ValidationError{Field: "range", Problem: fmt.Sprintf("holds more than %d slots; backfill a shorter range at a time", MaxBackfill)}
	}
	return c.startSlotsTx(ctx, tx, s, spec, due, policy, opts.RerunSkipped)
}

// startSlotsTx starts the runs of slots (oldest first), each at most once,
// under policy (OverlapBuffer or a schedule policy), in one
// StartScheduledManyTx, and counts what it did with each slot. With
// rerunSkipped, the slots' skip records are deleted first and their slots
// run like the others.
func (c *Client) startSlotsTx(ctx context.Context, tx pgx.Tx, s *Schedule, spec *Spec, slots []Occurrence, policy OverlapPolicy, rerunSkipped bool) (*BackfillResult, error) {
	res := &BackfillResult{Slots: len(slots)}
	if len(slots) == 0 {
		return res, nil
	}
	at := make([]time.Time, len(slots))
	for i, occ := range slots {
		at[i] = occ.At
	}
	rerunOf := map[int64]string{}
	if rerunSkipped {
		skipped, err := c.q.DeleteSkippedSlotsTx(ctx, tx, s.ID, at)
		if err != nil {
			return nil, fmt.Errorf("schedule: delete the skip records of %s to run them: %w", s.ID, err)
		}
		for _, sk := range skipped {
			rerunOf[sk.FireAt.UnixMicro()] = sk.Reason
		}
	}
	// Leave out the slots that have their run already, with a plain read
	// (see StartScheduledManyTx): their overlap policy must not act again.
	done, err := c.q.SlotsWithRuns(ctx, tx, s.ID, at)
	if err != nil {
		return nil, fmt.Errorf("schedule: find the slots of %s that have run: %w", s.ID, err)
	}

	now := c.now()
	var grantMeta runmeta.Meta
	grantSkip, err := c.checkGrant(ctx, tx, s, now, &grantMeta)
	if err != nil {
		return nil, err
	}
	var busy, queued bool
	switch {
	case grantSkip != "" || policy == OverlapAllow:
	case policy == OverlapReplace:
		if _, err := c.rt.CancelScheduleRunsTx(ctx, tx, &wfruntime.ScheduleRuns{ScheduleID: s.ID}); err != nil {
			return nil, err
		}
	default:
		if busy, queued, err = c.q.ScheduleRunsUnfinished(ctx, tx, s.ID); err != nil {
			return nil, err
		}
		busy = busy || queued
	}

	var starts []*wfruntime.ScheduledStart
	tenant := s.RunTenant()
	for _, occ := range slots {
		if slices.ContainsFunc(done, occ.At.Equal) {
			res.Existing++
			continue
		}
		meta, dstSkipped := slotMetadata(spec, occ.At)
		meta.Backfill = true
		meta.GrantSubject, meta.GrantID = grantMeta.GrantSubject, grantMeta.GrantID
		if reason, ok := rerunOf[occ.At.UnixMicro()]; ok {
			meta.RerunOf = reason
		}
		skip, startAt := grantSkip, time.Time{}
		if skip == "" {
			skip = dstSkipped
		}
		if skip == "" {
			switch policy {
			case OverlapBuffer:
				if busy {
					meta.Queued = true
					startAt = now.Add(queuedHold)
				}
				busy = true
			case OverlapQueue:
				switch {
				case !busy:
					busy = true
				case !queued:
					meta.Queued = true
					startAt, queued = now.Add(queuedHold), true
				default:
					skip = SkipReasonOverlap
				}
			case OverlapSkip:
				if busy {
					skip = SkipReasonOverlap
				}
				busy = true
			}
		}
		starts = append(starts, &wfruntime.ScheduledStart{
			FireAt: occ.At, Input: s.Input, MaxAttempts: s.MaxAttempts, Retry: s.retryJSON, Metadata: meta, Priority: s.Priority,
			Queue: s.Queue, ScheduleID: s.ID, Skip: skip, StartAt: startAt, Timeout: s.Timeout, Trigger: wfruntime.TriggerBackfill, Type: s.Workflow,
			Tenant: tenant,
		})
	}
	started, err := c.rt.StartScheduledManyTx(ctx, tx, starts)
	if err != nil {
		return nil, err
	}
	for i, st := range started {
		switch {
		case st.Existing:
			res.Existing++
		case st.Skip != "" && starts[i].Skip == "":
			// The engine refused the run (an input over its limit): an
			// operator's explicit start says so instead of recording it.
			return nil, &ValidationError{Field: "run", Problem: strings.TrimPrefix(st.Skip, wfruntime.SkipCannotStart) + " (nothing was backfilled)"}
		case st.Skip != "":
			if res.Skipped == nil {
				res.Skipped = map[string]int{}
			}
			res.Skipped[skipKind(st.Skip)]++
		case !starts[i].StartAt.IsZero():
			res.Queued++
		default:
			res.Started++
		}
		if _, ok := rerunOf[starts[i].FireAt.UnixMicro()]; ok && st.Skip == "" && !st.Existing {
			res.Rerun++
		}
	}
	if ran := res.Started + res.Queued; ran > 0 {
		if err := c.q.AddScheduleRunsTx(ctx, tx, s.ID, ran, c.sqlNow()); err != nil {
			return nil, err
		}
	}
	return res, nil
}
