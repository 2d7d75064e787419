package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/tributary-go/tributary/internal/engine"
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
	for i, s := range starts {
		if id, ok := existing[slotKey{s.ScheduleID, s.FireAt.UnixMicro()}]; ok {
			out[i] = wfruntime.Started{Existing: true, RunID: id}
			continue
		}
		p, err := c.scheduledParams(s)
		skip := s.Skip
		if err != nil && skip == "" {
			skip = wfruntime.SkipCannotStart + err.Error()
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, fmt.Errorf("workflow: new run id: %w", err)
		}
		out[i] = wfruntime.Started{RunID: id, Skip: skip}
		todo = append(todo, pending{i, p, skip})
		if skip == "" {
			jobParams = append(jobParams, river.InsertManyParams{Args: p.args(id, s), InsertOpts: p.insertOpts(s)})
			jobOf = append(jobOf, i)
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
		if out[i].Existing || out[i].Skip != "" {
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
func (c *Client) slotsWithRuns(ctx context.Context, tx pgx.Tx, starts []*wfruntime.ScheduledStart) (map[slotKey]uuid.UUID, error) {
	ids := make([][16]byte, len(starts))
	at := make([]time.Time, len(starts))
	for i, s := range starts {
		ids[i], at[i] = s.ScheduleID, s.FireAt
	}
	runs, err := c.db.RunsOfSlots(ctx, tx, ids, at)
	if err != nil {
		return nil, fmt.Errorf("workflow: read the runs of %d slots: %w", len(starts), err)
	}
	found := make(map[slotKey]uuid.UUID, len(runs))
	for _, r := range runs {
		found[slotKey{r.ScheduleID, r.FireAt.UnixMicro()}] = r.RunID
	}
	return found, nil
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
	args := runArgs{kind: p.kind, RunID: runID, Workflow: s.Type, ScheduleID: &scheduleID, FireAt: &fireAt, TimeoutMS: p.timeoutMS, Tenant: s.Tenant, Retry: p.retry}
	args.inlineStart(scheduledInput(s), p.metadata, nil)
	return args
}

func (p *scheduledPolicy) insertOpts(s *wfruntime.ScheduledStart) *river.InsertOpts {
	return &river.InsertOpts{
		MaxAttempts: p.maxAttempts, Priority: p.priority, Queue: p.queue, ScheduledAt: s.StartAt,
		UniqueOpts: river.UniqueOpts{ByArgs: true},
	}
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
	}
}
