package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-go/tributary/internal/durfmt"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

const (
	// scheduleIDHint says what a schedule id looks like.
	scheduleIDHint = "schedule ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e"

	// grantIDHint says what an execution grant id looks like.
	grantIDHint = "grant ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d01250"

	// zonedLayout is a time in a schedule's zone: "2026-03-08 03:00:00 EDT".
	zonedLayout = time.DateTime + " MST"
)

// scheduleClients connects to the database and returns a schedule client,
// the insert-only workflow client it is bound to (to read runs), and the
// function that closes them.
func (f *databaseFlags) scheduleClients(ctx context.Context) (*schedule.Client, *workflow.Client, func(), error) {
	pool, schema, err := f.pool(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	wf, err := workflow.NewClient(pool, &workflow.Config{Schema: schema, Logger: f.env.Logger})
	if err != nil {
		pool.Close()
		return nil, nil, nil, withHint(err, "fix --schema or TRIBUTARY_SCHEMA")
	}
	sc, err := schedule.New(wf, &schedule.Config{Logger: f.env.Logger})
	if err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	// Inserting a slot's job also arms a timer that would make the job
	// available at its exact time. This client works no jobs and lives for
	// one command, so it is started (which works nothing without River
	// queues) only to be stopped when the command ends, which cancels the
	// timer; a running service fires the slot.
	if err := wf.Start(ctx); err != nil {
		pool.Close()
		return nil, nil, nil, withHint(err, "check the database URL and --schema")
	}
	closeClient := func() {
		_ = wf.Stop(context.WithoutCancel(ctx)) // it works no jobs: nothing to wait for
		pool.Close()
	}
	return sc, wf, closeClient, nil
}

// scheduleError turns an error of the schedule client into one that says
// what to do; ref is the schedule it is about, if any.
func scheduleError(err error, ref schedule.Ref) error {
	if usageErr := refError(err, ref); usageErr != nil {
		return usageErr
	}
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, schedule.ErrNotFound) && ref.Key != "":
		return keyNotFound(ref)
	case errors.Is(err, schedule.ErrNotFound):
		return withHint(fmt.Errorf("no schedule %s", ref.ID), "see 'tributary schedule list'")
	case errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000"): // undefined_table, invalid_schema_name
		return withHint(err, "check --schema or TRIBUTARY_SCHEMA, and that 'tributary migrate up' has run")
	case errors.Is(err, context.Canceled):
		return withHint(err, "the command was interrupted; run it again")
	}
	return withHint(err, "check the database URL and --schema")
}

// paramsError is scheduleError for a call that validates schedule
// settings (Create, Update): its validation errors are mistakes on the
// command line, and hints say which flag to fix for the ones whose message
// does not say what to do.
func paramsError(err error, ref schedule.Ref, hints map[string]string) error {
	if usageErr := refError(err, ref); usageErr != nil {
		return usageErr
	}
	var validation *schedule.ValidationError
	switch {
	case errors.As(err, &validation):
		hint := hints[validation.Field]
		if hint == "" && !strings.Contains(err.Error(), "; ") {
			return &usageError{err: err} // Main adds "see --help"
		}
		return withHint(&usageError{err: err}, hint)
	case errors.Is(err, schedule.ErrInvalid):
		// A *CronError, *ZoneError or *NoOccurrenceError says what to do.
		return withHint(&usageError{err: err}, "fix --cron or --tz")
	}
	return scheduleError(err, ref)
}

// parseScheduleID parses a schedule id given on the command line; what
// names it in the error, such as "--after".
func parseScheduleID(what, s string) (uuid.UUID, error) {
	return parseID("schedule", scheduleIDHint, what, s)
}

// parseFlagTime parses an RFC 3339 time flag; the zero time when unset.
func parseFlagTime(name, value string) (time.Time, error) {
	if value == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return time.Time{}, withHint(usageErrorf("--%s %q is not an RFC 3339 time", name, value),
			"use a time like 2026-03-08T00:00:00Z or 2026-03-08T09:00:00+01:00")
	}
	return t, nil
}

// overlapPolicies lists the overlap policies, for messages.
const overlapPolicies = "skip, allow, queue or replace"

// runsError is scheduleError for a call that starts runs of schedule ref
// (Trigger, Backfill): their validation errors, and the workflow client's
// (an input over its size limit), are mistakes on the command line; hint
// says what to fix when the message does not.
func runsError(err error, ref schedule.Ref, hint string) error {
	if refError(err, ref) == nil && (errors.Is(err, schedule.ErrInvalid) || errors.Is(err, workflow.ErrInvalid)) {
		return withHint(&usageError{err: err}, hint)
	}
	return scheduleError(err, ref)
}

// nextFireText says when s fires next: "it fires next at 2026-03-08
// 03:00:00 EDT (in 3h)".
func nextFireText(s *schedule.Schedule, now time.Time) string {
	switch {
	case s.NextFireAt != nil:
		return "it fires next at " + zonedTime(*s.NextFireAt, scheduleLocation(s)) + " (" + durfmt.RelativeDays(*s.NextFireAt, now) + ")"
	case s.Paused:
		return fmt.Sprintf("it is paused: no slot fires until 'tributary schedule resume %s'", scheduleArgs(s))
	}
	return "it has no slot left before its end"
}

// grantSkipReason is the skip reason schedule.Grant.Check gives a slot of a
// schedule of workflowType under grant g (nil: not found) at now, the
// reason firing records; "" when g allows it.
func grantSkipReason(g *schedule.Grant, workflowType string, now time.Time) string {
	var grantErr *schedule.GrantError
	if errors.As(g.Check(workflowType, now), &grantErr) {
		return grantErr.Reason
	}
	return ""
}

// grantProblem says why grant g does not allow runs of workflowType at
// now: "was revoked 2h ago (left the team)", "expired 3d ago", "does not
// allow workflow type …"; "" when it does.
func grantProblem(g *schedule.Grant, workflowType string, now time.Time) string {
	switch grantSkipReason(g, workflowType, now) {
	case schedule.SkipReasonGrantRevoked:
		text := "was revoked " + durfmt.RelativeDays(*g.RevokedAt, now)
		if g.RevokeReason != "" {
			text += " (" + oneLine(g.RevokeReason) + ")"
		}
		return text
	case schedule.SkipReasonGrantExpired:
		return "expired " + durfmt.RelativeDays(*g.ExpiresAt, now)
	case schedule.SkipReasonGrantOutOfScope:
		return fmt.Sprintf("does not allow workflow type %q (its scopes: %s)", workflowType, strings.Join(g.Scopes, ", "))
	}
	return ""
}

// scheduleLocation is the schedule's time zone, or UTC when it can't be
// loaded (it was valid when the schedule was created).
func scheduleLocation(s *schedule.Schedule) *time.Location {
	loc, err := schedule.LoadZone(s.TimeZone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// zonedTime is t in loc: "2026-03-08 03:00:00 EDT".
func zonedTime(t time.Time, loc *time.Location) string {
	return t.In(loc).Format(zonedLayout)
}
