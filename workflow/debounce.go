package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Debounce collapses a burst of starts into one run (StartOpts.Debounce):
// a user saving a document ten times in a minute starts one run, not ten.
//
// Starts of one workflow type with the same Key share a window. The first
// start of a window starts a run delayed by Period. Each later start of the
// window joins that run instead of starting one: the run takes the later
// start's input (and only its input: the first start's other options
// stay), and its start moves to Period after the later start, but never
// past MaxDelay after the first. Every caller gets the same run's handle
// (Handle.Existing is true for those that joined). The window closes when
// the run's River job is fetched: a start after that opens a new window and
// a new run. So a run always starts with the input of the last start of
// its window, at most MaxDelay after the first, and Period after the last
// when the starts come less often than that.
//
// Racing starts, on any number of clients, meet on a unique index of the
// open windows: exactly one opens a window, the rest join it.
//
// Debounce is refused (a *ValidationError, nothing written) with an
// IdempotencyKey or a ScheduledAt, whose meanings it would override, and on
// a child run's start.
type Debounce struct {
	// Key names the window, within the workflow type: the document's id,
	// say. 1 to 255 bytes of printable UTF-8, no space at either end.
	Key string

	// Period is how long after the last start of the window the run
	// starts. It must be positive.
	Period time.Duration

	// MaxDelay bounds how long after the first start of the window the run
	// starts, however often starts come: at least Period.
	//
	// Defaults to 0: no bound; starts that keep coming keep delaying the
	// run.
	MaxDelay time.Duration
}

// maxDebounceKeyBytes is the longest Debounce.Key.
const maxDebounceKeyBytes = 255

// check validates d for a start with opts.
func (d *Debounce) check(opts *StartOpts, child bool) error {
	if err := checkName("StartOpts.Debounce.Key", d.Key, maxDebounceKeyBytes, "name the window, such as the document's id"); err != nil {
		return err
	}
	field := func(name, problem string) error {
		return &ValidationError{Field: "StartOpts.Debounce." + name, Problem: problem}
	}
	switch {
	case d.Period <= 0:
		return field("Period", fmt.Sprintf("is %s; give a positive duration, how long after the last start the run starts", d.Period))
	case d.MaxDelay < 0:
		return field("MaxDelay", fmt.Sprintf("is %s; give a duration of at least Period (%s), or 0 for no bound", d.MaxDelay, d.Period))
	case d.MaxDelay > 0 && d.MaxDelay < d.Period:
		return field("MaxDelay", fmt.Sprintf("is %s, shorter than Period (%s): the debounce would be longer than its maximum delay; give at least Period, or 0 for no bound", d.MaxDelay, d.Period))
	case opts.IdempotencyKey != "":
		return &ValidationError{Field: "StartOpts.Debounce", Problem: "cannot be combined with IdempotencyKey: a start that joins a window takes the window's run; use one or the other"}
	case !opts.ScheduledAt.IsZero():
		return &ValidationError{Field: "StartOpts.Debounce", Problem: "cannot be combined with ScheduledAt: the window decides when the run starts; use one or the other"}
	case child:
		return &ValidationError{Field: "StartOpts.Debounce", Problem: "is for starts outside a workflow; a child run is started once, by its parent's replay"}
	}
	return nil
}

// debounceTries bounds how often a start goes round between finding no
// open window and finding one opened by a racing start meanwhile (each
// round waits for that start's transaction).
const debounceTries = 5

// joinDebounceTx joins a start of typ with opts.Debounce to its open
// window, if there is one, within tx. It returns the window's run (joined
// true), or nil when the start must open a window.
func (c *Client) joinDebounceTx(ctx context.Context, tx pgx.Tx, typ string, input []byte, d *Debounce) (*startedRun, error) {
	j, err := c.db.JoinDebounceTx(ctx, tx, typ, d.Key, input, d.Period, d.MaxDelay, c.sqlNow())
	if err != nil {
		return nil, fmt.Errorf("workflow: join debounce window %q of %s: %w", d.Key, typ, err)
	}
	if !j.Joined {
		return nil, nil
	}
	if j.Scheduled {
		if err := c.waker.ScheduleTx(ctx, tx, j.JobID, j.Queue, j.ScheduledAt); err != nil {
			return nil, err
		}
	}
	run, err := runOf(c.db.RunByID(ctx, tx, j.RunID))
	if err != nil {
		return nil, fmt.Errorf("workflow: read run %s of debounce window %q: %w", j.RunID, d.Key, err)
	}
	return &startedRun{Run: run, existing: true}, nil
}

// errDebounceRaced is startRunTx's signal that a racing start opened the
// window first: join it.
var errDebounceRaced = errors.New("workflow: a racing start opened the debounce window")
