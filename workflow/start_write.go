package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/runmeta"
)

// preparedStart is a start validated, with its run's row and River job
// made, ready to insert.
type preparedStart struct {
	p           *startParams
	opts        *StartOpts // never nil
	id          uuid.UUID
	args        runArgs
	insertOpts  *river.InsertOpts
	metadata    []byte
	tags        []string
	tenant      string
	maxAttempts int
	priority    int
	queue       string
	debounce    *Debounce // a debounced start (Debounce); a schedule's runs are never debounced
	status      Status
}

// prepareStart validates p, everything before the first write, and makes
// its run's row and River job. added is metadata the start middleware adds
// to p's.
func (c *Client) prepareStart(p *startParams, added map[string]any) (*preparedStart, error) {
	opts := p.opts
	if opts == nil {
		opts = &StartOpts{}
	}
	ps := &preparedStart{p: p, opts: opts, status: StatusPending}
	ps.maxAttempts = orDefault(opts.MaxAttempts, p.defaults.MaxAttempts)
	ps.priority = orDefault(opts.Priority, p.defaults.Priority)
	ps.queue = orDefaultString(opts.Queue, p.defaults.Queue)
	timeout := orDefault(opts.Timeout, p.defaults.Timeout)
	if err := validatePolicy("StartOpts", ps.maxAttempts, ps.priority, ps.queue); err != nil {
		return nil, err
	}
	if opts.Retry != nil {
		if err := opts.Retry.check("StartOpts.Retry"); err != nil {
			return nil, err
		}
	}
	if len(p.input) > c.maxInputBytes {
		return nil, &ValidationError{Field: "input", Problem: fmt.Sprintf("is %d bytes encoded, the limit is %d (Config.MaxInputBytes); store large data elsewhere and pass a reference", len(p.input), c.maxInputBytes)}
	}
	ps.tenant = opts.Tenant
	if ps.tenant != "" {
		if err := CheckTenant("StartOpts.Tenant", ps.tenant); err != nil {
			return nil, err
		}
	} else {
		ps.tenant = p.parentTenant
	}
	if len(opts.IdempotencyKey) > 255 {
		return nil, &ValidationError{Field: "StartOpts.IdempotencyKey", Problem: fmt.Sprintf("is %d bytes, the limit is 255", len(opts.IdempotencyKey))}
	}
	for _, tag := range opts.Tags {
		if len(tag) > 255 || !tagRE.MatchString(tag) {
			return nil, &ValidationError{Field: "StartOpts.Tags", Problem: fmt.Sprintf("tag %q is not a valid River tag; use letters, digits, _ and - (at most 255)", tag)}
		}
	}
	ps.metadata = []byte("{}")
	if p.scheduleID == nil {
		for key := range opts.Metadata {
			if runmeta.Reserved(key) {
				return nil, &ValidationError{Field: "StartOpts.Metadata", Problem: fmt.Sprintf("key %q is reserved: Tributary sets it on runs that schedules start (RunInfo.GrantSubject trusts it); use another key", key)}
			}
		}
	}
	if userMetadata := withAdded(opts.Metadata, added); len(userMetadata) > 0 {
		var err error
		if ps.metadata, err = json.Marshal(userMetadata); err != nil {
			return nil, &ValidationError{Field: "StartOpts.Metadata", Problem: fmt.Sprintf("cannot be encoded as JSON: %v", err)}
		}
	}
	if p.scheduleID == nil {
		ps.debounce = opts.Debounce
	}
	if ps.debounce != nil {
		if err := ps.debounce.check(opts, p.parentID != nil); err != nil {
			return nil, err
		}
	}
	ps.tags = opts.Tags
	if ps.tags == nil {
		ps.tags = []string{}
	}

	var err error
	if ps.id, err = uuid.NewV7(); err != nil {
		return nil, fmt.Errorf("workflow: new run id: %w", err)
	}
	ps.args = runArgs{kind: kindOf(p.typeName), RunID: ps.id, ScheduleID: p.scheduleID, FireAt: p.fireAt, Tenant: ps.tenant,
		Retry: runRetry(opts.Retry, nil, p.defaults.Retry)}
	if ps.debounce == nil && !p.fork { // a later start of the window changes the input
		ps.args.inlineStart(p.input, ps.metadata, p.parentID)
	}
	switch {
	case timeout < 0:
		ps.args.TimeoutMS = -1
	case timeout > 0:
		ps.args.TimeoutMS = max(timeout.Milliseconds(), 1)
	}
	ps.insertOpts = &river.InsertOpts{MaxAttempts: ps.maxAttempts, Priority: ps.priority, Queue: ps.queue, ScheduledAt: opts.ScheduledAt, Tags: opts.Tags}
	if p.scheduleID != nil {
		ps.insertOpts.UniqueOpts = river.UniqueOpts{ByArgs: true}
	}
	if ps.debounce != nil {
		ps.insertOpts.ScheduledAt = c.now().Add(ps.debounce.Period)
	}
	if p.skip != "" {
		ps.status = StatusSkipped
	}
	return ps, nil
}

// writeStartTx inserts a prepared start's run and its River job in tx.
func (c *Client) writeStartTx(ctx context.Context, tx pgx.Tx, ps *preparedStart) (*startedRun, error) {
	p, opts, id := ps.p, ps.opts, ps.id
	if opts.RequireWorker {
		served, err := c.typeServed(ctx, tx, p.typeName, ps.queue)
		if err != nil {
			return nil, err
		}
		if !served {
			return nil, &NoWorkerError{WorkflowType: p.typeName}
		}
	}
	debounce := ps.debounce
	debounceKey := ""
	if debounce != nil {
		debounceKey = debounce.Key
	}

	insertRun := func(jobID int64) (*startedRun, error) {
		row, err := c.db.InsertRun(ctx, tx, &engine.InsertRunParams{
			ID: id, Type: p.typeName, IdempotencyKey: opts.IdempotencyKey, Input: p.input, MaxAttempts: ps.maxAttempts,
			Queue: ps.queue, Priority: ps.priority, JobID: jobID, ScheduleID: p.scheduleID, FireAt: p.fireAt,
			ParentID: p.parentID, ParentStep: p.parentStep, Metadata: ps.metadata, Tags: ps.tags, Status: string(ps.status), SkipReason: p.skip,
			Tenant: ps.tenant, DebounceKey: debounceKey, Now: c.sqlNow(),
		})
		if errors.Is(err, engine.ErrNotFound) {
			return nil, ErrNotFound
		}
		if err != nil {
			return nil, err
		}
		started := &startedRun{}
		if err := setRun(&started.run, row); err != nil {
			return nil, err
		}
		started.Run = &started.run
		return started, nil
	}
	insertJob := func() (int64, error) {
		res, err := c.river.InsertTx(ctx, tx, ps.args, ps.insertOpts)
		if err != nil {
			return 0, fmt.Errorf("workflow: insert River job for run %s: %w", id, err)
		}
		if res.Job.State == rivertype.JobStateScheduled {
			if err := c.waker.ScheduleTx(ctx, tx, res.Job.ID, res.Job.Queue, res.Job.ScheduledAt); err != nil {
				return 0, err
			}
		}
		return res.Job.ID, nil
	}

	// insertJobAfter inserts the job of a run inserted first, and links it.
	insertJobAfter := func(started *startedRun) (*startedRun, error) {
		jobID, err := insertJob()
		if err != nil {
			return nil, err
		}
		if err := c.db.SetRunJob(ctx, tx, id, jobID); err != nil {
			return nil, fmt.Errorf("workflow: link run %s to job %d: %w", id, jobID, err)
		}
		started.JobID = jobID
		return started, nil
	}

	if debounce != nil {
		// Join the open window, or open one: the run goes first, so that a
		// racing start that opened the window meanwhile stops it (ON
		// CONFLICT), and this one joins that window instead.
		for range debounceTries {
			joined, err := c.joinDebounceTx(ctx, tx, p.typeName, p.input, debounce)
			if joined != nil || err != nil {
				return joined, err
			}
			started, err := insertRun(0)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("workflow: insert run: %w", err)
			}
			return insertJobAfter(started)
		}
		return nil, fmt.Errorf("workflow: debounce window %q of %s: %w %d times in a row; try again", debounce.Key, p.typeName, errDebounceRaced, debounceTries)
	}

	if opts.IdempotencyKey == "" && p.scheduleID == nil {
		jobID, err := insertJob()
		if err != nil {
			return nil, err
		}
		started, err := insertRun(jobID)
		if err != nil {
			return nil, fmt.Errorf("workflow: insert run: %w", err)
		}
		return started, nil
	}

	started, err := insertRun(0)
	if errors.Is(err, ErrNotFound) && p.scheduleID != nil { // the slot already has its run
		return &startedRun{Run: &Run{}, existing: true}, nil
	}
	if errors.Is(err, ErrNotFound) { // conflict: the key is taken
		existing, err := runOf(c.db.RunByKey(ctx, tx, p.typeName, opts.IdempotencyKey))
		if err != nil {
			return nil, fmt.Errorf("workflow: read run with idempotency key %q: %w", opts.IdempotencyKey, err)
		}
		return &startedRun{Run: existing, existing: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workflow: insert run: %w", err)
	}
	if p.skip != "" {
		return started, nil
	}
	return insertJobAfter(started)
}
