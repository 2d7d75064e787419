package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/bench"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/workflow"
)

// confirmBulkAbove is the number of runs (or schedules) a bulk command
// changes without asking, or without --yes.
const confirmBulkAbove = 10

// newWorkflowBulkCommand is `tributary workflow bulk`, whose cancel, retry
// and fork act on every run a filter matches (workflow.Client.CancelRuns,
// RetryRuns and ForkRuns).
func newWorkflowBulkCommand(env *Env) *cobra.Command {
	return group(&cobra.Command{
		Use:   "bulk",
		Short: "Cancel, retry or fork every run that matches a filter, in batches",
		Example: `tributary workflow bulk cancel --type send_report --status pending --dry-run
			tributary workflow bulk retry --status failed --error "timed out" --finished-after 2026-03-08T00:00:00Z --yes
			tributary workflow bulk fork --from-step charge --type checkout --status failed --error "card declined" --yes`,
	},
		newWorkflowBulkActionCommand(env, workflow.BulkCancel, "Cancel every run that matches the filter, as workflow cancel cancels one"),
		newWorkflowBulkActionCommand(env, workflow.BulkRetry, "Retry every failed or cancelled run that matches the filter, as workflow retry retries one"),
		newWorkflowBulkActionCommand(env, workflow.BulkFork, "Fork every finished run that matches the filter from a step, as workflow fork forks one"),
	)
}

func newWorkflowBulkActionCommand(env *Env, action workflow.BulkAction, short string) *cobra.Command {
	use, long, example := string(action), "", ""
	if action == workflow.BulkFork {
		use += " --from-step <name>"
		long = `

Each finished run that recorded the step --from-step gets a fork: a new run
that copies the steps completed before it and runs it and what follows with
the code deployed now. Runs not finished, and runs that never reached the
step, are skipped. The runs matched are left as they are.`
		example = " --from-step <name>"
	}
	return command(env, &cobra.Command{
		Use:   use + " [--type <type>] [--status <status>] [--tenant <tenant>] [--schedule <id>] [--error <text>] [--dry-run] [--yes] [flags]",
		Short: short,
		Long: `Acts on every run that matches the filter (the flags of 'workflow list', and
more), in batches of --batch-size runs, each committed on its own: no lock is
held between batches, and an interrupt stops between them, printing what was
done. --dry-run counts the runs and changes nothing. A real run over more than
10 runs asks first, or takes --yes; over --max-runs it is refused.` + long,
		Example: fmt.Sprintf(`tributary workflow bulk %[1]s%[2]s --type send_report --tenant acme --dry-run
			tributary workflow bulk %[1]s%[2]s --type send_report --tenant acme --yes --json`, action, example),
	}, func(fs *pflag.FlagSet, env *Env) Action { return setupWorkflowBulk(fs, env, action) })
}

func setupWorkflowBulk(fs *pflag.FlagSet, env *Env, action workflow.BulkAction) Action {
	typeName := fs.String("type", "", "only runs of this workflow `type`")
	status := fs.String("status", "", "only runs in this `status`: pending, running, sleeping, waiting, completed, failed, cancelled or skipped")
	tenant := fs.String("tenant", "", "only runs of this `tenant`")
	scheduleID := fs.String("schedule", "", "only runs started by the schedule with this `id`")
	key := fs.String("key", "", "only the run started with this idempotency `key`")
	errorText := fs.String("error", "", "only runs whose error message contains this `text` (ignoring case)")
	createdAfter := fs.String("created-after", "", "only runs created at or after this `time` (RFC 3339)")
	createdBefore := fs.String("created-before", "", "only runs created before this `time` (RFC 3339)")
	finishedAfter := fs.String("finished-after", "", "only runs finished at or after this `time` (RFC 3339)")
	finishedBefore := fs.String("finished-before", "", "only runs finished before this `time` (RFC 3339)")
	dryRun := fs.Bool("dry-run", false, "count the runs that match, by status, and change nothing")
	yes := fs.Bool("yes", false, fmt.Sprintf("do not ask before acting on more than %d runs", confirmBulkAbove))
	maxRuns := fs.Int("max-runs", workflow.DefaultBulkMaxRuns, "refuse when the filter matches more than `n` runs")
	batchSize := fs.Int("batch-size", workflow.DefaultBulkBatchSize, "act on `n` runs a transaction")
	var fromStep *string
	if action == workflow.BulkFork {
		fromStep = fs.String("from-step", "", "fork each run from the step of this `name` (required), as 'workflow get' shows it")
	}
	parse := func(args []string) (*workflow.BulkParams, error) {
		if err := noArgs(args); err != nil {
			return nil, err
		}
		if err := checkTenantFlag(*tenant); err != nil {
			return nil, err
		}
		if fromStep != nil && *fromStep == "" {
			return nil, withHint(usageErrorf("workflow bulk fork needs --from-step"), "name the step to fork each run from, as 'tributary workflow get RUN' lists a run's steps")
		}
		p := &workflow.BulkParams{
			Filter:        workflow.ListParams{Type: *typeName, Tenant: *tenant, IdempotencyKey: *key, Status: workflow.Status(*status)},
			ErrorContains: *errorText, MaxRuns: *maxRuns, BatchSize: *batchSize,
		}
		if *status != "" && !isRunStatus(p.Filter.Status) {
			return nil, withHint(usageErrorf("--status %q is not a run status", *status),
				"use one of pending, running, sleeping, waiting, completed, failed, cancelled or skipped")
		}
		if *scheduleID != "" {
			id, err := parseScheduleID("--schedule", *scheduleID)
			if err != nil {
				return nil, err
			}
			p.Filter.ScheduleID = &id
		}
		var err error
		if p.Filter.CreatedAfter, err = parseFlagTime("created-after", *createdAfter); err != nil {
			return nil, err
		}
		if p.Filter.CreatedBefore, err = parseFlagTime("created-before", *createdBefore); err != nil {
			return nil, err
		}
		if p.FinishedAfter, err = parseFlagTime("finished-after", *finishedAfter); err != nil {
			return nil, err
		}
		if p.FinishedBefore, err = parseFlagTime("finished-before", *finishedBefore); err != nil {
			return nil, err
		}
		if *maxRuns < 1 {
			return nil, usageErrorf("--max-runs %d is not a positive number", *maxRuns)
		}
		return p, nil
	}
	spec := dbSpec{json: "print the result as JSON, as POST /api/runs/bulk answers it (with the ids of the runs changed and skipped)"}
	return dbCommand(fs, env, spec, parse, func(ctx context.Context, c *commandRun, p *workflow.BulkParams) error {
		run := c.wf.CancelRuns
		switch action {
		case workflow.BulkRetry:
			run = c.wf.RetryRuns
		case workflow.BulkFork:
			run = func(ctx context.Context, p *workflow.BulkParams) (*workflow.BulkResult, error) {
				return c.wf.ForkRuns(ctx, p, *fromStep)
			}
		}

		// Count first: a dry run is the answer; a real run says what it will
		// do before it does it.
		p.DryRun = true
		count, err := run(ctx, p)
		if err != nil {
			return bulkError(err, action)
		}
		if *dryRun {
			if c.asJSON {
				return printJSON(env.Stdout, wire.NewBulk(count))
			}
			_, err := fmt.Fprintf(env.Stdout, "%s; nothing was changed (dry run)\n", bulkCountText(count))
			return err
		}
		switch {
		case count.Matched == 0:
			return withHint(fmt.Errorf("no run matches the filter, so nothing to %s", action), "check the filter with 'tributary workflow list' and the same flags")
		case count.Matched > *maxRuns:
			return bulkError(&workflow.TooManyRunsError{Action: action, Matched: count.Matched, MaxRuns: *maxRuns}, action)
		case count.Eligible > confirmBulkAbove && !*yes:
			if err := confirmBulk(env, bulkCountText(count)); err != nil {
				return err
			}
		}

		p.DryRun = false
		p.Progress = func(r *workflow.BulkResult) {
			fmt.Fprintf(env.Stderr, "batch %d: %s changed, %s skipped so far (of %s matched)\n", r.Batches,
				bench.FormatCount(float64(len(r.Changed))), bench.FormatCount(float64(len(r.Skipped))), bench.FormatCount(float64(count.Matched)))
		}
		res, err := run(ctx, p)
		if res != nil && err != nil && res.Batches > 0 {
			// Stopped midway: say what was done before the error.
			fmt.Fprintf(env.Stderr, "stopped: %s\n", bulkDoneText(res))
		}
		if err != nil {
			return bulkError(err, action)
		}
		if c.asJSON {
			return printJSON(env.Stdout, wire.NewBulk(res))
		}
		_, err = fmt.Fprintln(env.Stdout, bulkDoneText(res))
		return err
	})
}

// bulkPastTense is what a bulk action did, for messages.
var bulkPastTense = map[workflow.BulkAction]string{workflow.BulkCancel: "cancelled", workflow.BulkRetry: "retried", workflow.BulkFork: "forked"}

// bulkCountText says what a dry run counted: "would cancel 1,200 of 1,234
// runs matching (34 left as they are: completed 30, failed 4)".
func bulkCountText(r *workflow.BulkResult) string {
	text := fmt.Sprintf("would %s %s of %s runs matching", r.Action, bench.FormatCount(float64(r.Eligible)), bench.FormatCount(float64(r.Matched)))
	if r.Action == workflow.BulkFork {
		text += fmt.Sprintf(" from step %q", r.FromStep)
	}
	skip := r.Matched - r.Eligible
	if skip == 0 {
		return text
	}
	return text + fmt.Sprintf(" (%s left as they are: %s)", bench.FormatCount(float64(skip)), countsText(r.Left()))
}

// countsText is counts as "completed 30, failed 4".
func countsText(counts []workflow.BulkCount) string {
	parts := make([]string, len(counts))
	for i, c := range counts {
		parts[i] = c.Why + " " + bench.FormatCount(float64(c.N))
	}
	return strings.Join(parts, ", ")
}

// bulkDoneText says what a bulk action did: "cancelled 1,200 runs; skipped
// 34 (already finished 34)".
func bulkDoneText(r *workflow.BulkResult) string {
	text := fmt.Sprintf("%s %s runs", bulkPastTense[r.Action], bench.FormatCount(float64(len(r.Changed))))
	if r.Action == workflow.BulkFork {
		text += fmt.Sprintf(" from step %q", r.FromStep)
	}
	if len(r.Skipped) > 0 {
		text += fmt.Sprintf("; skipped %s (%s)", bench.FormatCount(float64(len(r.Skipped))), countsText(r.SkippedByReason()))
	}
	return text
}

// bulkError is the message of a bulk action's error, with what to do.
func bulkError(err error, action workflow.BulkAction) error {
	var tooMany *workflow.TooManyRunsError
	switch {
	case errors.As(err, &tooMany):
		return withHint(fmt.Errorf("the filter matches %s runs, more than --max-runs %s, so nothing was %s", bench.FormatCount(float64(tooMany.Matched)),
			bench.FormatCount(float64(tooMany.MaxRuns)), bulkPastTense[action]), fmt.Sprintf("narrow the filter, or pass --max-runs %d", tooMany.Matched))
	case errors.Is(err, workflow.ErrInvalid):
		return usageErrorf("%s", strings.TrimPrefix(err.Error(), "workflow: "))
	}
	return workflowError(err, uuid.Nil)
}

// confirmBulk asks the person at the terminal to confirm what (a bulk
// action's count), and returns nil only when they type "yes". Without a
// terminal it refuses and points at --yes.
func confirmBulk(env *Env, what string) error {
	if env.Interactive == nil || !env.Interactive() || env.Stdin == nil {
		return withHint(usageErrorf("this %s", what), "nothing was changed: pass --yes to confirm, or run it at a terminal to be asked")
	}
	fmt.Fprintf(env.Stderr, "This will %s.\nType yes to go on: ", strings.TrimPrefix(what, "would "))
	answer, err := bufio.NewReader(env.Stdin).ReadString('\n')
	if err != nil && answer == "" {
		return withHint(errors.New("no confirmation read, so nothing was changed"), "type yes, or pass --yes")
	}
	if strings.TrimSpace(answer) != "yes" {
		return withHint(errors.New("not confirmed, so nothing was changed"), "type yes, or pass --yes")
	}
	return nil
}
