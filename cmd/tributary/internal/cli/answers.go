package cli

import (
	"context"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// The CLI's --json prints what the API answers (internal/wire): a run as
// GET /api/runs/{id} answers it, a schedule as GET /api/schedules/{id}
// does, a listing as the API's listing.

// printRunAnswer prints run as the API answers about it: with its steps
// and, held, why it waits (wire.RunAnswer); existing, for a start's
// answer, says whether it started nothing (nil: not a start).
func printRunAnswer(ctx context.Context, env *Env, wf *workflow.Client, run *workflow.Run, existing *bool) error {
	out, err := wire.RunAnswer(ctx, wf, run)
	if err != nil {
		return workflowError(err, run.ID)
	}
	out.Existing = existing
	return printJSON(env.Stdout, out)
}

// printScheduleAnswer prints s as the API answers about it: with its next
// fire times and whether a live worker serves its workflow type
// (wire.ScheduleAnswer); existing, for a create's answer, says whether it
// created nothing (nil: not a create).
func printScheduleAnswer(ctx context.Context, env *Env, sc *schedule.Client, wf *workflow.Client, s *schedule.Schedule, existing *bool) error {
	out, err := wire.ScheduleAnswer(ctx, sc, wf, s)
	if err != nil {
		return scheduleError(err, schedule.ByID(s.ID))
	}
	out.Existing = existing
	return printJSON(env.Stdout, out)
}
