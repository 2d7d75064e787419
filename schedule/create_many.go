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

// ItemError reports the item of a CreateMany, CreateManyTx or Declare call
// that was refused, by its index in params (or Declaration.Schedules) and
// its name. Nothing was written when it is returned. It unwraps to the
// error Create would have returned for that item (a *ValidationError,
// *CronError, *ZoneError or *NoOccurrenceError, which match ErrInvalid, or
// a *KeyConflictError), so errors.Is and errors.As find the item's error.
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
// An item with a Key is made as Create makes it: when its owner has the key
// already, with the same spec, that schedule is returned in its place,
// marked Existing, and nothing is inserted for it; with another spec the
// call fails with an *ItemError wrapping a *KeyConflictError. Two items
// with one key under one owner are refused. Running the same CreateMany
// again (a service's start-up) thus makes nothing new.
//
// params may hold at most MaxCreateMany items; more are refused with an
// error matching ErrInvalid (not an *ItemError), and nothing is written.
// Empty params create nothing and return an empty slice.
func (c *Client) CreateMany(ctx context.Context, params []*Params) ([]*Schedule, error) {
	if len(params) == 0 {
		return []*Schedule{}, nil
	}
	var out []*Schedule
	err := pgx.BeginFunc(ctx, c.rt.Pool(), func(tx pgx.Tx) error {
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
// the error is an *ItemError or the limit's, but for the *KeyConflictError
// of a key inserted by a racing transaction): roll tx back.
func (c *Client) CreateManyTx(ctx context.Context, tx pgx.Tx, params []*Params) ([]*Schedule, error) {
	return c.createManyTx(ctx, tx, params, "")
}

// createManyTx is CreateManyTx with the schedules declared by service
// declaredBy ("" for none).
func (c *Client) createManyTx(ctx context.Context, tx pgx.Tx, params []*Params, declaredBy string) ([]*Schedule, error) {
	if len(params) > MaxCreateMany {
		return nil, &ValidationError{Field: "params", Problem: fmt.Sprintf(
			"holds %d schedules, the limit is MaxCreateMany (%d) per call; split them over several calls", len(params), MaxCreateMany)}
	}
	if len(params) == 0 {
		return []*Schedule{}, nil
	}

	checkInput, err := c.rt.InputChecker(ctx, tx)
	if err != nil {
		return nil, err
	}
	items := make([]engine.InsertScheduleParams, len(params))
	var keyed []int
	keys := map[[2]string]int{}
	now := c.now()
	cal, err := c.paramsCalendars(ctx, tx, params)
	if err != nil {
		return nil, err
	}
	for i, p := range params {
		v, err := c.validateAt(p, now, c.specs.parse, cal)
		if err != nil {
			return nil, itemError(i, p, err)
		}
		if err := inputError(checkInput(p.Workflow, v.input), "Input"); err != nil {
			return nil, itemError(i, p, err)
		}
		if p.Key != "" {
			if j, ok := keys[[2]string{p.Owner, p.Key}]; ok {
				return nil, itemError(i, p, &ValidationError{Field: "Key", Problem: fmt.Sprintf(
					"%q is the key of item %d too, under the same owner %q; keys are unique per owner", p.Key, j, p.Owner)})
			}
			keys[[2]string{p.Owner, p.Key}] = i
			keyed = append(keyed, i)
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, err
		}
		var next *time.Time
		if !p.Paused {
			next = &v.first
		}
		items[i] = insertParams(id, p, v, next)
		items[i].DeclaredBy = declaredBy
	}
	if err := c.requireUsableGrants(ctx, tx, params, now); err != nil {
		return nil, err
	}

	// The keys their owners have already are found, not made: before
	// anything is written, and again for the keys a racing transaction
	// inserted meanwhile.
	out, err := c.existingKeysTx(ctx, tx, params, items, keyed)
	if err != nil {
		return nil, err
	}
	rows := engine.NewInsertSchedulesParams(len(params))
	rows.Now = c.sqlNow()
	var firsts []time.Time
	at := make(map[uuid.UUID]int, len(params))
	for i := range items {
		if out[i] != nil {
			continue
		}
		rows.Add(&items[i])
		at[items[i].ID] = i
		if items[i].NextFireAt != nil {
			firsts = append(firsts, *items[i].NextFireAt)
		}
	}
	for from := 0; from < rows.Len(); from += createManyChunk {
		to := min(from+createManyChunk, rows.Len())
		inserted, err := schedulesOf(c.q.InsertSchedulesTx(ctx, tx, rows.Slice(from, to)))
		if err != nil {
			return nil, fmt.Errorf("schedule: insert %d schedules: %w", to-from, err)
		}
		for _, s := range inserted {
			out[at[s.ID]] = s
		}
	}
	var raced []int
	for _, i := range keyed {
		if out[i] == nil {
			raced = append(raced, i)
		}
	}
	if len(raced) > 0 {
		// Their first slots were seeded below all the same: a fire job
		// finds its instant's due schedules, none if there are none.
		found, err := c.existingKeysTx(ctx, tx, params, items, raced)
		if err != nil {
			return nil, err
		}
		for _, i := range raced {
			if found[i] == nil {
				return nil, keyNotVisible(params[i].Owner, params[i].Key)
			}
			out[i] = found[i]
		}
	}
	if err := c.seedTx(ctx, tx, firsts...); err != nil {
		return nil, err
	}
	if err := c.loadCalendarsTx(ctx, tx, out...); err != nil {
		return nil, err
	}
	if err := c.tryPrepareTx(ctx, tx, out...); err != nil {
		return nil, err
	}
	return out, nil
}

// existingKeysTx reads the schedules that have the keys of items idx
// (items[i] has params[i]'s key) and returns, by index in params, those
// with the item's spec, marked Existing; the *ItemError of the first whose
// spec differs (a *KeyConflictError).
func (c *Client) existingKeysTx(ctx context.Context, tx pgx.Tx, params []*Params, items []engine.InsertScheduleParams, idx []int) ([]*Schedule, error) {
	out := make([]*Schedule, len(items))
	if len(idx) == 0 {
		return out, nil
	}
	owners, keys := make([]string, len(idx)), make([]string, len(idx))
	byKey := make(map[[2]string]int, len(idx))
	for n, i := range idx {
		owners[n], keys[n] = items[i].Owner, items[i].Key
		byKey[[2]string{items[i].Owner, items[i].Key}] = i
	}
	stored, err := c.q.SchedulesByKeys(ctx, tx, owners, keys)
	if err != nil {
		return nil, fmt.Errorf("schedule: read the schedules of %d keys: %w", len(idx), err)
	}
	first, firstErr := len(items), error(nil)
	for n := range stored {
		i := byKey[[2]string{stored[n].Owner, stored[n].Key}]
		if out[i], err = matchExisting(&stored[n], &items[i]); err != nil && i < first {
			first, firstErr = i, err
		}
	}
	if firstErr != nil {
		return nil, itemError(first, params[first], firstErr)
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
