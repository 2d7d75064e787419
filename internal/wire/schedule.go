package wire

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// NextFireTimes is how many fire times an answer about one schedule
// holds.
const NextFireTimes = 10

// Schedule is a schedule: schedule.Schedule on the wire.
type Schedule struct {
	ID            uuid.UUID              `json:"id"`
	Name          string                 `json:"name"`
	Description   string                 `json:"description"`
	Owner         string                 `json:"owner"`
	Key           string                 `json:"key"`
	Tenant        string                 `json:"tenant"`
	Workflow      string                 `json:"workflow"`
	Input         json.RawMessage        `json:"input"`
	Cron          string                 `json:"cron"`
	RRule         string                 `json:"rrule"`
	TimeZone      string                 `json:"time_zone"`
	StartAt       *time.Time             `json:"start_at"`
	EndAt         *time.Time             `json:"end_at"`
	Overlap       schedule.OverlapPolicy `json:"overlap"`
	CatchUpWindow Duration               `json:"catch_up_window"`
	CatchUp       schedule.CatchUpPolicy `json:"catch_up"`
	DSTGap        schedule.DSTGap        `json:"dst_gap"`
	DSTFold       schedule.DSTFold       `json:"dst_fold"`
	// Calendars are Schedule.Calendars, [] for none; OnExcluded what a
	// slot on one of their dates does.
	Calendars     []string            `json:"calendars"`
	OnExcluded    schedule.OnExcluded `json:"on_excluded"`
	MaxAttempts   int                 `json:"max_attempts"`
	KeepRuns      int                 `json:"keep_runs"`
	Priority      int                 `json:"priority"`
	Queue         string              `json:"queue"`
	Timeout       Duration            `json:"timeout"`
	Retry         *Retry              `json:"retry"` // Schedule.Retry; null for none (the workflow type's)
	Paused        bool                `json:"paused"`
	PauseNote     string              `json:"pause_note"`
	PausedAt      *time.Time          `json:"paused_at"`
	NextFireAt    *time.Time          `json:"next_fire_at"`
	LastFireAt    *time.Time          `json:"last_fire_at"`
	RunCount      int64               `json:"run_count"`
	FailureCount  int64               `json:"failure_count"`
	LastRunStatus string              `json:"last_run_status"`
	GrantID       *uuid.UUID          `json:"grant_id"`
	CreatedAt     time.Time           `json:"created_at"`
	UpdatedAt     time.Time           `json:"updated_at"`
	DeclaredBy    string              `json:"declared_by"`
	UndeclaredAt  *time.Time          `json:"undeclared_at"`
	CreatedBy     string              `json:"created_by"`
	// Origin is Schedule.Origin: where the schedule comes from, for people.
	Origin string `json:"origin"`
	// RunTenant is Schedule.RunTenant: the tenant the schedule's runs
	// carry, its tenant or else its owner ("" for none).
	RunTenant string `json:"run_tenant"`
	// NextFireTimes are in the answers about one schedule, not in
	// listings: its next NextFireTimes fire times, none while paused.
	NextFireTimes *[]Occurrence `json:"next_fire_times,omitempty"`
	// WorkerLive is in the answers about one schedule, not in listings:
	// whether a live client serves the schedule's workflow type (the
	// worker registry); false means its runs wait.
	WorkerLive *bool `json:"worker_live,omitempty"`
	// Existing is in the answer of a create only: whether the key named a
	// schedule with the same spec, which is answered and nothing written
	// (schedule.Schedule.Existing).
	Existing *bool `json:"existing,omitempty"`
}

// NewSchedule is s on the wire, without the fields of the answers about
// one schedule (NextFireTimes, WorkerLive) or of a create (Existing).
func NewSchedule(s *schedule.Schedule) *Schedule {
	calendars := s.Calendars
	if calendars == nil {
		calendars = []string{}
	}
	return &Schedule{
		Calendars: calendars, OnExcluded: s.OnExcluded,
		ID: s.ID, Name: s.Name, Description: s.Description, Owner: s.Owner, Key: s.Key, Tenant: s.Tenant, RunTenant: s.RunTenant(),
		Workflow: s.Workflow,
		Input:    JSONOrNull(s.Input), Cron: s.Cron, RRule: s.RRule, TimeZone: s.TimeZone, StartAt: utcPtr(s.StartAt), EndAt: utcPtr(s.EndAt),
		Overlap: s.Overlap, CatchUpWindow: Duration(s.CatchUpWindow), CatchUp: s.CatchUp, DSTGap: s.DSTGap, DSTFold: s.DSTFold,
		MaxAttempts: s.MaxAttempts, KeepRuns: s.KeepRuns, Priority: s.Priority, Queue: s.Queue, Timeout: Duration(s.Timeout), Retry: NewRetry(s.Retry),
		Paused: s.Paused, PauseNote: s.PauseNote, PausedAt: utcPtr(s.PausedAt), NextFireAt: utcPtr(s.NextFireAt),
		LastFireAt: utcPtr(s.LastFireAt), RunCount: s.RunCount, FailureCount: s.FailureCount,
		LastRunStatus: s.LastRunStatus, GrantID: s.GrantID, CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(),
		DeclaredBy: s.DeclaredBy, UndeclaredAt: utcPtr(s.UndeclaredAt), CreatedBy: s.CreatedBy, Origin: s.Origin(),
	}
}

// ScheduleAnswer is the answer about one schedule: s with its next
// NextFireTimes fire times (none while paused) and whether a live client
// of wf serves its workflow type.
func ScheduleAnswer(ctx context.Context, sc *schedule.Client, wf *workflow.Client, s *schedule.Schedule) (*Schedule, error) {
	next := []Occurrence{}
	if !s.Paused {
		occurrences, err := sc.Next(ctx, schedule.ByID(s.ID), NextFireTimes)
		if err != nil {
			return nil, err
		}
		next = NewOccurrences(occurrences)
	}
	live, err := wf.TypeServed(ctx, s.Workflow)
	if err != nil {
		return nil, err
	}
	out := NewSchedule(s)
	out.NextFireTimes, out.WorkerLive = &next, &live
	return out, nil
}

// ScheduleList is a listing of schedules; NextAfter, set when the page is
// full, is the after (--after) of the next page.
type ScheduleList struct {
	Schedules []*Schedule `json:"schedules"`
	NextAfter *uuid.UUID  `json:"next_after"`
}

// SchedulePage is a page of a schedule listing asked with limit.
func SchedulePage(schedules []*schedule.Schedule, limit int) *ScheduleList {
	out := &ScheduleList{Schedules: make([]*Schedule, 0, len(schedules))}
	for _, s := range schedules {
		out.Schedules = append(out.Schedules, NewSchedule(s))
	}
	if len(schedules) > 0 && len(schedules) == limit {
		out.NextAfter = &schedules[len(schedules)-1].ID
	}
	return out
}

// Occurrence is a fire time: schedule.Occurrence on the wire. A skipped
// one is a slot the schedule records as skipped instead of running it: its
// DST policy (dst_gap skip) or one of its calendars (on_excluded skip)
// says so. Excluded names the excluded date of a slot skipped or moved
// for a calendar, with the calendar: "2027-12-24 (us-holidays)".
type Occurrence struct {
	At       time.Time `json:"at"`
	Nominal  string    `json:"nominal"`
	Shifted  bool      `json:"shifted"`
	Skipped  bool      `json:"skipped"`
	Excluded string    `json:"excluded"`
	Note     string    `json:"note"`
}

// NewOccurrences is occurrences on the wire, [] for none.
func NewOccurrences(occurrences []schedule.Occurrence) []Occurrence {
	out := make([]Occurrence, 0, len(occurrences))
	for _, o := range occurrences {
		out = append(out, Occurrence{At: o.At.UTC(), Nominal: o.Nominal, Shifted: o.Shifted, Skipped: o.Skipped, Excluded: o.Excluded, Note: o.Note})
	}
	return out
}

// Retry is a retry policy (workflow.RetryPolicy) on the wire, its members
// at their defaults left out: {"delay": "30s"}, {"base": "1s", "factor":
// 2, "max": "5m0s"}.
type Retry struct {
	Delay  Duration `json:"delay,omitempty"`
	Base   Duration `json:"base,omitempty"`
	Factor float64  `json:"factor,omitempty"`
	Max    Duration `json:"max,omitempty"`
	Jitter float64  `json:"jitter,omitempty"`
}

// NewRetry is p on the wire; nil (JSON null) for none.
func NewRetry(p *workflow.RetryPolicy) *Retry {
	if p == nil || p.IsZero() {
		return nil
	}
	return newRetryKeepingZero(p)
}

// newRetryKeepingZero is p on the wire, the zero policy as {} (River's
// backoff, over the type's policy, on a run); nil for nil.
func newRetryKeepingZero(p *workflow.RetryPolicy) *Retry {
	if p == nil {
		return nil
	}
	return &Retry{Delay: Duration(p.Delay), Base: Duration(p.Base), Factor: p.Factor, Max: Duration(p.Max), Jitter: p.Jitter}
}

// Backfill is what a backfill did (schedule.BackfillResult on the wire):
// the schedule, the range backfilled and what became of its slots.
type Backfill struct {
	ScheduleID uuid.UUID      `json:"schedule_id"`
	From       time.Time      `json:"from"`
	To         time.Time      `json:"to"`
	Slots      int            `json:"slots"`
	Started    int            `json:"started"`
	Queued     int            `json:"queued"`
	Existing   int            `json:"existing"`
	Rerun      int            `json:"rerun"`
	Skipped    map[string]int `json:"skipped"`
}

// NewBackfill is res, the backfill of schedule id from from to to, on the
// wire.
func NewBackfill(id uuid.UUID, from, to time.Time, res *schedule.BackfillResult) *Backfill {
	out := &Backfill{ScheduleID: id, From: from.UTC(), To: to.UTC(), Slots: res.Slots, Started: res.Started, Queued: res.Queued,
		Existing: res.Existing, Rerun: res.Rerun, Skipped: res.Skipped}
	if out.Skipped == nil {
		out.Skipped = map[string]int{}
	}
	return out
}

// Triggered is the answer of a trigger: the run it started.
type Triggered struct {
	RunID uuid.UUID `json:"run_id"`
}

// OwnerBulk is what a bulk pause or resume of an owner's schedules did
// (schedule.OwnerResult on the wire), or would do for a dry run.
type OwnerBulk struct {
	Owner  string `json:"owner"`
	Action string `json:"action"`
	DryRun bool   `json:"dry_run"`
	// Schedules is the number of the owner's schedules, Eligible the
	// number the action changes (or would): those not paused for a pause,
	// the paused ones for a resume.
	Schedules int `json:"schedules"`
	Eligible  int `json:"eligible"`
	// Changed are the schedules changed, as they are after it; Unchanged
	// the ids of those left as they were. Both empty for a dry run.
	Changed   []*Schedule `json:"changed"`
	Unchanged []uuid.UUID `json:"unchanged"`
	Batches   int         `json:"batches"`
}

// NewOwnerBulk is res, what action did to owner's schedules, on the wire;
// res nil is nothing done (a dry run's answer, whose DryRun and counts the
// caller sets).
func NewOwnerBulk(owner, action string, res *schedule.OwnerResult) *OwnerBulk {
	out := &OwnerBulk{Owner: owner, Action: action, Changed: []*Schedule{}, Unchanged: []uuid.UUID{}}
	if res != nil {
		for _, s := range res.Changed {
			out.Changed = append(out.Changed, NewSchedule(s))
		}
		out.Unchanged = append(out.Unchanged, res.Unchanged...)
		out.Batches = res.Batches
		out.Eligible = len(res.Changed)
		out.Schedules = len(res.Changed) + len(res.Unchanged)
	}
	return out
}
