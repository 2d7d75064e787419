package schedule

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/workflow"
)

// checkGrants applies each slot's execution grant (GRANT_NOT_SESSION), one
// query for the batch: a slot whose grant is gone, revoked, expired or out
// of scope is skipped with the reason; an allowed one carries the grant's
// subject in its run's metadata.
func (c *Client) checkGrants(ctx context.Context, tx pgx.Tx, slots []*slot, now time.Time, stats *passStats) error {
	var ids []uuid.UUID
	for _, sl := range slots {
		if sl.skip == "" && sl.s.GrantID != nil {
			ids = append(ids, *sl.s.GrantID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	byID, err := c.grantsByID(ctx, tx, ids)
	if err != nil {
		return err
	}
	for _, sl := range slots {
		if sl.skip == "" && sl.s.GrantID != nil {
			sl.skip = byID[*sl.s.GrantID].admit(sl.s.Workflow, now, &sl.meta)
			if sl.skip != "" {
				if stats.denials == nil {
					stats.denials = map[string]int{}
				}
				stats.denials[sl.skip]++
			}
		}
	}
	return nil
}

// applyOverlap applies each slot's overlap policy, one read of the batch's
// unfinished runs: skip records a slot as skipped while the previous run is
// unfinished; queue holds one run until the previous finishes (and skips
// beyond that one); replace cancels the unfinished runs, which it first
// locks with SKIP LOCKED. A schedule whose runs another transaction holds
// (a run finishing this moment, whose status trigger waits for the
// schedule this batch holds) is returned, left out of the batch: waiting
// here would deadlock, and fireAlone takes the locks in the safe order.
func (c *Client) applyOverlap(ctx context.Context, tx pgx.Tx, slots []*slot, now time.Time) ([]uuid.UUID, error) {
	var ids [][16]byte
	for _, sl := range slots {
		if sl.skip == "" && sl.s.Overlap != OverlapAllow {
			ids = append(ids, sl.s.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	type unfinished struct {
		runs   []uuid.UUID
		busy   bool // a run that is not a queued one
		queued bool // a run held by overlap queue
	}
	bySchedule := map[uuid.UUID]*unfinished{}
	runs, err := c.q.UnfinishedRunsOfSchedules(ctx, tx, ids)
	if err != nil {
		return nil, fmt.Errorf("read the unfinished runs of %d schedules: %w", len(ids), err)
	}
	for _, r := range runs {
		u := bySchedule[r.ScheduleID]
		if u == nil {
			u = &unfinished{}
			bySchedule[r.ScheduleID] = u
		}
		u.runs = append(u.runs, r.ID)
		u.busy = u.busy || !r.Queued
		u.queued = u.queued || r.Queued
	}

	var toCancel []uuid.UUID
	for _, sl := range slots {
		u := bySchedule[sl.s.ID]
		if sl.skip != "" || u == nil {
			continue
		}
		switch sl.s.Overlap {
		case OverlapReplace:
			toCancel = append(toCancel, u.runs...)
		case OverlapQueue:
			switch {
			case !u.busy:
			case !u.queued:
				sl.meta.Queued = true
				sl.startAt = now.Add(queuedHold)
			default:
				sl.skip = SkipReasonOverlap
			}
		case OverlapSkip:
			if u.busy || u.queued {
				sl.skip = SkipReasonOverlap
			}
		}
	}
	if len(toCancel) == 0 {
		return nil, nil
	}

	locked, err := c.q.LockRunsSkipLockedTx(ctx, tx, toCancel)
	if err != nil {
		return nil, fmt.Errorf("lock the runs to replace: %w", err)
	}
	var deferred []uuid.UUID
	for _, sl := range slots {
		u := bySchedule[sl.s.ID]
		if sl.skip != "" || u == nil || sl.s.Overlap != OverlapReplace {
			continue
		}
		if slices.ContainsFunc(u.runs, func(id uuid.UUID) bool { return !slices.Contains(locked, id) }) {
			deferred = append(deferred, sl.s.ID)
			continue
		}
		for _, id := range u.runs {
			if err := c.wf.CancelTx(ctx, tx, id); err != nil && !errors.Is(err, workflow.ErrRunFinished) {
				return nil, fmt.Errorf("cancel run %s of schedule %s (overlap replace): %w", id, sl.s.ID, err)
			}
		}
	}
	return deferred, nil
}
