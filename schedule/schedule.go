package schedule

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/workflow"
)

// ErrNotFound is returned for a schedule that does not exist (or no longer
// does).
var ErrNotFound = errors.New("schedule: schedule not found")

// ValidationError reports a bad field of Params. Nothing was written when it
// is returned. It matches ErrInvalid.
type ValidationError struct {
	// Field names the field, such as "Name" or "EndAt".
	Field string
	// Problem says what is wrong and what to do.
	Problem string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("schedule: invalid %s: %s", e.Field, e.Problem)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// OverlapPolicy says what a slot does when the schedule's previous run has
// not finished.
type OverlapPolicy string

// Overlap policies.
const (
	// OverlapAllow starts the new run alongside the previous one.
	OverlapAllow OverlapPolicy = "allow"
	// OverlapSkip records the slot as skipped with reason "overlap".
	OverlapSkip OverlapPolicy = "skip"
	// OverlapQueue starts the slot's run when the previous run finishes. At
	// most one run waits: a slot that finds one already waiting is skipped
	// with reason "overlap".
	OverlapQueue OverlapPolicy = "queue"
	// OverlapReplace cancels the unfinished runs (see workflow.Client.Cancel)
	// and starts the new one.
	OverlapReplace OverlapPolicy = "replace"
)

// overlapOverride returns override, or current when override is empty, and
// an error naming field when override is not an overlap policy.
func overlapOverride(field string, current, override OverlapPolicy) (OverlapPolicy, error) {
	switch override {
	case "":
		return current, nil
	case OverlapAllow, OverlapSkip, OverlapQueue, OverlapReplace:
		return override, nil
	}
	return "", &ValidationError{Field: field, Problem: fmt.Sprintf("%q is not an overlap policy; use skip, allow, queue or replace", override)}
}

// Skip reasons recorded on a skipped slot's run. SkipReasonCannotStart and
// SkipReasonCannotFire begin a reason whose rest says what went wrong:
// "cannot start: input is 4108 bytes encoded, the limit is 1024 …".
const (
	SkipReasonMissed  = "missed"
	SkipReasonOverlap = "overlap"
	// SkipReasonDSTGap: the slot's wall time did not exist (the clocks
	// jumped over it) and the schedule's DST policy is DSTGapSkip; the
	// run's metadata (the ledger's note) says which time and day.
	SkipReasonDSTGap = "dst gap"
	// SkipReasonExcluded: the slot's date is excluded by one of the
	// schedule's calendars and its OnExcluded is ExcludedSkip; the run's
	// metadata (the ledger's note) names the calendar and the date.
	SkipReasonExcluded = "excluded"
	// SkipReasonCannotStart: the workflow engine refused the run (its input
	// is over the working client's limit, its run policy is invalid).
	SkipReasonCannotStart = "cannot start"
	// SkipReasonCannotFire: firing the slot failed (a database error, a
	// cron or time zone that no longer evaluates); the chain goes on.
	SkipReasonCannotFire = "cannot fire"
)

// CatchUpPolicy says what a slot found late (beyond the catch-up window)
// does.
type CatchUpPolicy string

// Catch-up policies.
const (
	// CatchUpWindow records a late slot as skipped ("missed") and moves the
	// chain to the next future slot. Slots within the window fire, each
	// once, oldest first.
	CatchUpWindow CatchUpPolicy = "window"
	// CatchUpLatest runs only the most recent missed slot, once; older
	// missed slots are recorded as skipped.
	CatchUpLatest CatchUpPolicy = "latest"
)

// MissedPolicy says what Resume does with the slots missed while a
// schedule was paused.
type MissedPolicy string

// Missed-slot policies for Resume.
const (
	// MissedSkip skips them: the chain restarts at the next future slot.
	MissedSkip MissedPolicy = "skip"
	// MissedLatest runs the most recent missed slot once, now.
	MissedLatest MissedPolicy = "latest"
	// MissedBackfill runs each missed slot once (see Backfill).
	MissedBackfill MissedPolicy = "backfill"
)

// DefaultCatchUpWindow is how late a slot may fire and still run. A slot
// found later than that (after downtime) is recorded as skipped with reason
// "missed", and the chain moves to the next future slot: a cold start never
// mass-fires (SKIP_MISSED_BY_DEFAULT).
const DefaultCatchUpWindow = time.Minute

// MaxKeepRuns bounds Params.KeepRuns.
const MaxKeepRuns = 1_000_000

// Params describe a schedule to create.
type Params struct {
	// Name is shown to operators. Required, at most 200 bytes.
	Name string
	// Description is free text. Optional.
	Description string
	// Owner is the tenant or user the schedule belongs to, so that one
	// service can hold schedules for many users; List filters by it. It is
	// the tenant of the schedule's runs too, unless Tenant names another.
	Owner string
	// Tenant is the tenant of the runs the schedule starts
	// (workflow.StartOpts.Tenant; workflow.Run.Tenant): every slot's run,
	// triggered run and backfilled run carries it, and ListRuns filters
	// on it. A valid tenant name (workflow.CheckTenant: 1 to 100 bytes of
	// printable UTF-8, no space at either end) or "".
	//
	// Defaults to "": the schedule's Owner, so that per-user schedules
	// start per-user runs with no setting. A schedule whose Owner is ""
	// starts runs without a tenant, and so does one whose Owner is not a
	// valid tenant name (longer than 100 bytes, say): set Tenant for it.
	// Schedule.RunTenant says which tenant applies.
	Tenant string
	// Key, when set, names the schedule within its Owner, so that code
	// that creates it at every start-up makes it once: keys are unique per
	// owner (two owners may each have a "digest"), and Create with a key
	// the owner has already makes nothing and returns that schedule, with
	// Existing set, or a *KeyConflictError when its spec differs. Get,
	// Update, Pause, Resume, Delete, Trigger, Backfill, History and Next
	// find a schedule by ByKey(owner, key) as well as by ByID(id). A key
	// never changes after Create, and neither does the owner of a keyed
	// schedule: the two are its name.
	//
	// At most 200 bytes, of printable characters other than spaces and
	// "/" (it goes in URLs), and not shaped like a schedule id (a UUID),
	// since the CLI, the API and the dashboard take either in one place.
	// Defaults to "": no key, and every Create makes a new schedule.
	Key string
	// CreatedBy says where the schedule was made, for operators reading
	// it later: the CLI sets "cli", the JSON API "api" and the dashboard
	// "dashboard". Optional, at most 200 bytes; "" is application code.
	// Declared schedules say instead which service declared them
	// (Schedule.DeclaredBy).
	CreatedBy string

	// Workflow is the workflow type each slot starts. When the client's
	// workflow client has registered types, it must be one of them.
	Workflow string
	// Input is the workflow input, encoded as JSON.
	Input any

	// Cron is the cron expression (see ParseSpec). A schedule has a Cron
	// or an RRule, not both.
	Cron string
	// RRule is an RFC 5545 recurrence rule in place of Cron (see
	// ParseRRule): a DTSTART line, the first occurrence's local time, and
	// an RRULE line, such as "DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;
	// INTERVAL=2;BYDAY=TU". Its slots have the DST policy, catch-up,
	// overlap and ledger of a cron schedule's.
	RRule string
	// TimeZone is an IANA zone name. Defaults to "" (UTC).
	TimeZone string
	// StartAt, when set, is the earliest time a slot may fire.
	StartAt time.Time
	// EndAt, when set, is after the last slot; it must be after StartAt.
	EndAt time.Time

	// Overlap is what a slot does while the previous run is unfinished.
	// Defaults to OverlapSkip.
	Overlap OverlapPolicy
	// CatchUpWindow is how late a slot may fire and still run. Defaults to
	// DefaultCatchUpWindow; a negative value means 0.
	CatchUpWindow time.Duration
	// CatchUp is what a slot found later than the window does. Defaults to
	// CatchUpWindow (skip it).
	CatchUp CatchUpPolicy

	// DSTGap and DSTFold are the schedule's DST policy (see DSTPolicy):
	// what a fixed-time schedule does with a wall time the clocks jump
	// over (DSTGapJump, the default: right after the jump; DSTGapShift:
	// later by the jump's length; DSTGapSkip: no run, the slot recorded as
	// skipped with reason SkipReasonDSTGap) and with one that occurs twice
	// (DSTFoldFirst, the default; DSTFoldLast; DSTFoldBoth: two runs). A
	// schedule that is not fixed-time follows elapsed time whatever its
	// policy.
	DSTGap  DSTGap
	DSTFold DSTFold

	// Calendars name the holiday calendars (CreateCalendar) whose dates
	// the schedule excludes; each must exist. OnExcluded is what a slot on
	// an excluded date does: ExcludedSkip (the default) records it as
	// skipped, naming the calendar and the date (SkipReasonExcluded);
	// ExcludedNextBusinessDay moves it to the same wall time on the next
	// Monday-to-Friday date not excluded (see Spec.WithExclusions).
	Calendars  []string
	OnExcluded OnExcluded

	// MaxAttempts, Priority, Queue and Timeout are the run policy of the
	// runs started; zero leaves the workflow type's DefineOpts. Those are
	// known only to a process that registers the type: slots fired by one
	// that does not (tributary serve, the CLI's trigger) use Tributary's
	// defaults (10 attempts, queue "default", priority 1). Set them here when
	// the type uses another queue.
	MaxAttempts int
	Priority    int
	Queue       string
	Timeout     time.Duration

	// Retry is the retry policy of the schedule's runs (see
	// workflow.RetryPolicy): it replaces the workflow type's
	// DefineOpts.Retry, whole, for every run the schedule starts (a slot's,
	// a trigger's, a backfill's). The policy is written on each run's job
	// when the run starts; an Update applies to the runs started after it.
	// A process that fires slots without registering the type writes the
	// schedule's policy all the same.
	//
	// Defaults to nil, as does the zero RetryPolicy: the type's policy.
	Retry *workflow.RetryPolicy

	// Paused creates the schedule paused, with PauseNote.
	Paused    bool
	PauseNote string

	// GrantID, when set, runs the schedule under an execution grant: a slot
	// whose grant is revoked, expired or out of scope is recorded as
	// skipped with the reason, and the chain goes on. The workflow reads the
	// grant's subject from workflow.RunInfo.GrantSubject.
	GrantID *uuid.UUID

	// KeepRuns is how many of the schedule's latest runs (by slot) the
	// workflow client's run retention keeps whatever their age
	// (workflow.Config.CompletedRunRetention and FailedRunRetention
	// delete older finished runs): an audit trail of the last N slots of a
	// monthly report, say. Runs beyond the last KeepRuns follow the
	// retention.
	//
	// Defaults to 0: every finished run follows the retention. At most
	// MaxKeepRuns.
	KeepRuns int

	// RequireWorker refuses to create the schedule, with a
	// *workflow.NoWorkerError and nothing written, when no live client
	// serves Workflow (see workflow.Client.TypeServed). Without it the
	// schedule is created; its runs stay pending until a client that serves
	// the type starts, and `schedule get`, the API and the dashboard flag
	// it. Not stored: it applies to this call only.
	RequireWorker bool
}

// Schedule is a schedule as stored. Its json tags are for a program that
// marshals a Schedule itself and are kept as they are; Tributary's own
// JSON of a schedule (the API's and the CLI's --json) is another shape,
// described by riverui's OpenAPI document: "workflow" for Workflow,
// "overlap", "catch_up" and "catch_up_window" for the catch-up settings,
// durations as Go duration strings ("1m0s") where these tags write
// nanoseconds, every field present.
type Schedule struct {
	ID            uuid.UUID       `json:"id"`
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	Owner         string          `json:"owner"`
	Workflow      string          `json:"workflow_type"`
	Input         json.RawMessage `json:"input"`
	Cron          string          `json:"cron"`
	RRule         string          `json:"rrule,omitempty"`
	TimeZone      string          `json:"time_zone"`
	StartAt       *time.Time      `json:"start_at,omitempty"`
	EndAt         *time.Time      `json:"end_at,omitempty"`
	Overlap       OverlapPolicy   `json:"overlap_policy"`
	CatchUpWindow time.Duration   `json:"catchup_window"`
	CatchUp       CatchUpPolicy   `json:"catchup_policy"`
	DSTGap        DSTGap          `json:"dst_gap"`
	DSTFold       DSTFold         `json:"dst_fold"`
	Calendars     []string        `json:"calendars,omitempty"`
	OnExcluded    OnExcluded      `json:"on_excluded"`
	MaxAttempts   int             `json:"max_attempts,omitempty"`
	Priority      int             `json:"priority,omitempty"`
	Queue         string          `json:"queue,omitempty"`
	Timeout       time.Duration   `json:"timeout,omitempty"`
	// Retry is the retry policy of the schedule's runs (Params.Retry);
	// nil for the workflow type's.
	Retry         *workflow.RetryPolicy `json:"retry,omitempty"`
	KeepRuns      int                   `json:"keep_runs,omitempty"`
	Paused        bool                  `json:"paused"`
	PauseNote     string                `json:"pause_note,omitempty"`
	PausedAt      *time.Time            `json:"paused_at,omitempty"`
	NextFireAt    *time.Time            `json:"next_fire_at,omitempty"`
	LastFireAt    *time.Time            `json:"last_fire_at,omitempty"`
	RunCount      int64                 `json:"run_count"`
	FailureCount  int64                 `json:"failure_count"`
	LastRunStatus string                `json:"last_run_status,omitempty"`
	GrantID       *uuid.UUID            `json:"grant_id,omitempty"`
	CreatedAt     time.Time             `json:"created_at"`
	UpdatedAt     time.Time             `json:"updated_at"`
	// Key is the schedule's name within its Owner (Params.Key); "" for none.
	Key string `json:"key,omitempty"`
	// DeclaredBy is the service whose declaration (Declare) made the
	// schedule and keeps it as that service's code says; "" for one made
	// by Create, which no declaration changes.
	DeclaredBy string `json:"declared_by,omitempty"`
	// UndeclaredAt is when DeclaredBy stopped declaring the schedule and
	// paused it; nil otherwise.
	UndeclaredAt *time.Time `json:"undeclared_at,omitempty"`
	// CreatedBy is Params.CreatedBy: "cli", "api", "dashboard", or "" for
	// application code.
	CreatedBy string `json:"created_by,omitempty"`
	// Tenant is Params.Tenant as set: "" when the schedule's runs take
	// its owner as their tenant. RunTenant is the tenant that applies.
	Tenant string `json:"tenant,omitempty"`

	// Existing is set on the schedule Create returns when its key matched
	// a schedule made before, with the same spec: nothing was written.
	// It is not stored.
	Existing bool `json:"existing,omitempty"`

	// nextCatchUp marks NextFireAt as the slot the "latest" catch-up policy
	// jumped to: it runs however late it is found.
	nextCatchUp bool
	// retryJSON is Retry as stored, which the schedule's runs' starts
	// carry (wfruntime.ScheduledStart.Retry).
	retryJSON []byte

	// excluded are the dates of Calendars, as the client read them with
	// the schedule (loadCalendars); Spec applies them. calendarsRead
	// reports that it did.
	excluded      []ExcludedDate
	calendarsRead bool
}

// Origin says where the schedule comes from, for operators: "declared by
// service reports" (with "no longer declared since …" once that service
// stopped declaring it), "created by hand with the CLI", "created by hand
// in the dashboard", "created through the JSON API" or "created by
// application code".
func (s *Schedule) Origin() string {
	switch {
	case s.DeclaredBy != "" && s.UndeclaredAt != nil:
		return fmt.Sprintf("declared by service %s, no longer declared since %s", s.DeclaredBy, s.UndeclaredAt.UTC().Format(time.RFC3339))
	case s.DeclaredBy != "":
		return "declared by service " + s.DeclaredBy
	case s.CreatedBy == "":
		return "created by application code"
	case s.CreatedBy == "cli":
		return "created by hand with the CLI"
	case s.CreatedBy == "dashboard":
		return "created by hand in the dashboard"
	case s.CreatedBy == "api":
		return "created through the JSON API"
	}
	return "created by " + s.CreatedBy
}

// Spec parses the schedule's cron expression (or RRULE) in its zone, with
// its DST policy.
//
// With Calendars, the spec excludes their dates as the client read them
// with the schedule (a schedule from Get, List, Create, Update and the
// like); a Schedule made otherwise, or decoded from JSON, has a spec
// without them.
func (s *Schedule) Spec() (*Spec, error) {
	spec, err := parseRule(s.rule(), s.TimeZone)
	if err != nil {
		return nil, err
	}
	if spec, err = spec.WithDST(s.dst()); err != nil || !s.calendarsRead {
		return spec, err
	}
	return spec.WithExclusions(s.excluded, s.OnExcluded)
}

// rule is the schedule's rule as stored: its cron expression, or its
// RRULE (RRule).
func (s *Schedule) rule() string {
	if s.RRule != "" {
		return s.RRule
	}
	return s.Cron
}

// rrulePrefix begins a stored RRULE (a Spec's Expr of one): the column of
// a schedule's rule holds a cron expression or an RRULE, which never
// begins so.
const rrulePrefix = "DTSTART:"

// parseRule parses a stored rule: an RRULE (ParseRRule) when it begins
// with rrulePrefix, a cron expression (ParseSpec) otherwise.
func parseRule(rule, zone string) (*Spec, error) {
	if strings.HasPrefix(rule, rrulePrefix) {
		return ParseRRule(rule, zone)
	}
	return ParseSpec(rule, zone)
}

// dst is the schedule's DST policy.
func (s *Schedule) dst() DSTPolicy { return DSTPolicy{Gap: s.DSTGap, Fold: s.DSTFold} }

// DescribeDST says what the schedule's DST policy does when it is not the
// default: "gap skip (a time the clocks jump over does not run; the slot
// is recorded as skipped), fold first (…)"; "" for the default (jump,
// first), which goes without saying. For a schedule that follows elapsed
// time, it says that the policy does not apply.
func (s *Schedule) DescribeDST() string {
	p, err := s.dst().withDefaults()
	if err != nil || p == (DSTPolicy{Gap: DSTGapJump, Fold: DSTFoldFirst}) {
		return ""
	}
	text := p.Describe()
	if spec, err := s.Spec(); err == nil && !spec.FixedTime() {
		text += "; this schedule follows elapsed time, so it does not apply"
	}
	return text
}

// MissedSlots are the slots paused schedule s missed by now that Resume at
// now, with ResumeOpts.Missed set to missed, runs: none for MissedSkip (or
// ""); the most recent one for MissedLatest; each one, oldest first and at
// most MaxBackfill, for MissedBackfill. A slot was missed when it falls after
// PausedAt, at or before now and before EndAt. Resume computes its slots by
// this method, so a caller reading s before resuming it learns what will run
// (each still subject to the grant, and a resumed latest slot to the
// overlap policy). A schedule that is not paused has none. It returns a
// *ValidationError for a policy that is not one of the three, and the error
// of Spec for a schedule whose expression no longer parses.
func (s *Schedule) MissedSlots(missed MissedPolicy, now time.Time) ([]Occurrence, error) {
	if err := validateMissed(missed); err != nil {
		return nil, err
	}
	if !s.Paused || s.PausedAt == nil || missed == MissedSkip || missed == "" {
		return nil, nil
	}
	spec, err := s.Spec()
	if err != nil {
		return nil, err
	}
	before := func(at time.Time) bool { return s.EndAt == nil || at.Before(*s.EndAt) }
	if missed == MissedLatest {
		// latestSlot finds it however many slots were missed, beyond
		// MaxBackfill too; of a schedule that ended while paused, it is
		// the last slot before the end.
		through := now
		if s.EndAt != nil && !s.EndAt.After(now) {
			through = s.EndAt.Add(-time.Nanosecond)
		}
		latest, ok := latestSlot(spec, *s.PausedAt, through)
		if !ok {
			return nil, nil
		}
		occ, _ := spec.Next(latest.Add(-time.Second))
		return []Occurrence{occ}, nil
	}
	var due []Occurrence
	for _, occ := range spec.NextN(*s.PausedAt, MaxBackfill) {
		if occ.At.After(now) || !before(occ.At) {
			break
		}
		due = append(due, occ)
	}
	return due, nil
}

// validateMissed refuses, with a *ValidationError, a missed-slot policy
// that is not one of MissedSkip, MissedLatest and MissedBackfill; "" is
// MissedSkip.
func validateMissed(missed MissedPolicy) error {
	switch missed {
	case "", MissedSkip, MissedLatest, MissedBackfill:
		return nil
	}
	return &ValidationError{Field: "ResumeOpts.Missed", Problem: fmt.Sprintf("%q is not a policy; use skip, latest or backfill", missed)}
}
