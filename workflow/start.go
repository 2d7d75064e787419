package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/wfruntime"
)

// StartOpts are per-run options. A nil *StartOpts uses the workflow's
// DefineOpts.
type StartOpts struct {
	// IdempotencyKey makes starting idempotent: starting the same workflow
	// type twice with the same key returns the first run (Handle.Existing is
	// true) and never starts a second one, also under concurrent callers.
	// The first run's input wins.
	//
	// Defaults to "", no key: every Start starts a run.
	IdempotencyKey string

	// MaxAttempts overrides DefineOpts.MaxAttempts for this run.
	MaxAttempts int

	// Retry overrides DefineOpts.Retry for this run, whole (see
	// RetryPolicy); the zero RetryPolicy asks for River's backoff whatever
	// the type's policy.
	//
	// Defaults to nil: the type's policy.
	Retry *RetryPolicy

	// Metadata is stored with the run (a JSON object) and shown by the
	// dashboard; workflow code reads it from RunInfo. The keys grant_subject,
	// grant_id and schedule_* are reserved for the runs schedules start, and
	// refused here with a *ValidationError.
	//
	// Defaults to an empty object.
	Metadata map[string]any

	// Priority overrides DefineOpts.Priority for this run.
	Priority int

	// Queue overrides DefineOpts.Queue for this run.
	Queue string

	// ScheduledAt delays the run's first attempt until this time.
	//
	// Defaults to now.
	ScheduledAt time.Time

	// Tags are stored with the run and on its River job, where River UI can
	// filter by them. Each must match River's tag format (letters, digits,
	// _ and -, at most 255 characters).
	Tags []string

	// RequireWorker refuses to start the run, with a *NoWorkerError and
	// nothing written, when no live client serves the workflow type in the
	// run's queue (see Client.TypeServed). Without it, such a run is
	// started and stays pending until a client that serves it starts; the
	// CLI, the API and the dashboard then warn.
	//
	// Defaults to false: a worker may be deployed after the run is started.
	RequireWorker bool

	// Tenant is the tenant, customer or partner the run does its work for:
	// a short name (CheckTenant: 1 to 100 bytes of printable UTF-8, no
	// space at either end), stored on the run, shown by GetRun, the CLI,
	// the API and the dashboard, and filtered on by ListRuns. A child run
	// carries its parent's tenant unless its own StartOpts name one; a
	// schedule's runs carry the schedule's (schedule.Params.Tenant, which
	// defaults to the schedule's Owner).
	//
	// Defaults to "", none.
	Tenant string

	// Timeout overrides DefineOpts.Timeout for this run's attempts.
	Timeout time.Duration

	// Debounce collapses the starts of this workflow type with the same
	// Debounce.Key within Debounce.Period into one run, which starts with
	// the input of the last of them (see Debounce).
	//
	// Defaults to nil: every Start starts a run.
	Debounce *Debounce
}

// MaxTenantBytes is the longest tenant name, in bytes.
const MaxTenantBytes = 100

// CheckTenant reports whether tenant is a valid tenant name: 1 to
// MaxTenantBytes bytes of UTF-8 whose characters are all printable
// (letters, digits, punctuation, symbols and the plain space), with no
// space at either end, so that every listing shows it as it is. The error
// is a *ValidationError naming field.
func CheckTenant(field, tenant string) error {
	return checkName(field, tenant, MaxTenantBytes, "name the tenant, or leave it unset for none")
}

// checkName reports whether name is 1 to limit bytes of UTF-8 whose
// characters are all printable, with no space at either end (CheckTenant's
// rules); the error is a *ValidationError naming field, with emptyHint for
// an empty name.
func checkName(field, name string, limit int, emptyHint string) error {
	problem := ""
	switch {
	case name == "":
		problem = "is empty; " + emptyHint
	case len(name) > limit:
		problem = fmt.Sprintf("is %d bytes, the limit is %d; use a shorter name, such as an id", len(name), limit)
	case !utf8.ValidString(name):
		problem = "is not valid UTF-8"
	case strings.TrimSpace(name) != name:
		problem = fmt.Sprintf("%q has a space at an end; trim it", name)
	default:
		for _, r := range name {
			if !unicode.IsPrint(r) {
				problem = fmt.Sprintf("%q holds %U, which cannot be shown; use printable characters", name, r)
				break
			}
		}
	}
	if problem == "" {
		return nil
	}
	return &ValidationError{Field: field, Problem: problem}
}

// Start starts a run of the workflow with input and returns its handle. The
// run's row and its River job are inserted in one transaction, committed
// before Start returns. Starts that arrive together from concurrent callers
// share that transaction (group commit: see Client's doc), each returning
// once its own run is committed.
func (d *Definition[In, Out]) Start(ctx context.Context, c *Client, input In, opts *StartOpts) (*Handle[Out], error) {
	p, err := d.startParams(input, opts)
	if err != nil {
		return nil, err
	}
	run, err := c.start(ctx, p)
	if err != nil {
		return nil, err
	}
	return &Handle[Out]{ID: run.ID, Existing: run.existing, client: c}, nil
}

// StartTx is like Start, within tx: the run and its job become visible when
// the caller commits and vanish if it rolls back, together with the caller's
// own writes. Everything is validated before the first write, so a
// *ValidationError leaves tx untouched and usable.
func (d *Definition[In, Out]) StartTx(ctx context.Context, c *Client, tx pgx.Tx, input In, opts *StartOpts) (*Handle[Out], error) {
	p, err := d.startParams(input, opts)
	if err != nil {
		return nil, err
	}
	run, err := c.startTx(ctx, tx, p)
	if err != nil {
		return nil, err
	}
	return &Handle[Out]{ID: run.ID, Existing: run.existing, client: c}, nil
}

// startParams are the parameters of a start of d with input and opts.
func (d *Definition[In, Out]) startParams(input In, opts *StartOpts) (*startParams, error) {
	if d == nil {
		return nil, &ValidationError{Field: "definition", Problem: "is nil; pass a definition made with Define"}
	}
	if d.err != nil {
		return nil, d.err
	}
	encoded, err := json.Marshal(input)
	if err != nil {
		return nil, &ValidationError{Field: "input", Problem: fmt.Sprintf("cannot be encoded as JSON (%v); use a JSON-encodable %s", err, typeName[In]())}
	}
	return &startParams{typeName: d.name, defaults: d.opts, input: encoded, opts: opts}, nil
}

// StartByName starts a run of a registered workflow type named typeName with
// a JSON input, for callers that do not have the Definition (an HTTP API, a
// CLI, a schedule). On a client that registers types, an unregistered type
// is an *UnknownTypeError. A client that registers none (the CLI, a web app
// that only starts runs for services to work) starts any valid type name,
// with Tributary's defaults (MaxAttempts 25, queue default, priority 1)
// where opts says nothing: the process that works the type must exist.
func (c *Client) StartByName(ctx context.Context, typeName string, input json.RawMessage, opts *StartOpts) (*Run, error) {
	p, err := c.startByNameParams(typeName, input, opts)
	if err != nil {
		return nil, err
	}
	r, err := c.start(ctx, p)
	if err != nil {
		return nil, err
	}
	r.Existing = r.existing
	return r.Run, nil
}

// StartByNameTx is like StartByName, within tx; the caller commits or rolls
// back.
func (c *Client) StartByNameTx(ctx context.Context, tx pgx.Tx, typeName string, input json.RawMessage, opts *StartOpts) (*Run, error) {
	p, err := c.startByNameParams(typeName, input, opts)
	if err != nil {
		return nil, err
	}
	r, err := c.startTx(ctx, tx, p)
	if err != nil {
		return nil, err
	}
	r.Existing = r.existing
	return r.Run, nil
}

// startByNameParams are the parameters of a start of the type named
// typeName with input and opts (see StartByName).
func (c *Client) startByNameParams(typeName string, input json.RawMessage, opts *StartOpts) (*startParams, error) {
	reg, ok := c.types[typeName]
	if !ok {
		if err := validateName(typeName); err != nil {
			return nil, err
		}
		if len(c.types) > 0 {
			return nil, &UnknownTypeError{Type: typeName, Known: c.Types()}
		}
		reg = &registration{name: typeName, opts: DefineOpts{MaxAttempts: defaultMaxAttempts, Priority: 1, Queue: river.QueueDefault}}
	}
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	if !json.Valid(input) {
		return nil, &ValidationError{Field: "input", Problem: "is not valid JSON; pass a JSON document such as {\"user_id\": 42}"}
	}
	if reg.checkInput != nil {
		if err := reg.checkInput(input); err != nil {
			return nil, err
		}
	}
	return &startParams{typeName: reg.name, defaults: reg.opts, input: input, opts: opts}, nil
}

// runArgs are the args of every workflow job: the run id (state lives in
// workflow_runs); the job's kind names the type ("workflow:" and its name),
// so River UI shows what ran.
//
// The run's first job also carries the run's input, metadata and parent
// when they are small (at most inlineStartBytes together, a copy of what
// workflow_runs holds), in Start: the run's first attempt then starts from
// the job alone, without reading the run (see worker.begin). River UI shows
// them, as one JSON text.
//
// Why one text: River indexes every job's args with a GIN index (jsonb_ops),
// which holds an entry for every key and every value at any depth, and
// Postgres writes a job's entries again at each of its state changes (its
// fetch, its completion: none is a HOT update, state being indexed). As
// text, the inline start is one key and one value, and the type name, which
// the kind holds, is not repeated: a slot's job went from about twenty
// entries to ten, a plain run's from six to four, and StartMany's
// benchmark ran about 13 % faster (docs/benchmarks.md, "2026-11-28, the
// third session").
type runArgs struct {
	kind string

	// AttemptBase is how many attempts the run used in earlier jobs (a
	// parked run continues in a new job).
	AttemptBase int        `json:"attempt_base,omitempty"`
	FireAt      *time.Time `json:"fire_at,omitempty" river:"unique"`
	// Retry is the run's retry policy (runRetry), nil for none.
	Retry      *RetryPolicy `json:"retry,omitempty"`
	RunID      uuid.UUID    `json:"run_id"`
	ScheduleID *uuid.UUID   `json:"schedule_id,omitempty" river:"unique"`
	// Start is the inline start, a JSON object as text (inlineStart).
	Start     string `json:"start,omitempty"`
	Tenant    string `json:"tenant,omitempty"`
	TimeoutMS int64  `json:"timeout_ms,omitempty"`

	// Input, Metadata and ParentRunID are how jobs written before Start
	// carried the inline start: read, never written. Their type name
	// ("workflow") is not decoded: the kind holds it.
	Input       json.RawMessage `json:"input,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	ParentRunID *uuid.UUID      `json:"parent_run_id,omitempty"`
}

// inlineStartBytes bounds the input and metadata a run's first job carries
// (runArgs): small enough not to matter next to the run row, large enough
// for typical inputs. Larger ones are read from workflow_runs.
const inlineStartBytes = 2048

// inlined is a run's start as its first job carries it (runArgs.Start).
type inlined struct {
	Input       json.RawMessage `json:"input"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	ParentRunID *uuid.UUID      `json:"parent_run_id,omitempty"`
}

// inlineStart copies input and metadata into args when they are small.
func (a *runArgs) inlineStart(input, metadata []byte, parentID *uuid.UUID) {
	if len(input)+len(metadata) > inlineStartBytes {
		return
	}
	in := inlined{Input: input, ParentRunID: parentID}
	if string(metadata) != "{}" {
		in.Metadata = metadata
	}
	b, err := json.Marshal(&in)
	if err != nil {
		return // the first attempt reads the run
	}
	a.Start = string(b)
}

// inlined returns the inline start args carry, if they carry one, in
// either form (Start, or the fields of jobs written before it). Metadata
// is "{}" for none.
func (a *runArgs) inlined() (*inlined, bool) {
	in := &inlined{Input: a.Input, Metadata: a.Metadata, ParentRunID: a.ParentRunID}
	if a.Start != "" {
		in = &inlined{}
		if err := json.Unmarshal([]byte(a.Start), in); err != nil {
			return nil, false
		}
	}
	if len(in.Input) == 0 {
		return nil, false
	}
	if len(in.Metadata) == 0 {
		in.Metadata = []byte("{}")
	}
	return in, true
}

func (a runArgs) Kind() string { return a.kind }

type startParams struct {
	typeName string
	defaults DefineOpts
	input    []byte
	opts     *StartOpts

	parentID     *uuid.UUID
	parentStep   string
	parentTenant string // the parent's tenant, the child's unless its StartOpts name one

	// A schedule slot's run: unique on (scheduleID, fireAt), its job unique
	// on the same pair (SLOT_IS_UNIQUE). skip records it as skipped.
	fireAt     *time.Time
	scheduleID *uuid.UUID
	skip       string

	// fork marks a fork's run (Client.Fork), whose step records are copied
	// in before its first attempt: its job carries no input, so that the
	// first attempt reads the run and its memos (worker.begin).
	fork bool
}

type startedRun struct {
	*Run
	existing bool

	// run is what Run points to when the run was inserted: one allocation
	// for both on Start's path.
	run Run
}

var tagRE = regexp.MustCompile(`\A[\w][\w\-]+[\w]\z`)

// startTx starts a run by the API or by a parent (startRunTx), under the
// start middleware, and reports it started.
func (c *Client) startTx(ctx context.Context, tx pgx.Tx, p *startParams) (*startedRun, error) {
	return c.startUnder(ctx, p, func(ctx context.Context, added map[string]any) (*startedRun, error) {
		return c.startRunTx(ctx, tx, p, added)
	})
}

// start starts a run by the API in a transaction of its own: in a group of
// starts when it may be (groupable), alone otherwise.
func (c *Client) start(ctx context.Context, p *startParams) (*startedRun, error) {
	if !groupable(p) {
		var run *startedRun
		err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
			var err error
			run, err = c.startTx(ctx, tx, p)
			return err
		})
		return run, err
	}
	return c.startUnder(ctx, p, func(ctx context.Context, added map[string]any) (*startedRun, error) {
		return c.startGrouped(ctx, p, added)
	})
}

// startUnder starts a run with write (which validates and writes it, with
// the metadata the middleware added) under the start middleware, and
// reports it started.
func (c *Client) startUnder(ctx context.Context, p *startParams, write func(context.Context, map[string]any) (*startedRun, error)) (*startedRun, error) {
	trigger := TriggerAPI
	if p.parentID != nil {
		trigger = TriggerChild
	}
	if len(c.mw.start) == 0 {
		run, err := write(ctx, nil)
		if err == nil && !run.existing {
			c.mw.runsStarted(ctx, p.typeName, trigger, 1)
		}
		return run, err
	}
	info := &StartInfo{Type: p.typeName, Trigger: trigger, ParentID: p.parentID}
	var run *startedRun
	err := c.mw.wrapStart(ctx, info, func(ctx context.Context) error {
		var err error
		if run, err = write(ctx, info.added); err != nil {
			return err
		}
		info.RunID, info.Existing = run.ID, run.existing
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !run.existing {
		c.mw.runsStarted(ctx, p.typeName, trigger, 1)
	}
	return run, nil
}

// startRunTx validates p, then inserts the run row and its River job. With
// an idempotency key the row goes first (ON CONFLICT DO NOTHING decides the
// winner); without one the job goes first so the row carries its id in one
// insert. added is metadata the start middleware adds to p's.
func (c *Client) startRunTx(ctx context.Context, tx pgx.Tx, p *startParams, added map[string]any) (*startedRun, error) {
	ps, err := c.prepareStart(p, added)
	if err != nil {
		return nil, err
	}
	return c.writeStartTx(ctx, tx, ps)
}

// cancelScheduleRunsTx cancels the unfinished runs of a schedule, for its
// replace overlap policy: like CancelTx for each. For package schedule.
func (c *Client) cancelScheduleRunsTx(ctx context.Context, tx pgx.Tx, s *wfruntime.ScheduleRuns) (int, error) {
	ids, err := c.db.UnfinishedRunsOfSchedule(ctx, tx, s.ScheduleID)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := c.CancelTx(ctx, tx, id); err != nil && !errors.Is(err, ErrRunFinished) {
			return 0, err
		}
	}
	return len(ids), nil
}

// wakeAtTx arranges for the scheduled River job w.JobID, inserted in tx, to
// be made available at w.At exactly (River's scheduler, which looks every
// five seconds, is the fallback). For package schedule.
func (c *Client) wakeAtTx(ctx context.Context, tx pgx.Tx, w *wfruntime.Wake) error {
	return c.waker.ScheduleTx(ctx, tx, w.JobID, w.Queue, w.At)
}
