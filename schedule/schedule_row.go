package schedule

import (
	"errors"
	"strings"
	"time"

	"github.com/tributary-go/tributary/internal/engine"
)

// scheduleOf converts an engine row into a Schedule, and engine.ErrNotFound
// into ErrNotFound.
func scheduleOf(row *engine.Schedule, err error) (*Schedule, error) {
	if errors.Is(err, engine.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	s := &Schedule{}
	fillSchedule(s, row)
	return s, nil
}

// schedulesOf converts engine rows into Schedules, with one allocation for
// all of them: a firing batch converts up to fireBatchSize at once.
func schedulesOf(rows []engine.Schedule, err error) ([]*Schedule, error) {
	if err != nil {
		return nil, err
	}
	all := make([]Schedule, len(rows))
	out := make([]*Schedule, len(rows))
	for i := range rows {
		fillSchedule(&all[i], &rows[i])
		out[i] = &all[i]
	}
	return out, nil
}

func fillSchedule(s *Schedule, r *engine.Schedule) {
	*s = Schedule{
		ID: r.ID, Name: r.Name, Description: r.Description, Owner: r.Owner, Workflow: r.Type, Input: r.Input,
		Cron: r.Cron, TimeZone: r.TimeZone, StartAt: r.StartAt, EndAt: r.EndAt,
		Overlap:       OverlapPolicy(r.OverlapPolicy),
		CatchUpWindow: time.Duration(r.CatchUpWindowMS) * time.Millisecond,
		CatchUp:       CatchUpPolicy(r.CatchUpPolicy),
		DSTGap:        DSTGap(r.DSTGap), DSTFold: DSTFold(r.DSTFold),
		Calendars: r.Calendars, OnExcluded: OnExcluded(r.OnExcluded),
		MaxAttempts: r.MaxAttempts, Priority: r.Priority, Queue: r.Queue,
		Timeout:  time.Duration(r.TimeoutMS) * time.Millisecond,
		KeepRuns: r.KeepRuns, Paused: r.Paused, PauseNote: r.PauseNote, PausedAt: r.PausedAt,
		NextFireAt: r.NextFireAt, LastFireAt: r.LastFireAt, RunCount: r.RunCount, FailureCount: r.FailureCount,
		LastRunStatus: r.LastRunStatus, GrantID: r.GrantID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Key: r.Key, DeclaredBy: r.DeclaredBy, UndeclaredAt: r.UndeclaredAt, CreatedBy: r.CreatedBy,
		Tenant: r.RunTenant, nextCatchUp: r.NextFireCatchUp, Retry: retryOf(r.Retry), retryJSON: r.Retry,
	}
	if strings.HasPrefix(r.Cron, rrulePrefix) {
		s.Cron, s.RRule = "", r.Cron // one column holds either
	}
}
