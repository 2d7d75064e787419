package schedule

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
)

// ownerBatchSize is the number of schedules PauseOwner and ResumeOwner act
// on in one transaction: a resume seeds a fire job (and may start missed
// slots), so a batch stays small enough to commit in well under a second.
const ownerBatchSize = 100

// OwnerResult is what PauseOwner or ResumeOwner did. When the action stops
// midway (its context cancelled, an error), they return the result so far
// with the error: Changed lists exactly the schedules changed by the
// batches that committed; the batch that failed changed nothing.
type OwnerResult struct {
	// Owner is the owner whose schedules were acted on.
	Owner string `json:"owner"`
	// Action is "pause" or "resume".
	Action string `json:"action"`
	// Changed are the schedules paused (or resumed), as they are after it,
	// newest first.
	Changed []*Schedule `json:"changed"`
	// Unchanged are the ids of the owner's schedules that were paused
	// already (for a pause) or not paused (for a resume), left as they
	// were: a paused schedule keeps its note.
	Unchanged []uuid.UUID `json:"unchanged"`
	// Batches is the number of batches committed.
	Batches int `json:"batches"`
}

// PauseOwner pauses every schedule of owner that is not paused, with note,
// by the code of Pause, in batches of 100 schedules, each in a transaction
// of its own; no lock is held between batches, and ctx is checked between
// them. Schedules paused already keep their note (OwnerResult.Unchanged).
// An owner without schedules is ErrNotFound; an empty owner, a
// *ValidationError (it would be every schedule without one).
//
// There is no Tx twin: an owner's schedules may be many, and the action
// commits as it goes. To pause a few schedules within a transaction of
// your own, call PauseTx for each.
func (c *Client) PauseOwner(ctx context.Context, owner, note string) (*OwnerResult, error) {
	return c.eachOfOwner(ctx, owner, "pause", func(tx pgx.Tx, s *Schedule) (*Schedule, error) {
		if s.Paused {
			return nil, nil
		}
		return c.PauseTx(ctx, tx, ByID(s.ID), note)
	})
}

// ResumeOwner resumes every paused schedule of owner, by the code of
// Resume (opts as there: what becomes of the slots missed while paused), in
// batches as PauseOwner does. Schedules that are not paused are left as
// they are (OwnerResult.Unchanged).
func (c *Client) ResumeOwner(ctx context.Context, owner string, opts *ResumeOpts) (*OwnerResult, error) {
	return c.eachOfOwner(ctx, owner, "resume", func(tx pgx.Tx, s *Schedule) (*Schedule, error) {
		if !s.Paused {
			return nil, nil
		}
		return c.ResumeTx(ctx, tx, ByID(s.ID), opts)
	})
}

// eachOfOwner applies act, batch by batch, to each schedule of owner,
// locked in the batch's transaction: act returns the schedule it changed,
// or nil when it left it as it was.
func (c *Client) eachOfOwner(ctx context.Context, owner, action string, act func(tx pgx.Tx, s *Schedule) (*Schedule, error)) (*OwnerResult, error) {
	if owner == "" {
		return nil, &ValidationError{Field: "owner", Problem: "is empty; name the owner whose schedules to " + action}
	}
	res := &OwnerResult{Owner: owner, Action: action, Changed: []*Schedule{}, Unchanged: []uuid.UUID{}}
	p := &engine.ListSchedulesParams{Owner: owner, Limit: ownerBatchSize}
	for {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("schedule: %s of owner %q stopped after %d batches (%d schedules changed): %w", action, owner, res.Batches, len(res.Changed), err)
		}
		var changed []*Schedule
		var unchanged []uuid.UUID
		var last *uuid.UUID
		err := pgx.BeginFunc(ctx, c.rt.Pool(), func(tx pgx.Tx) error {
			changed, unchanged, last = nil, nil, nil
			rows, err := c.q.ListSchedules(ctx, tx, p)
			if err != nil {
				return fmt.Errorf("schedule: list the schedules of owner %q: %w", owner, err)
			}
			for _, row := range rows {
				s, err := c.lockToStart(ctx, tx, row.ID, "")
				if errors.Is(err, ErrNotFound) {
					continue // deleted since the listing
				}
				if err != nil {
					return err
				}
				if s, err = act(tx, s); err != nil {
					return fmt.Errorf("schedule: %s schedule %s: %w", action, row.ID, err)
				}
				if s == nil {
					unchanged = append(unchanged, row.ID)
				} else {
					changed = append(changed, s)
				}
			}
			if len(rows) > 0 {
				last = &rows[len(rows)-1].ID
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("schedule: %s of owner %q stopped after %d batches (%d schedules changed; the batch that failed changed nothing): %w",
				action, owner, res.Batches, len(res.Changed), err)
		}
		if last == nil {
			break
		}
		res.Batches++
		res.Changed = append(res.Changed, changed...)
		res.Unchanged = append(res.Unchanged, unchanged...)
		p.After = last
	}
	if len(res.Changed) == 0 && len(res.Unchanged) == 0 {
		return res, fmt.Errorf("%w: owner %q has no schedules", ErrNotFound, owner)
	}
	return res, nil
}

// Count counts the schedules p selects, as List would list them (its After
// and Limit aside), a page of 1,000 at a time: what a dry run of a bulk
// action reports.
func (c *Client) Count(ctx context.Context, p *ListParams) (int, error) {
	page := ListParams{}
	if p != nil {
		page = *p
	}
	page.After, page.Limit = nil, 1000
	n := 0
	for {
		list, err := c.List(ctx, &page)
		if err != nil {
			return 0, err
		}
		n += len(list)
		if len(list) < page.Limit {
			return n, nil
		}
		page.After = &list[len(list)-1].ID
	}
}
