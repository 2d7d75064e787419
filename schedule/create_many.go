package schedule

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
)

// MaxCreateMany is the most schedules one CreateMany or CreateManyTx call
// creates. Split a bigger batch over several calls (each in a transaction
// of its own, or several in one transaction with CreateManyTx).
const MaxCreateMany = 10_000

// createManyChunk is the most rows one INSERT of CreateManyTx carries: it
// bounds the size of one statement's arrays.
const createManyChunk = 5_000

// ItemError reports the item of a CreateMany or CreateManyTx call that was
// refused, by its index in params and its name. Nothing was written when it
// is returned. It unwraps to the error Create would have returned for that
// item (a *ValidationError, *CronError, *ZoneError or *NoOccurrenceError),
// so it matches ErrInvalid, and errors.As finds the item's error too.
type ItemError struct {
	// Index is the item's index in params.
	Index int
	// Name is the item's Name ("" for a nil item).
	Name string
	// Err is why the item was refused.
	Err error
}

func (e *ItemError) Error() string {
	return fmt.Sprintf("schedule: params[%d] (%q): %s", e.Index, e.Name, strings.TrimPrefix(e.Err.Error(), "schedule: "))
}

func (e *ItemError) Unwrap() error { return e.Err }

// CreateMany creates many schedules at once, such as one per user of a
// tenant being onboarded, in one transaction: all of them or none.
//
// Every item is checked as Create checks it (the same fields, with the same
// errors, and its execution grant) before anything is written. When one is
// refused, CreateMany writes nothing and returns an *ItemError naming the
// first refused item by index and name; it matches ErrInvalid. That is the
// first item, in params order, whose fields are refused, or, when every
// item's fields pass, the first whose grant is refused. A nil item is
// refused. The batch's grants are read with one query, however many items
// share them.
//
// The schedules are inserted with one statement per 5,000 items and
// returned in the order of params. Each gets the first slot Create would
// give it, from one reading of the client's clock for the whole batch, so
// items with the same cron expression and zone (and no StartAt) share their
// first slot. Their fire jobs are inserted in the same transaction, one per
// distinct first slot rather than one per schedule: ten thousand schedules
// first due at the same 08:00 share one job (paused schedules have none).
// From the commit on, each schedule fires as if Create had made it.
//
// params may hold at most MaxCreateMany items; more are refused with an
// error matching ErrInvalid (not an *ItemError), and nothing is written.
// Empty params create nothing and return an empty slice.
func (c *Client) CreateMany(ctx context.Context, params []*Params) ([]*Schedule, error) {
	if len(params) == 0 {
		return []*Schedule{}, nil
	}
	var out []*Schedule
	err := pgx.BeginFunc(ctx, c.wf.Pool(), func(tx pgx.Tx) error {
		var err error
		out, err = c.CreateManyTx(ctx, tx, params)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CreateManyTx is like CreateMany, within tx; the caller commits or rolls
// back. When it returns an error, it may have written some rows (never when
// the error is an *ItemError or the limit's): roll tx back.
func (c *Client) CreateManyTx(ctx context.Context, tx pgx.Tx, params []*Params) ([]*Schedule, error) {
	if len(params) > MaxCreateMany {
		return nil, &ValidationError{Field: "params", Problem: fmt.Sprintf(
			"holds %d schedules, the limit is MaxCreateMany (%d) per call; split them over several calls", len(params), MaxCreateMany)}
	}
	if len(params) == 0 {
		return []*Schedule{}, nil
	}

	checkInput, err := c.wf.InputChecker(ctx)
	if err != nil {
		return nil, err
	}
	rows := engine.NewInsertSchedulesParams(len(params))
	now := c.now()
	var firsts []time.Time
	for i, p := range params {
		v, err := c.validateAt(p, now, c.specs.get)
		if err != nil {
			return nil, itemError(i, p, err)
		}
		if err := inputError(checkInput(p.Workflow, v.input), "Input"); err != nil {
			return nil, itemError(i, p, err)
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, err
		}
		var next *time.Time
		if !p.Paused {
			next = &v.first
			firsts = append(firsts, v.first)
		}
		row := insertParams(id, p, v, next)
		rows.Add(&row)
	}
	if err := c.requireUsableGrants(ctx, tx, params, now); err != nil {
		return nil, err
	}

	out := make([]*Schedule, len(params))
	at := make(map[uuid.UUID]int, len(params))
	for i, id := range rows.ID {
		at[id] = i
	}
	for from := 0; from < len(params); from += createManyChunk {
		to := min(from+createManyChunk, len(params))
		inserted, err := schedulesOf(c.q.InsertSchedulesTx(ctx, tx, rows.Slice(from, to)))
		if err != nil {
			return nil, fmt.Errorf("schedule: insert %d schedules: %w", to-from, err)
		}
		for _, s := range inserted {
			out[at[s.ID]] = s
		}
	}
	if err := c.seedTx(ctx, tx, firsts...); err != nil {
		return nil, err
	}
	return out, nil
}

func itemError(i int, p *Params, err error) *ItemError {
	e := &ItemError{Index: i, Err: err}
	if p != nil {
		e.Name = p.Name
	}
	return e
}

// requireUsableGrants is requireUsableGrant for every item of params that
// has a grant, reading each distinct grant once; it returns the *ItemError
// of the first item whose grant is refused.
func (c *Client) requireUsableGrants(ctx context.Context, tx pgx.Tx, params []*Params, now time.Time) error {
	var ids []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, p := range params {
		if p.GrantID != nil && !seen[*p.GrantID] {
			seen[*p.GrantID] = true
			ids = append(ids, *p.GrantID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	byID, err := c.grantsByID(ctx, tx, ids)
	if err != nil {
		return err
	}
	for i, p := range params {
		if p.GrantID == nil {
			continue
		}
		if g := byID[*p.GrantID]; g != nil && g.Check(p.Workflow, now) == nil {
			continue
		}
		// Refused: requireUsableGrant reads the grant again and says why, in
		// Create's words.
		err := c.requireUsableGrant(ctx, tx, *p.GrantID, p.Workflow)
		if err == nil {
			err = &ValidationError{Field: "GrantID", Problem: fmt.Sprintf("grant %s is not usable", *p.GrantID)}
		}
		if errors.Is(err, ErrInvalid) {
			return itemError(i, p, err)
		}
		return err
	}
	return nil
}
