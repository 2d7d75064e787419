package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/runmeta"
	"github.com/tributary-go/tributary/internal/wfruntime"
)

// startScheduledTx starts the run of a schedule slot within tx, or records
// the slot as skipped: startScheduledManyTx of one slot, for an operator's
// explicit start (a trigger, a backfill). Unlike a slot fired with others,
// a run the engine refuses (input over the limit, a bad run policy) is an
// error, a *ValidationError, and nothing is written.
func (c *Client) startScheduledTx(ctx context.Context, tx pgx.Tx, s *wfruntime.ScheduledStart) (*wfruntime.Started, error) {
	if s.Skip == "" {
		if _, err := c.scheduledParams(s); err != nil {
			return nil, err
		}
	}
	started, err := c.startScheduledManyTx(ctx, tx, []*wfruntime.ScheduledStart{s})
	if err != nil {
		return nil, err
	}
	return &started[0], nil
}

// startScheduledManyTx starts the runs of schedule slots within tx, or
// records them as skipped, in a few statements whatever their number: one
// read of the slots that have their run already, one insert of the River
// jobs (River's InsertManyTx) and one of the runs. It is package
// schedule's way in: its argument type is internal to Tributary.
//
// Each run is unique on (ScheduleID, FireAt) and its job is a River unique
// job on the same pair (SLOT_IS_UNIQUE); a slot that has its run already
// comes back Existing and nothing is inserted for it. A slot whose run the
// engine refuses (input over Config.MaxInputBytes, a bad run policy or
// type name) is recorded as skipped with a reason that begins with
// wfruntime.SkipCannotStart, so that one bad schedule never fails the slots
// fired with it. The results are in the order of starts.
//
// A start with Prepare inserts its slot's run ahead of its time, as a
// prepared slot (engine/slot_prepared.go); nothing is prepared for one
// that could not start (its result has the reason in Skip, and nothing is
// written). A start of a slot that has a prepared run is decided as any:
// when the decision is the prepared run (matchesPrepared), that run's job
// is made available and it comes back Promoted; otherwise the prepared run
// is dropped and the slot started or recorded as if it had none.
func (c *Client) startScheduledManyTx(ctx context.Context, tx pgx.Tx, starts []*wfruntime.ScheduledStart) ([]wfruntime.Started, error) {
	out := make([]wfruntime.Started, len(starts))
	if len(starts) == 0 {
		return out, nil
	}
	existing, err := c.slotsWithRuns(ctx, tx, starts)
	if err != nil {
		return nil, err
	}

	type pending struct {
		i    int
		p    *scheduledPolicy
		skip string
	}
	var (
		todo      []pending
		jobParams []river.InsertManyParams
		jobOf     []int // index in starts of each of jobParams
	)
	var (
		promote []int64    // the prepared slots' jobs to make available
		traces  []string   // their decisions' trace contexts, "" for none
		drop    [][16]byte // the schedules whose prepared slot goes
	)
	for i, s := range starts {
		if r, ok := existing[slotKey{s.ScheduleID, s.FireAt.UnixMicro()}]; ok {
			switch {
			case !r.Prepared || s.Prepare:
				out[i] = wfruntime.Started{Existing: true, RunID: r.RunID}
				continue
			case c.matchesPrepared(s, &r):
				out[i] = wfruntime.Started{Promoted: true, RunID: r.RunID, JobID: r.JobID}
				promote = append(promote, r.JobID)
				traces = append(traces, traceJSON(s.Metadata.Trace))
				continue
			}
			// Decided otherwise than prepared (skipped, held, a policy that
			// changed): the prepared run goes, and the slot is recorded
			// below as one that never was.
			drop = append(drop, s.ScheduleID)
		}
		p, err := c.scheduledParams(s)
		skip := s.Skip
		if err != nil && skip == "" {
			skip = wfruntime.SkipCannotStart + err.Error()
		}
		if s.Prepare && skip != "" {
			// Nothing is prepared for a slot that cannot start: it is
			// decided, and recorded, at its time.
			out[i] = wfruntime.Started{Skip: skip}
			continue
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, fmt.Errorf("workflow: new run id: %w", err)
		}
		if s.Prepare {
			id = runIDAt(id, s.FireAt)
		}
		out[i] = wfruntime.Started{RunID: id, Skip: skip}
		todo = append(todo, pending{i, p, skip})
		if skip == "" {
			jobParams = append(jobParams, river.InsertManyParams{Args: p.args(id, s), InsertOpts: p.insertOpts(s)})
			jobOf = append(jobOf, i)
		}
	}

	if len(drop) > 0 {
		if _, err := c.db.DropPreparedTx(ctx, tx, drop); err != nil {
			return nil, fmt.Errorf("workflow: drop the prepared runs of %d slots decided otherwise: %w", len(drop), err)
		}
	}
	if len(promote) > 0 {
		promoted, err := c.db.PromotePreparedTx(ctx, tx, promote, traces)
		if err != nil {
			return nil, fmt.Errorf("workflow: make the jobs of %d prepared slots available: %w", len(promote), err)
		}
		if len(promoted) != len(promote) {
			// The caller holds the schedules, and River never moves a
			// pending job: this is a bug, and failing keeps the slots'
			// decisions from being recorded as started runs that never run.
			return nil, fmt.Errorf("workflow: %d of %d prepared slots' jobs were no longer pending", len(promote)-len(promoted), len(promote))
		}
	}

	if len(jobParams) > 0 {
		results, err := c.river.InsertManyTx(ctx, tx, jobParams)
		if err != nil {
			return nil, fmt.Errorf("workflow: insert the River jobs of %d slots' runs: %w", len(jobParams), err)
		}
		for k, res := range results {
			i := jobOf[k]
			if res.UniqueSkippedAsDuplicate {
				// The slot's job exists though its run does not (the run was
				// deleted, its job kept): the slot has fired.
				out[i] = wfruntime.Started{Existing: true, JobID: res.Job.ID}
				continue
			}
			out[i].JobID = res.Job.ID
			if res.Job.State == rivertype.JobStateScheduled {
				if err := c.waker.ScheduleTx(ctx, tx, res.Job.ID, res.Job.Queue, res.Job.ScheduledAt); err != nil {
					return nil, err
				}
			}
		}
	}

	runs := make([]engine.ScheduledRun, 0, len(todo))
	for _, t := range todo {
		if !out[t.i].Existing {
			runs = append(runs, scheduledRun(out[t.i].RunID, out[t.i].JobID, t.p, starts[t.i], t.skip))
		}
	}
	if len(runs) > 0 {
		inserted, err := c.db.InsertScheduledRuns(ctx, tx, runs, c.sqlNow())
		if err != nil {
			return nil, fmt.Errorf("workflow: insert the runs of %d slots: %w", len(runs), err)
		}
		if inserted != len(runs) {
			// Only a run inserted since slotsWithRuns read can conflict; the
			// caller holds the schedules, so this is a bug, and failing keeps
			// the jobs inserted above from outliving their runs.
			return nil, fmt.Errorf("workflow: %d of %d slots got a run from elsewhere while they were being started", len(runs)-inserted, len(runs))
		}
	}
	if len(c.mw.started) > 0 {
		c.reportScheduledStarts(ctx, starts, out)
	}
	return out, nil
}

// reportScheduledStarts reports the runs of starts that started (not
// skipped, not there already) to HookRunsStarted, by type and trigger.
func (c *Client) reportScheduledStarts(ctx context.Context, starts []*wfruntime.ScheduledStart, out []wfruntime.Started) {
	type key struct {
		typ     string
		trigger Trigger
	}
	counts := map[key]int{}
	for i, s := range starts {
		if out[i].Existing || out[i].Skip != "" || s.Prepare {
			continue
		}
		trigger := TriggerSchedule
		if s.Trigger != "" {
			trigger = Trigger(s.Trigger)
		}
		counts[key{s.Type, trigger}]++
	}
	for k, n := range counts {
		c.mw.runsStarted(ctx, k.typ, k.trigger, n)
	}
}

type slotKey struct {
	scheduleID uuid.UUID
	fireAtUS   int64
}

// slotsWithRuns reads which of the slots have a run already, with a plain
// read: inserting a run that conflicts with one that is finishing would
// wait for it while the caller holds the schedule, which that run's status
// trigger needs (a deadlock).
func (c *Client) slotsWithRuns(ctx context.Context, tx pgx.Tx, starts []*wfruntime.ScheduledStart) (map[slotKey]engine.SlotRun, error) {
	ids := make([][16]byte, len(starts))
	at := make([]time.Time, len(starts))
	for i, s := range starts {
		ids[i], at[i] = s.ScheduleID, s.FireAt
	}
	runs, err := c.db.RunsOfSlots(ctx, tx, ids, at)
	if err != nil {
		return nil, fmt.Errorf("workflow: read the runs of %d slots: %w", len(starts), err)
	}
	found := make(map[slotKey]engine.SlotRun, len(runs))
	for _, r := range runs {
		found[slotKey{r.ScheduleID, r.FireAt.UnixMicro()}] = r
	}
	return found, nil
}

// matchesPrepared reports whether the decision s of a slot that has the
// prepared run r is the run r is: started now (not skipped, not held), with
// the same run policy and the same metadata, but for the trace context of
// the decision's span, which the prepared run was written before and which
// PromotePreparedTx adds. The schedule's input is not compared: every
// change of a schedule drops its prepared slot (engine.DropPreparedTx).
func (c *Client) matchesPrepared(s *wfruntime.ScheduledStart, r *engine.SlotRun) bool {
	if s.Skip != "" || !s.StartAt.IsZero() {
		return false
	}
	p, err := c.scheduledParams(s)
	if err != nil || p.queue != r.Queue || p.priority != r.Priority || p.maxAttempts != r.MaxAttempts {
		return false
	}
	want, have := s.Metadata, runmeta.Decode(r.Metadata)
	want.Trace, have.Trace = nil, nil
	return reflect.DeepEqual(want, have)
}

// traceJSON is a decision's trace context as PromotePreparedTx takes it.
func traceJSON(trace map[string]string) string {
	if len(trace) == 0 {
		return ""
	}
	b, err := json.Marshal(trace)
	if err != nil {
		return ""
	}
	return string(b)
}

// scheduledPolicy is a slot's run policy with the workflow type's defaults
// applied.
type scheduledPolicy struct {
	kind        string
	maxAttempts int
	metadata    []byte
	priority    int
	queue       string
	retry       *RetryPolicy
	timeoutMS   int64
}

// scheduledParams applies the type's defaults (Tributary's own for a type
// this client does not register) to s, and says why the run cannot start,
// if it cannot: the same checks as Start, made per slot. The policy comes
// back with the error too, for the run that records the slot as skipped.
func (c *Client) scheduledParams(s *wfruntime.ScheduledStart) (*scheduledPolicy, error) {
	p := &scheduledPolicy{kind: kindOf(s.Type)}
	if err := validateName(s.Type); err != nil {
		return p, err
	}
	defaults := DefineOpts{MaxAttempts: defaultMaxAttempts, Priority: 1, Queue: river.QueueDefault}
	if reg, ok := c.types[s.Type]; ok {
		defaults = reg.opts
	}
	p.maxAttempts = orDefault(s.MaxAttempts, defaults.MaxAttempts)
	p.priority = orDefault(s.Priority, defaults.Priority)
	p.queue = orDefaultString(s.Queue, defaults.Queue)
	switch timeout := orDefault(s.Timeout, defaults.Timeout); {
	case timeout < 0:
		p.timeoutMS = -1
	case timeout > 0:
		p.timeoutMS = max(timeout.Milliseconds(), 1)
	}
	p.metadata = []byte("{}")
	if !s.Metadata.IsZero() {
		var err error
		if p.metadata, err = json.Marshal(&s.Metadata); err != nil {
			p.metadata = []byte("{}")
			return p, &ValidationError{Field: "metadata", Problem: fmt.Sprintf("cannot be encoded as JSON: %v", err)}
		}
	}
	if err := validatePolicy("schedule run policy", p.maxAttempts, p.priority, p.queue); err != nil {
		return p, err
	}
	var scheduled *RetryPolicy
	if len(s.Retry) > 0 {
		scheduled = new(RetryPolicy)
		if err := json.Unmarshal(s.Retry, scheduled); err != nil {
			return p, &ValidationError{Field: "schedule run policy.Retry", Problem: fmt.Sprintf("cannot be decoded: %v", err)}
		}
		if err := scheduled.check("schedule run policy.Retry"); err != nil {
			return p, err
		}
	}
	p.retry = runRetry(nil, scheduled, defaults.Retry)
	if n := len(scheduledInput(s)); n > c.maxInputBytes {
		return p, &ValidationError{Field: "input", Problem: fmt.Sprintf("is %d bytes encoded, the limit is %d (the working client's Config.MaxInputBytes); make the schedule's input smaller", n, c.maxInputBytes)}
	}
	return p, nil
}

func (p *scheduledPolicy) args(runID uuid.UUID, s *wfruntime.ScheduledStart) runArgs {
	scheduleID, fireAt := s.ScheduleID, s.FireAt
	args := runArgs{kind: p.kind, RunID: runID, ScheduleID: &scheduleID, FireAt: &fireAt, TimeoutMS: p.timeoutMS, Tenant: s.Tenant, Retry: p.retry}
	args.inlineStart(scheduledInput(s), p.metadata, nil)
	return args
}

func (p *scheduledPolicy) insertOpts(s *wfruntime.ScheduledStart) *river.InsertOpts {
	opts := &river.InsertOpts{
		MaxAttempts: p.maxAttempts, Priority: p.priority, Queue: p.queue, ScheduledAt: s.StartAt,
		UniqueOpts: river.UniqueOpts{ByArgs: true},
	}
	if s.Prepare {
		// River UI shows the job as pending: its metadata says for what.
		opts.Pending, opts.ScheduledAt = true, s.FireAt
		opts.Metadata = []byte(`{"tributary_prepared_slot": "made available when its schedule's slot at scheduled_at is decided"}`)
	}
	return opts
}

// runIDAt is id, a UUIDv7, with at's millisecond as its time: a prepared
// slot's run is dated at its slot, in its id (which orders listings) as in
// its created_at, as the run the slot would have inserted at its time.
func runIDAt(id uuid.UUID, at time.Time) uuid.UUID {
	first := firstIDAt(at)
	copy(id[:6], first[:6])
	return id
}

func scheduledInput(s *wfruntime.ScheduledStart) []byte {
	if len(s.Input) == 0 {
		return []byte("null")
	}
	return s.Input
}

// scheduledRun is the row of a slot's run that startScheduledManyTx
// inserts.
func scheduledRun(id uuid.UUID, jobID int64, p *scheduledPolicy, s *wfruntime.ScheduledStart, skip string) engine.ScheduledRun {
	return engine.ScheduledRun{
		ID: id, Type: s.Type, Input: scheduledInput(s), MaxAttempts: p.maxAttempts, Queue: p.queue, Priority: p.priority,
		JobID: jobID, ScheduleID: s.ScheduleID, FireAt: s.FireAt, Metadata: p.metadata, Skip: skip, Tenant: s.Tenant,
		Prepared: s.Prepare,
	}
}
