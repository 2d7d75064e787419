package riverui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// The API's representations of runs and schedules. They are the Go API's
// types (workflow.Run, schedule.Schedule) with the Go field names in snake
// case, durations as Go duration strings, times in RFC 3339 (UTC), and
// every field always present: null for an absent time, id or output, never
// a missing key. What a GET answers, a PATCH (or, without its read-only
// fields, a POST) accepts. openapi.json describes them.

// duration is a time.Duration written and read as a Go duration string
// ("1h30m0s"; reads anything time.ParseDuration reads, such as "90m").
type duration time.Duration

func (d duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err // read answers: … is not a Go duration
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return &valueError{fmt.Sprintf("%q is not a Go duration such as \"90s\", \"15m\" or \"1h30m\"", s)}
	}
	if v < 0 {
		return &valueError{fmt.Sprintf("%q is negative; use 0s or more", s)}
	}
	*d = duration(v)
	return nil
}

// runJSON is a run: workflow.Run on the wire.
type runJSON struct {
	ID                uuid.UUID       `json:"id"`
	Type              string          `json:"type"`
	Status            workflow.Status `json:"status"`
	IdempotencyKey    string          `json:"idempotency_key"`
	Tenant            string          `json:"tenant"`
	DebounceKey       string          `json:"debounce_key"`
	Input             json.RawMessage `json:"input"`
	Output            json.RawMessage `json:"output"`
	Error             *runErrorJSON   `json:"error"`
	Attempt           int             `json:"attempt"`
	MaxAttempts       int             `json:"max_attempts"`
	NextAttemptAt     *time.Time      `json:"next_attempt_at"`
	Queue             string          `json:"queue"`
	Priority          int             `json:"priority"`
	JobID             *int64          `json:"job_id"`
	ScheduleID        *uuid.UUID      `json:"schedule_id"`
	FireAt            *time.Time      `json:"fire_at"`
	ParentID          *uuid.UUID      `json:"parent_id"`
	ParentStep        string          `json:"parent_step"`
	ForkedFrom        *uuid.UUID      `json:"forked_from"`
	ForkedFromStep    string          `json:"forked_from_step"`
	Metadata          json.RawMessage `json:"metadata"`
	Tags              []string        `json:"tags"`
	SkipReason        string          `json:"skip_reason"`
	Held              string          `json:"held"`
	HeldReason        string          `json:"held_reason"`
	CancelRequestedAt *time.Time      `json:"cancel_requested_at"`
	CreatedAt         time.Time       `json:"created_at"`
	UpdatedAt         time.Time       `json:"updated_at"`
	StartedAt         *time.Time      `json:"started_at"`
	FinishedAt        *time.Time      `json:"finished_at"`
	// Steps are in the answers about one run, not in listings.
	Steps *[]stepJSON `json:"steps,omitempty"`
	// Existing is in the answer of POST /api/runs only: whether the start
	// started nothing, its idempotency key having matched a run or the
	// start having joined a debounce window's run (workflow.Handle.Existing).
	Existing *bool `json:"existing,omitempty"`
}

// stepJSON is a step record: workflow.StepRun on the wire.
type stepJSON struct {
	Name       string              `json:"name"`
	Kind       workflow.StepKind   `json:"kind"`
	Status     workflow.StepStatus `json:"status"`
	ResultType string              `json:"result_type"`
	Output     json.RawMessage     `json:"output"`
	Error      *runErrorJSON       `json:"error"`
	Attempts   int                 `json:"attempts"`
	WakeAt     *time.Time          `json:"wake_at"`
	ChildRunID *uuid.UUID          `json:"child_run_id"`
	StartedAt  time.Time           `json:"started_at"`
	FinishedAt *time.Time          `json:"finished_at"`
}

// runWire is run on the wire, with its steps when withSteps.
func runWire(run *workflow.Run, withSteps bool) *runJSON {
	out := &runJSON{
		ID: run.ID, Type: run.Type, Status: run.Status, IdempotencyKey: run.IdempotencyKey, Tenant: run.Tenant,
		DebounceKey: run.DebounceKey, Input: jsonOrNull(run.Input), Output: jsonOrNull(run.Output), Error: runErrorWire(run.Error),
		Attempt: run.Attempt, MaxAttempts: run.MaxAttempts, NextAttemptAt: utcPtr(run.NextAttemptAt), Queue: run.Queue, Priority: run.Priority,
		ScheduleID: run.ScheduleID, FireAt: utcPtr(run.FireAt), ParentID: run.ParentID, ParentStep: run.ParentStep,
		ForkedFrom: run.ForkedFrom, ForkedFromStep: run.ForkedFromStep,
		Metadata: run.Metadata, Tags: run.Tags, SkipReason: run.SkipReason, Held: run.Held,
		CancelRequestedAt: utcPtr(run.CancelRequestedAt), CreatedAt: run.CreatedAt.UTC(), UpdatedAt: run.UpdatedAt.UTC(),
		StartedAt: utcPtr(run.StartedAt), FinishedAt: utcPtr(run.FinishedAt),
	}
	if run.JobID != 0 {
		out.JobID = &run.JobID
	}
	if len(out.Metadata) == 0 || string(out.Metadata) == "null" {
		out.Metadata = json.RawMessage("{}")
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if withSteps {
		steps := make([]stepJSON, 0, len(run.Steps))
		for _, s := range run.Steps {
			steps = append(steps, stepJSON{
				Name: s.Name, Kind: s.Kind, Status: s.Status, ResultType: s.ResultType, Output: jsonOrNull(s.Output),
				Error: runErrorWire(s.Error), Attempts: s.Attempts, WakeAt: utcPtr(s.WakeAt), ChildRunID: s.ChildRunID,
				StartedAt: s.StartedAt.UTC(), FinishedAt: utcPtr(s.FinishedAt),
			})
		}
		out.Steps = &steps
	}
	return out
}

// runErrorJSON is a run's or a step's error: workflow.RunError on the
// wire, with every field present.
type runErrorJSON struct {
	Kind    string    `json:"kind"`
	Message string    `json:"message"`
	Step    string    `json:"step"`
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`
	Stack   string    `json:"stack"`
}

func runErrorWire(e *workflow.RunError) *runErrorJSON {
	if e == nil {
		return nil
	}
	return &runErrorJSON{Kind: e.Kind, Message: e.Message, Step: e.Step, Attempt: e.Attempt, At: e.At.UTC(), Stack: e.Stack}
}

// runList is the answer of the run listings; NextAfter, set when the page
// is full, is the after= of the next page.
type runList struct {
	Runs      []*runJSON `json:"runs"`
	NextAfter *uuid.UUID `json:"next_after"`
}

func pageOf(runs []*workflow.Run, limit int, heldReasons map[[16]byte]string) runList {
	out := runList{Runs: make([]*runJSON, 0, len(runs))}
	for _, run := range runs {
		wire := runWire(run, false)
		wire.HeldReason = heldReasons[run.ID]
		out.Runs = append(out.Runs, wire)
	}
	if len(runs) > 0 && len(runs) == limit {
		out.NextAfter = &runs[len(runs)-1].ID
	}
	return out
}

// scheduleJSON is a schedule: schedule.Schedule on the wire.
type scheduleJSON struct {
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
	CatchUpWindow duration               `json:"catch_up_window"`
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
	Timeout       duration            `json:"timeout"`
	Retry         *retryJSON          `json:"retry"` // Schedule.Retry; null for none (the workflow type's)
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
	// listings: the next nextFireTimes fire times, none while paused.
	NextFireTimes *[]occurrence `json:"next_fire_times,omitempty"`
	// WorkerLive is in the answers about one schedule, not in listings:
	// whether a live client serves the schedule's workflow type (the
	// worker registry); false means its runs wait.
	WorkerLive *bool `json:"worker_live,omitempty"`
	// Existing is in the answer of POST /api/schedules only: whether the
	// key named a schedule with the same spec, which is answered and
	// nothing written (schedule.Schedule.Existing).
	Existing *bool `json:"existing,omitempty"`
}

// occurrence is a fire time: schedule.Occurrence on the wire. A skipped
// one is a slot the schedule records as skipped instead of running it: its
// DST policy (dst_gap skip) or one of its calendars (on_excluded skip)
// says so. Excluded names the excluded date of a slot skipped or moved
// for a calendar, with the calendar: "2027-12-24 (us-holidays)".
type occurrence struct {
	At       time.Time `json:"at"`
	Nominal  string    `json:"nominal"`
	Shifted  bool      `json:"shifted"`
	Skipped  bool      `json:"skipped"`
	Excluded string    `json:"excluded"`
	Note     string    `json:"note"`
}

func occurrenceWire(o schedule.Occurrence) occurrence {
	return occurrence{At: o.At.UTC(), Nominal: o.Nominal, Shifted: o.Shifted, Skipped: o.Skipped, Excluded: o.Excluded, Note: o.Note}
}

func scheduleWire(s *schedule.Schedule) *scheduleJSON {
	calendars := s.Calendars
	if calendars == nil {
		calendars = []string{}
	}
	return &scheduleJSON{
		Calendars: calendars, OnExcluded: s.OnExcluded,
		ID: s.ID, Name: s.Name, Description: s.Description, Owner: s.Owner, Key: s.Key, Tenant: s.Tenant, RunTenant: s.RunTenant(),
		Workflow: s.Workflow,
		Input:    jsonOrNull(s.Input), Cron: s.Cron, RRule: s.RRule, TimeZone: s.TimeZone, StartAt: utcPtr(s.StartAt), EndAt: utcPtr(s.EndAt),
		Overlap: s.Overlap, CatchUpWindow: duration(s.CatchUpWindow), CatchUp: s.CatchUp, DSTGap: s.DSTGap, DSTFold: s.DSTFold,
		MaxAttempts: s.MaxAttempts, KeepRuns: s.KeepRuns, Priority: s.Priority, Queue: s.Queue, Timeout: duration(s.Timeout), Retry: retryWire(s.Retry),
		Paused: s.Paused, PauseNote: s.PauseNote, PausedAt: utcPtr(s.PausedAt), NextFireAt: utcPtr(s.NextFireAt),
		LastFireAt: utcPtr(s.LastFireAt), RunCount: s.RunCount, FailureCount: s.FailureCount,
		LastRunStatus: s.LastRunStatus, GrantID: s.GrantID, CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(),
		DeclaredBy: s.DeclaredBy, UndeclaredAt: utcPtr(s.UndeclaredAt), CreatedBy: s.CreatedBy, Origin: s.Origin(),
	}
}

// keyConflictJSON is the 409 answer of POST /api/schedules whose key names
// a schedule with another spec: schedule.KeyConflictError on the wire, with
// an error message as every error has.
type keyConflictJSON struct {
	Error string `json:"error"`
	// ID is the schedule that has the key; Owner and Key are the key.
	ID    uuid.UUID `json:"id"`
	Owner string    `json:"owner"`
	Key   string    `json:"key"`
	// DeclaredBy is the service that declared that schedule, or "".
	DeclaredBy string `json:"declared_by"`
	// Diffs are the fields that differ, named as the API names them, with
	// the stored and the given value as schedule.FieldDiff formats them.
	Diffs []schedule.FieldDiff `json:"diffs"`
}

// keyConflictWire is e on the wire. Its message says how to change the
// schedule that has the key: a PATCH of its URL, which a declared
// schedule's service undoes when it next declares it.
func (h *Handler) keyConflictWire(e *schedule.KeyConflictError) *keyConflictJSON {
	rule := ruleDiffs(e.Diffs)
	out := &keyConflictJSON{ID: e.ID, Owner: e.Owner, Key: e.Key, DeclaredBy: e.DeclaredBy, Diffs: make([]schedule.FieldDiff, len(rule))}
	diffs := make([]string, len(rule))
	for i, d := range rule {
		d.Field = apiName(d.Field)
		out.Diffs[i], diffs[i] = d, d.String()
	}
	ref := schedule.ByKey(e.Owner, e.Key)
	patch := "PATCH " + h.prefix + "/api" + refPath(ref, "")
	what := fmt.Sprintf("key %q of owner %q names schedule %s", e.Key, e.Owner, e.ID)
	todo := "to change that schedule, " + patch + " with the fields to change; or give this one another key"
	if e.DeclaredBy != "" {
		what += ", declared by service " + e.DeclaredBy
		todo = fmt.Sprintf("its spec is service %s's code, so change it there (a %s lasts only until the service declares it again); or give this one another key", e.DeclaredBy, patch)
	}
	out.Error = fmt.Sprintf("%s, whose spec differs (stored → given): %s; nothing was written; %s", what, strings.Join(diffs, "; "), todo)
	return out
}

// scheduleList is the answer of GET /api/schedules.
type scheduleList struct {
	Schedules []*scheduleJSON `json:"schedules"`
	NextAfter *uuid.UUID      `json:"next_after"`
}

// backfillJSON is schedule.BackfillResult on the wire.
type backfillJSON struct {
	Slots    int            `json:"slots"`
	Started  int            `json:"started"`
	Queued   int            `json:"queued"`
	Existing int            `json:"existing"`
	Rerun    int            `json:"rerun"`
	Skipped  map[string]int `json:"skipped"`
}

func backfillWire(res *schedule.BackfillResult) *backfillJSON {
	out := &backfillJSON{Slots: res.Slots, Started: res.Started, Queued: res.Queued, Existing: res.Existing, Rerun: res.Rerun, Skipped: res.Skipped}
	if out.Skipped == nil {
		out.Skipped = map[string]int{}
	}
	return out
}

// triggered is the answer of POST /api/schedules/{id}/trigger.
type triggered struct {
	RunID uuid.UUID `json:"run_id"`
}

func jsonOrNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
