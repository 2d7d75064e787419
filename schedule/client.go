package schedule

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/wfruntime"
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
	rt       wfruntime.Runtime // wf's runtime: its pool, schema and what a slot's run needs
	metrics  *slotMetrics      // nil when the instruments could not be made
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
	rt := wfruntime.Of(wf)
	c := &Client{
		clock:    rt.Now, // one clock: the workflow client's (workflow.Config.Clock)
		rt:       rt,
		firing:   make(chan struct{}, QueueWorkers),
		interval: interval,
		logger:   logger,
		metrics:  metrics,
		q:        rt.Queries(),
		tracer:   tp.Tracer(meterName),
		wf:       wf,
	}
	reconcile := c.reconcileJob()
	err = c.rt.Bind(&wfruntime.Binding{
		Name: bindingName,
		Register: func(workers *river.Workers) error {
			if err := river.AddWorkerSafely(workers, &fireWorker{c: c}); err != nil {
				return err
			}
			if err := river.AddWorkerSafely(workers, &prepareWorker{c: c}); err != nil {
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
// wfruntime.Runtime.SQLNow).
func (c *Client) sqlNow() *time.Time { return c.rt.SQLNow() }

// Get reads the schedule ref names (ByID or ByKey). Returns ErrNotFound
// when there is none.
func (c *Client) Get(ctx context.Context, ref Ref) (*Schedule, error) {
	if err := ref.check(); err != nil {
		return nil, err
	}
	var s *Schedule
	var err error
	if ref.Key == "" {
		s, err = scheduleOf(c.q.ScheduleByID(ctx, c.rt.Pool(), ref.ID))
	} else if s, err = scheduleOf(c.q.ScheduleByKey(ctx, c.rt.Pool(), ref.Owner, ref.Key)); errors.Is(err, ErrNotFound) {
		return nil, notFoundByKey(ref)
	}
	if err != nil {
		return nil, err
	}
	return s, c.loadCalendarsTx(ctx, c.rt.Pool(), s)
}

// ListParams filter and page List. The zero value lists the 100 newest
// schedules.
type ListParams struct {
	Owner    string
	Workflow string
	// Paused, when set, keeps schedules that are (or are not) paused.
	Paused *bool
	// Calendar keeps the schedules that exclude this calendar's dates
	// (Params.Calendars); "" for any.
	Calendar string
	// Name keeps the schedules whose name contains this text, whatever its
	// case ("digest" finds "Daily Digest"); "" for any. No index serves
	// it (one would be written at every firing of every schedule): a
	// listing reads schedules newest first until it has its page, all of
	// them when fewer match, about 70 ms over 100,000 schedules.
	Name string
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
	rows, err := c.q.ListSchedules(ctx, c.rt.Pool(), &engine.ListSchedulesParams{
		Owner: p.Owner, Type: p.Workflow, Paused: p.Paused, Calendar: p.Calendar, Name: p.Name, After: p.After, Limit: limit,
	})
	if err != nil {
		return nil, fmt.Errorf("schedule: list: %w", err)
	}
	out, err := schedulesOf(rows, nil)
	if err != nil {
		return nil, err
	}
	return out, c.loadCalendarsTx(ctx, c.rt.Pool(), out...)
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
	if err := c.dropPreparedTx(ctx, tx, id); err != nil {
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
	if err := c.dropPreparedTx(ctx, tx, id); err != nil {
		return nil, err
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
	return c.preparedTx(ctx, tx, s)
}

// Delete deletes a schedule. Its past runs stay, with their schedule id set
// to NULL; its pending slot does not fire.
func (c *Client) Delete(ctx context.Context, ref Ref) error {
	return c.delete(ctx, c.rt.Pool(), ref)
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
	err := pgx.BeginFunc(ctx, c.rt.Pool(), func(tx pgx.Tx) error {
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
