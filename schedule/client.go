package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/jobs"
	"github.com/tributary-go/tributary/workflow"
)

var queueRE = regexp.MustCompile(`^[a-z0-9]+(?:[_|\-]?[a-z0-9]+)*$`)

// Config configures a Client.
type Config struct {
	// ReconcileInterval is how often a working client's leader repairs
	// broken chains (see Reconcile); it also runs on start-up.
	//
	// Defaults to DefaultReconcileInterval (one minute).
	ReconcileInterval time.Duration

	// Logger receives the client's logs.
	//
	// Defaults to a logger that discards everything.
	Logger *slog.Logger

	// MeterProvider receives the firing passes' metrics: slots by decision
	// and skip reason (tributary.schedule.slots) and the fire delay
	// (tributary.schedule.fire_delay), recorded once a batch commits.
	//
	// Defaults to otel.GetMeterProvider(), the global one (a no-op until
	// the application sets one).
	MeterProvider metric.MeterProvider

	// TracerProvider receives one span per slot decision
	// (tributary.schedule.slot: fired, skipped with the reason, or found
	// fired already), the child of the fire job's span (River's work span
	// when rivercontrib/otelriver is installed). A run started by a slot
	// whose span records carries the span's context in its metadata, so
	// that its attempts link back to the slot (see package tributaryotel).
	//
	// Defaults to otel.GetTracerProvider(), the global one (a no-op until
	// the application sets one).
	TracerProvider trace.TracerProvider
}

// Client creates and manages schedules and fires their slots. Build it
// with New on the workflow client it works with, before that client
// starts: on a working workflow client (one with River queues) it then
// runs the River worker that fires slots, in Queue, and the reconciler;
// it uses that workflow client's pool, schema and River client.
//
//	wf, err := workflow.NewClient(pool, &workflow.Config{
//		River:     &river.Config{Queues: ...},
//		Workflows: []workflow.Registrable{DailyDigest},
//	})
//	schedules, err := schedule.New(wf, nil)
//	err = wf.Start(ctx)
//	s, err := schedules.Create(ctx, &schedule.Params{Name: "digest", Workflow: "daily_digest", Cron: "0 8 * * *", TimeZone: "Europe/Paris"})
type Client struct {
	clock    func() time.Time
	interval time.Duration
	logger   *slog.Logger
	q        *engine.Queries
	wf       *workflow.Client
	engine   engine.Workflows
	metrics  *slotMetrics // nil when the instruments could not be made
	tracer   trace.Tracer

	// firing bounds the firing passes that hold a connection at once.
	firing chan struct{}
	specs  specCache

	repairMu   sync.Mutex
	lastRepair time.Time // the end of this client's previous repair pass; see Reconcile
}

// New returns the schedule Client of wf; config may be nil. Call it before
// wf.Start, and once per workflow client: a second call, or one after
// Start, returns an error and changes nothing. On a working workflow
// client it registers the slot-firing worker and the reconciler, and adds
// Queue with QueueWorkers workers unless wf's River configuration has it
// already.
func New(wf *workflow.Client, config *Config) (*Client, error) {
	if wf == nil {
		return nil, errors.New("schedule: New needs the workflow client the schedules run on; build one with workflow.NewClient")
	}
	if config == nil {
		config = &Config{}
	}
	logger := config.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	interval := config.ReconcileInterval
	if interval < 0 || (interval > 0 && interval < jobs.MinInterval) {
		return nil, fmt.Errorf("schedule: Config.ReconcileInterval is %s; use at least %s, or 0 for the default (%s)", interval, jobs.MinInterval, DefaultReconcileInterval)
	}
	if interval == 0 {
		interval = DefaultReconcileInterval
	}
	metrics, err := newSlotMetrics(config.MeterProvider)
	if err != nil {
		// The SDK only refuses an invalid name or bucket list, which are
		// constants here.
		logger.Warn("tributary: Schedule metrics unavailable", slog.String("err", err.Error()))
	}
	tp := config.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	hook := engine.WorkflowsOf(wf)
	c := &Client{
		clock:    hook.Now, // one clock: the workflow client's (workflow.Config.Clock)
		engine:   hook,
		firing:   make(chan struct{}, QueueWorkers),
		interval: interval,
		logger:   logger,
		metrics:  metrics,
		q:        engine.NewQueries(wf.Schema()),
		tracer:   tp.Tracer(meterName),
		wf:       wf,
	}
	reconcile := c.reconcileJob()
	err = c.engine.Bind(&engine.Binding{
		Name: bindingName,
		Register: func(workers *river.Workers) error {
			if err := river.AddWorkerSafely(workers, &fireWorker{c: c}); err != nil {
				return err
			}
			return reconcile.Worker(workers)
		},
		Queue:        Queue,
		QueueWorkers: QueueWorkers,
		PeriodicJobs: []*river.PeriodicJob{reconcile.Periodic()},
		Conns:        QueueWorkers, // see firePool
	})
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	return c, nil
}

// spec is s's parsed cron expression, from a cache: thousands of schedules
// fired together mostly share a few expressions and zones.
func (c *Client) spec(s *Schedule) (*Spec, error) {
	spec, err := c.specs.get(s.rule(), s.TimeZone, s.dst())
	if err != nil || len(s.Calendars) == 0 || !s.calendarsRead {
		return spec, err
	}
	return spec.WithExclusions(s.excluded, s.OnExcluded)
}

// specCache holds parsed specs by expression and zone. It is cleared when
// it reaches specCacheSize entries: a bound, not an eviction policy.
type specCache struct {
	mu    sync.Mutex
	specs map[specKey]*Spec
}

// specKey is what a cached spec was made of.
type specKey struct {
	expr, zone string
	dst        DSTPolicy
}

const specCacheSize = 10_000

// parse is ParseSpec, cached: the default DST policy, which validation
// then replaces with the schedule's.
func (sc *specCache) parse(expr, zone string) (*Spec, error) { return sc.get(expr, zone, DSTPolicy{}) }

func (sc *specCache) get(expr, zone string, dst DSTPolicy) (*Spec, error) {
	key := specKey{expr, zone, dst}
	sc.mu.Lock()
	spec := sc.specs[key]
	sc.mu.Unlock()
	if spec != nil {
		return spec, nil
	}
	spec, err := parseRule(expr, zone)
	if err == nil {
		spec, err = spec.WithDST(dst)
	}
	if err != nil {
		return nil, err
	}
	sc.mu.Lock()
	if sc.specs == nil || len(sc.specs) >= specCacheSize {
		sc.specs = make(map[specKey]*Spec)
	}
	sc.specs[key] = spec
	sc.mu.Unlock()
	return spec, nil
}

func (c *Client) now() time.Time { return c.clock() }

// sqlNow is the now parameter of the engine's statements: nil, for the
// database's now(), unless the workflow client's Config.Clock is set (see
// engine.Workflows.SQLNow).
func (c *Client) sqlNow() *time.Time { return c.engine.SQLNow() }

// Create validates p, then inserts the schedule and its first slot's fire
// job in one transaction. Validation errors (a bad cron, an unknown zone, an
// end before the start, no occurrence in range, an unknown workflow type,
// bad input) match ErrInvalid and write nothing.
func (c *Client) Create(ctx context.Context, p *Params) (*Schedule, error) {
	var s *Schedule
	err := pgx.BeginFunc(ctx, c.wf.Pool(), func(tx pgx.Tx) error {
		var err error
		s, err = c.CreateTx(ctx, tx, p)
		return err
	})
	return s, err
}

// checkInput checks a schedule's input, encoded, against what the workers
// of typ accept (workflow.Client.CheckInput), reading their limits in tx,
// as a *ValidationError of field.
func (c *Client) checkInput(ctx context.Context, tx pgx.Tx, typ string, input []byte, field string) error {
	check, err := c.engine.InputChecker(ctx, tx)
	if err != nil {
		return err
	}
	return inputError(check(typ, input), field)
}

// inputError turns the workflow engine's refusal of an input into a
// *ValidationError of field.
func inputError(err error, field string) error {
	var verr *workflow.ValidationError
	if errors.As(err, &verr) {
		return &ValidationError{Field: field, Problem: verr.Problem}
	}
	return err
}

// CreateTx is like Create, within tx; the caller commits or rolls back.
func (c *Client) CreateTx(ctx context.Context, tx pgx.Tx, p *Params) (*Schedule, error) {
	v, err := c.validate(ctx, c.db(tx), p)
	if err != nil {
		return nil, err
	}
	if p.GrantID != nil {
		if err := c.requireUsableGrant(ctx, tx, *p.GrantID, p.Workflow); err != nil {
			return nil, err
		}
	}
	if err := c.checkInput(ctx, tx, p.Workflow, v.input, "Input"); err != nil {
		return nil, err
	}
	if p.RequireWorker {
		served, err := c.engine.TypeServed(ctx, tx, p.Workflow)
		if err != nil {
			return nil, err
		}
		if !served {
			return nil, &workflow.NoWorkerError{WorkflowType: p.Workflow}
		}
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var next *time.Time
	if !p.Paused {
		next = &v.first
	}
	row := insertParams(id, p, v, next)
	row.Now = c.sqlNow()
	inserted, err := c.q.InsertScheduleTx(ctx, tx, &row)
	if errors.Is(err, engine.ErrKeyExists) {
		return c.existingTx(ctx, tx, &row)
	}
	s, err := scheduleOf(inserted, err)
	if err != nil {
		return nil, fmt.Errorf("schedule: insert schedule: %w", err)
	}
	if next != nil {
		if err := c.seedTx(ctx, tx, *next); err != nil {
			return nil, err
		}
	}
	return s, c.loadCalendarsTx(ctx, tx, s)
}

// existingTx is what Create returns when row's owner has its key already:
// that schedule, marked Existing, when its spec is row's, or a
// *KeyConflictError naming the fields that differ.
func (c *Client) existingTx(ctx context.Context, tx pgx.Tx, row *engine.InsertScheduleParams) (*Schedule, error) {
	stored, err := c.q.ScheduleByKey(ctx, tx, row.Owner, row.Key)
	if errors.Is(err, engine.ErrNotFound) {
		// The key's schedule was inserted after this transaction's
		// snapshot was taken (REPEATABLE READ or SERIALIZABLE).
		return nil, keyNotVisible(row.Owner, row.Key)
	}
	if err != nil {
		return nil, fmt.Errorf("schedule: read %s: %w", ByKey(row.Owner, row.Key), err)
	}
	return matchExisting(stored, row)
}

// keyNotVisible is the error of a key that exists (an insert of it found
// it) but that the caller's transaction cannot read.
func keyNotVisible(owner, key string) error {
	return fmt.Errorf("schedule: %s exists but this transaction cannot see it yet; retry in a new transaction", ByKey(owner, key))
}

// matchExisting is the schedule stored, marked Existing, when it has the
// spec of row (which has its owner and key), or a *KeyConflictError.
func matchExisting(stored *engine.Schedule, row *engine.InsertScheduleParams) (*Schedule, error) {
	if diffs := specDiff(stored, row); len(diffs) > 0 {
		return nil, &KeyConflictError{Owner: row.Owner, Key: row.Key, ID: stored.ID, DeclaredBy: stored.DeclaredBy, Diffs: diffs}
	}
	s, _ := scheduleOf(stored, nil)
	s.Existing = true
	return s, nil
}

// insertParams are the columns CreateTx inserts for p, validated as v, as
// schedule id with next slot next (nil for a paused schedule).
func insertParams(id uuid.UUID, p *Params, v *validated, next *time.Time) engine.InsertScheduleParams {
	return engine.InsertScheduleParams{
		ID: id, Name: p.Name, Description: p.Description, Owner: p.Owner, Type: p.Workflow, Input: v.input,
		Cron: v.spec.Expr(), TimeZone: v.spec.Zone(), StartAt: nullTime(p.StartAt), EndAt: nullTime(p.EndAt),
		OverlapPolicy: string(v.overlap), CatchUpWindowMS: v.catchUp.Milliseconds(), MaxAttempts: p.MaxAttempts,
		TimeoutMS: p.Timeout.Milliseconds(), Queue: p.Queue, Priority: p.Priority, Paused: p.Paused,
		PauseNote: p.PauseNote, NextFireAt: next, CatchUpPolicy: string(v.catchUpPolicy), GrantID: p.GrantID,
		KeepRuns: p.KeepRuns, Key: p.Key, CreatedBy: p.CreatedBy, RunTenant: p.Tenant,
		DSTGap: string(v.spec.DST().Gap), DSTFold: string(v.spec.DST().Fold),
		Calendars: v.calendars, OnExcluded: string(v.onExcluded), Retry: v.retry,
	}
}

type validated struct {
	calendars     []string   // Params.Calendars, checked, each once, in order
	onExcluded    OnExcluded // with its default
	catchUp       time.Duration
	catchUpPolicy CatchUpPolicy
	first         time.Time
	input         []byte
	overlap       OverlapPolicy
	retry         []byte // Params.Retry's JSON, nil for none
	spec          *Spec
}

func (c *Client) validate(ctx context.Context, db engine.DBTX, p *Params) (*validated, error) {
	var names []string
	if p != nil {
		names = p.Calendars
	}
	cal, err := c.calendarDates(ctx, db, names)
	if err != nil {
		return nil, err
	}
	return c.validateAt(p, c.now(), parseRule, cal)
}

// paramsCalendars reads the dates of every calendar that params name.
func (c *Client) paramsCalendars(ctx context.Context, db engine.DBTX, params []*Params) (map[string][]ExcludedDate, error) {
	var names []string
	for _, p := range params {
		if p != nil {
			for _, name := range p.Calendars {
				if !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
	}
	return c.calendarDates(ctx, db, names)
}

// validateAt is validate with the first slot taken after now (or StartAt)
// and parse in place of ParseSpec: CreateManyTx gives a batch one now, and
// parses each distinct expression and zone once.
// cal holds the dates of the calendars p names (calendarDates).
func (c *Client) validateAt(p *Params, now time.Time, parse func(expr, zone string) (*Spec, error), cal map[string][]ExcludedDate) (*validated, error) {
	if p == nil {
		return nil, &ValidationError{Field: "Params", Problem: "is nil"}
	}
	switch {
	case strings.TrimSpace(p.Name) == "":
		return nil, &ValidationError{Field: "Name", Problem: "is empty; give the schedule a name operators recognize"}
	case len(p.Name) > 200:
		return nil, &ValidationError{Field: "Name", Problem: fmt.Sprintf("is %d bytes, the limit is 200", len(p.Name))}
	case p.Workflow == "":
		return nil, &ValidationError{Field: "Workflow", Problem: "is empty; name the workflow type each slot starts"}
	case len(p.CreatedBy) > 200:
		return nil, &ValidationError{Field: "CreatedBy", Problem: fmt.Sprintf("is %d bytes, the limit is 200", len(p.CreatedBy))}
	}
	if err := checkKey("Key", p.Key); err != nil {
		return nil, err
	}
	if p.Tenant != "" {
		if err := checkTenant("Tenant", p.Tenant); err != nil {
			return nil, err
		}
	}
	if err := workflow.ValidateTypeName(p.Workflow); err != nil {
		return nil, &ValidationError{Field: "Workflow", Problem: err.Error()}
	}
	switch {
	case p.KeepRuns < 0 || p.KeepRuns > MaxKeepRuns:
		return nil, &ValidationError{Field: "KeepRuns", Problem: fmt.Sprintf("is %d; use 0 (retention applies to every run) to %d", p.KeepRuns, MaxKeepRuns)}
	case p.MaxAttempts < 0:
		return nil, &ValidationError{Field: "MaxAttempts", Problem: fmt.Sprintf("is %d; use 0 for the workflow's default, or at least 1", p.MaxAttempts)}
	case p.Priority < 0 || p.Priority > 4:
		return nil, &ValidationError{Field: "Priority", Problem: fmt.Sprintf("is %d; use 0 for the workflow's default, or 1 (highest) to 4", p.Priority)}
	case p.Queue != "" && !queueRE.MatchString(p.Queue):
		return nil, &ValidationError{Field: "Queue", Problem: fmt.Sprintf("%q is not a valid River queue name; use lowercase letters, digits, _ and -", p.Queue)}
	}
	retry, err := retryJSON(p.Retry)
	if err != nil {
		return nil, err
	}
	if types := c.wf.Types(); len(types) > 0 && !slices.Contains(types, p.Workflow) {
		return nil, &ValidationError{Field: "Workflow", Problem: fmt.Sprintf("%q is not a workflow type of this client (registered: %v)", p.Workflow, types)}
	}
	rule := p.Cron
	if p.RRule == "" && strings.HasPrefix(strings.ToUpper(strings.TrimSpace(p.Cron)), rrulePrefix) {
		return nil, &ValidationError{Field: "Cron", Problem: "is an RRULE (it begins with DTSTART:); set it as RRule"}
	}
	if p.RRule != "" {
		if strings.TrimSpace(p.Cron) != "" {
			return nil, &ValidationError{Field: "RRule", Problem: "is set with Cron; a schedule has one rule: set Cron or RRule"}
		}
		if rule = strings.TrimSpace(p.RRule); !strings.HasPrefix(strings.ToUpper(rule), rrulePrefix) {
			return nil, &RRuleError{Rule: p.RRule, Part: "DTSTART", Reason: "the rule must begin with its DTSTART line",
				hint: "write the first occurrence's local time first, such as DTSTART:20270105T090000, then the RRULE line"}
		}
		rule = rrulePrefix + rule[len(rrulePrefix):]
	}
	spec, err := parse(rule, p.TimeZone)
	if err != nil {
		return nil, err
	}
	if spec, err = spec.WithDST(DSTPolicy{Gap: p.DSTGap, Fold: p.DSTFold}); err != nil {
		return nil, err
	}
	calendars, excluded, err := checkCalendars(p.Calendars, cal)
	if err != nil {
		return nil, err
	}
	if spec, err = spec.WithExclusions(excluded, p.OnExcluded); err != nil {
		return nil, err
	}
	onExcluded := p.OnExcluded
	if onExcluded == "" {
		onExcluded = ExcludedSkip
	}
	overlap, err := overlapOverride("Overlap", OverlapSkip, p.Overlap)
	if err != nil {
		return nil, err
	}
	if !p.StartAt.IsZero() && !p.EndAt.IsZero() && !p.EndAt.After(p.StartAt) {
		return nil, &ValidationError{Field: "EndAt", Problem: fmt.Sprintf("%s is not after StartAt %s", p.EndAt.Format(time.RFC3339), p.StartAt.Format(time.RFC3339))}
	}
	input, err := json.Marshal(p.Input)
	if err != nil {
		return nil, &ValidationError{Field: "Input", Problem: fmt.Sprintf("cannot be encoded as JSON: %v", err)}
	}
	catchUp := p.CatchUpWindow
	if catchUp == 0 {
		catchUp = DefaultCatchUpWindow
	}
	catchUpPolicy := p.CatchUp
	switch catchUpPolicy {
	case "":
		catchUpPolicy = CatchUpWindow
	case CatchUpWindow, CatchUpLatest:
	default:
		return nil, &ValidationError{Field: "CatchUp", Problem: fmt.Sprintf("%q is not a catch-up policy; use window or latest", catchUpPolicy)}
	}
	if !p.EndAt.IsZero() && !p.EndAt.After(now) {
		return nil, &ValidationError{Field: "EndAt", Problem: fmt.Sprintf("%s is in the past, so no slot would ever fire; give a later end, or none", p.EndAt.UTC().Format(time.RFC3339))}
	}
	first, ok := firstSlot(spec, p.StartAt, p.EndAt, now)
	if !ok {
		if p.RRule != "" {
			return nil, &ValidationError{Field: "RRule", Problem: "has no occurrence between now (or StartAt) and EndAt; widen the range, or change the rule's DTSTART, COUNT or UNTIL"}
		}
		return nil, &ValidationError{Field: "Cron", Problem: fmt.Sprintf("%q has no occurrence between now (or StartAt) and EndAt; widen the range or change the expression", p.Cron)}
	}
	return &validated{catchUp: max(catchUp, 0), catchUpPolicy: catchUpPolicy, first: first, input: input, overlap: overlap, spec: spec,
		calendars: calendars, onExcluded: onExcluded, retry: retry}, nil
}

// firstSlot is the first occurrence after max(now, start) and before end.
func firstSlot(spec *Spec, start, end, now time.Time) (time.Time, bool) {
	after := now
	if start.After(after) {
		after = start.Add(-time.Second) // StartAt itself may be a slot
	}
	occ, ok := spec.Next(after)
	if !ok || (!end.IsZero() && !occ.At.Before(end)) {
		return time.Time{}, false
	}
	return occ.At, true
}

// Get reads the schedule ref names (ByID or ByKey). Returns ErrNotFound
// when there is none.
func (c *Client) Get(ctx context.Context, ref Ref) (*Schedule, error) {
	if err := ref.check(); err != nil {
		return nil, err
	}
	var s *Schedule
	var err error
	if ref.Key == "" {
		s, err = scheduleOf(c.q.ScheduleByID(ctx, c.wf.Pool(), ref.ID))
	} else if s, err = scheduleOf(c.q.ScheduleByKey(ctx, c.wf.Pool(), ref.Owner, ref.Key)); errors.Is(err, ErrNotFound) {
		return nil, notFoundByKey(ref)
	}
	if err != nil {
		return nil, err
	}
	return s, c.loadCalendarsTx(ctx, c.wf.Pool(), s)
}

// ListParams filter and page List. The zero value lists the 100 newest
// schedules.
type ListParams struct {
	Owner    string
	Workflow string
	// Paused, when set, keeps schedules that are (or are not) paused.
	Paused *bool
	// After continues a listing after this id.
	After *uuid.UUID
	// Limit defaults to 100; at most 1000.
	Limit int
}

// List lists schedules newest first (ids are UUIDv7, in creation order), as
// runs are listed.
func (c *Client) List(ctx context.Context, p *ListParams) ([]*Schedule, error) {
	if p == nil {
		p = &ListParams{}
	}
	limit := p.Limit
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > 1000 {
		return nil, &ValidationError{Field: "ListParams.Limit", Problem: fmt.Sprintf("is %d; use 1 to 1000", limit)}
	}
	rows, err := c.q.ListSchedules(ctx, c.wf.Pool(), &engine.ListSchedulesParams{
		Owner: p.Owner, Type: p.Workflow, Paused: p.Paused, After: p.After, Limit: limit,
	})
	if err != nil {
		return nil, fmt.Errorf("schedule: list: %w", err)
	}
	out, err := schedulesOf(rows, nil)
	if err != nil {
		return nil, err
	}
	return out, c.loadCalendarsTx(ctx, c.wf.Pool(), out...)
}

// Pause pauses a schedule: no slot fires until Resume. The pending slot's
// fire job finds the schedule paused and ends the chain.
func (c *Client) Pause(ctx context.Context, ref Ref, note string) (*Schedule, error) {
	return c.inTx(ctx, func(tx pgx.Tx) (*Schedule, error) { return c.PauseTx(ctx, tx, ref, note) })
}

// PauseTx is like Pause, within tx; the caller commits or rolls back.
func (c *Client) PauseTx(ctx context.Context, tx pgx.Tx, ref Ref, note string) (*Schedule, error) {
	id, err := c.id(ctx, tx, ref)
	if err != nil {
		return nil, err
	}
	return scheduleOf(c.q.PauseSchedule(ctx, tx, id, note, c.sqlNow()))
}

// ResumeOpts say what Resume does with the slots missed while paused. A
// nil *ResumeOpts skips them.
type ResumeOpts struct {
	// Missed defaults to MissedSkip.
	Missed MissedPolicy
}

// Resume resumes a paused schedule; the chain restarts at the first slot
// after now. opts.Missed chooses what happens to the slots missed while it
// was paused: skipped (the default), the latest run once, or each run once
// (at most MaxBackfill); Schedule.MissedSlots says which those are.
func (c *Client) Resume(ctx context.Context, ref Ref, opts *ResumeOpts) (*Schedule, error) {
	return c.inTx(ctx, func(tx pgx.Tx) (*Schedule, error) { return c.ResumeTx(ctx, tx, ref, opts) })
}

// ResumeTx is like Resume, within tx; the caller commits or rolls back.
func (c *Client) ResumeTx(ctx context.Context, tx pgx.Tx, ref Ref, opts *ResumeOpts) (*Schedule, error) {
	id, err := c.id(ctx, tx, ref)
	if err != nil {
		return nil, err
	}
	missed := MissedSkip
	if opts != nil && opts.Missed != "" {
		missed = opts.Missed
	}
	if err := validateMissed(missed); err != nil {
		return nil, err
	}
	s, err := c.lockToStart(ctx, tx, id, "")
	if err != nil {
		return nil, err
	}
	if !s.Paused {
		return s, nil
	}
	if err := c.loadCalendarsTx(ctx, tx, s); err != nil {
		return nil, err
	}
	spec, err := s.Spec()
	if err != nil {
		return nil, err
	}
	now := c.now()
	due, err := s.MissedSlots(missed, now)
	if err != nil {
		return nil, err
	}
	if len(due) > 0 {
		// Slots missed while paused that the operator asked to run run
		// all, one after the other, as a backfill does.
		policy := OverlapBuffer
		if missed == MissedLatest {
			policy = s.Overlap
		}
		if _, err := c.startSlotsTx(ctx, tx, s, spec, due, policy, false); err != nil {
			return nil, err
		}
	}
	var next *time.Time
	if at, ok := firstSlot(spec, deref(s.StartAt), deref(s.EndAt), now); ok {
		next = &at
	}
	if s, err = scheduleOf(c.q.ResumeScheduleTx(ctx, tx, id, next, c.sqlNow())); err != nil {
		return nil, err
	}
	if next != nil {
		if err := c.seedTx(ctx, tx, *next); err != nil {
			return nil, err
		}
	}
	return s, c.loadCalendarsTx(ctx, tx, s)
}

// Delete deletes a schedule. Its past runs stay, with their schedule id set
// to NULL; its pending slot does not fire.
func (c *Client) Delete(ctx context.Context, ref Ref) error {
	return c.delete(ctx, c.wf.Pool(), ref)
}

// DeleteTx is like Delete, within tx; the caller commits or rolls back.
func (c *Client) DeleteTx(ctx context.Context, tx pgx.Tx, ref Ref) error {
	return c.delete(ctx, tx, ref)
}

func (c *Client) delete(ctx context.Context, db engine.DBTX, ref Ref) error {
	id, err := c.id(ctx, db, ref)
	if err != nil {
		return err
	}
	deleted, err := c.q.DeleteSchedule(ctx, db, id)
	if err != nil {
		return fmt.Errorf("schedule: delete %s: %w", id, err)
	}
	if !deleted {
		return ErrNotFound
	}
	return nil
}

// Next returns the schedule's next n fire times from now, by the same
// evaluation the firing uses, within its start and end.
func (c *Client) Next(ctx context.Context, ref Ref, n int) ([]Occurrence, error) {
	s, err := c.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	spec, err := s.Spec()
	if err != nil {
		return nil, err
	}
	after := c.now()
	if s.StartAt != nil && s.StartAt.After(after) {
		after = s.StartAt.Add(-time.Second)
	}
	out := []Occurrence{}
	for _, occ := range spec.NextN(after, n) {
		if s.EndAt != nil && !occ.At.Before(*s.EndAt) {
			break
		}
		out = append(out, occ)
	}
	return out, nil
}

func (c *Client) inTx(ctx context.Context, fn func(tx pgx.Tx) (*Schedule, error)) (*Schedule, error) {
	var s *Schedule
	err := pgx.BeginFunc(ctx, c.wf.Pool(), func(tx pgx.Tx) error {
		var err error
		s, err = fn(tx)
		return err
	})
	return s, err
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
