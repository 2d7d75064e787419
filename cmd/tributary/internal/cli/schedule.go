package cli

import "github.com/spf13/cobra"

// newScheduleCommand is the `tributary schedule` group, one file a command
// (schedule_create.go, schedule_list.go, …), with what several of them
// share in schedule_shared.go.
//
// The commands that use the database (all but next) work through a
// schedule.Client bound to an insert-only workflow client, which registers
// no workflow types (so create takes any workflow type name: the CLI can't
// know which types a service registers) and works no jobs: a slot's River
// job, which create and resume insert, is fired by a service that runs a
// schedule.Client.
//
// trigger and backfill start runs through that client too: a run takes the
// run policy (max attempts, queue, priority, timeout) the schedule sets,
// and where it sets none Tributary's defaults (10 attempts, queue
// "default", priority 1), not the workflow type's own, which only the
// service knows.
func newScheduleCommand(env *Env) *cobra.Command {
	return group(&cobra.Command{
		Use:     "schedule",
		Short:   "Work with cron schedules",
		Example: `tributary schedule next --cron "30 2 * * *" --tz America/New_York`,
	},
		newScheduleCreateCommand(env),
		newScheduleListCommand(env),
		newScheduleGetCommand(env),
		newSchedulePauseCommand(env),
		newScheduleResumeCommand(env),
		newScheduleDeleteCommand(env),
		newScheduleUpdateCommand(env),
		newScheduleTriggerCommand(env),
		newScheduleBackfillCommand(env),
		newScheduleBulkCommand(env),
		newScheduleHistoryCommand(env),
		newScheduleNextCommand(env),
	)
}
