package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/durfmt"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/workflow"
)

// newWorkflowListCommand is `tributary workflow list`.
func newWorkflowListCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "list [--type <type>] [--status <status>] [--tenant <tenant>] [--schedule <id>] [--limit <n>] [--after <run-id>] [flags]",
		Short: "List runs, newest first",
		Example: `tributary workflow list --status waiting
					tributary workflow list --type process_order --limit 200 --json
					tributary workflow list --tenant acme --status failed`,
	}, setupWorkflowList)
}

func setupWorkflowList(fs *pflag.FlagSet, env *Env) Action {
	typeName := fs.String("type", "", "list only runs of this workflow `type`")
	status := fs.String("status", "", "list only runs in this `status`: pending, running, sleeping, waiting, completed, failed, cancelled or skipped")
	tenant := fs.String("tenant", "", "list only runs of this `tenant` (workflow start --tenant, or a schedule's tenant)")
	scheduleID := fs.String("schedule", "", "list only runs started by the schedule with this `id`")
	limit := fs.Int("limit", defaultListLimit, fmt.Sprintf("list at most `n` runs, at most %d (default %d)", maxListLimit, defaultListLimit))
	after := fs.String("after", "", "list the runs after this `run-id` (the last one of the previous page)")
	parse := func(args []string) (*workflow.ListParams, error) {
		if err := noArgs(args); err != nil {
			return nil, err
		}
		if err := checkTenantFlag(*tenant); err != nil {
			return nil, err
		}
		params := &workflow.ListParams{Type: *typeName, Tenant: *tenant, Limit: *limit}
		if *status != "" {
			params.Status = workflow.Status(*status)
			if !isRunStatus(params.Status) {
				return nil, withHint(usageErrorf("--status %q is not a run status", *status),
					"use one of pending, running, sleeping, waiting, completed, failed, cancelled or skipped")
			}
		}
		if err := checkLimit(*limit); err != nil {
			return nil, err
		}
		if *scheduleID != "" {
			id, err := parseScheduleID("--schedule", *scheduleID)
			if err != nil {
				return nil, err
			}
			params.ScheduleID = &id
		}
		if *after != "" {
			id, err := parseRunID("--after", *after)
			if err != nil {
				return nil, err
			}
			params.After = &id
		}
		return params, nil
	}
	return dbCommand(fs, env, dbSpec{json: `print the page as JSON, {"runs": […], "next_after": …} as GET /api/runs answers it, instead of a table`}, parse, func(ctx context.Context, c *commandRun, params *workflow.ListParams) error {
		runs, err := c.wf.ListRuns(ctx, params)
		if err != nil {
			return workflowError(err, uuid.Nil)
		}
		if c.asJSON {
			page, err := wire.RunPage(ctx, c.wf, runs, *limit)
			if err != nil {
				return workflowError(err, uuid.Nil)
			}
			return printJSON(env.Stdout, page)
		}
		return printListing(env, runs, *limit, "runs",
			func(r *workflow.Run) uuid.UUID { return r.ID },
			func(w io.Writer) error { return printRunsTable(w, runs, time.Now()) })
	})
}

func printRunsTable(w io.Writer, runs []*workflow.Run, now time.Time) error {
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "ID\tTYPE\tTENANT\tSTATUS\tATTEMPT\tCREATED\tFINISHED\tERROR")
	for _, run := range runs {
		fmt.Fprintf(table, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", run.ID, oneLine(run.Type), orDash(oneLine(run.Tenant)), runStatusText(run), run.Attempt, run.MaxAttempts,
			durfmt.Relative(run.CreatedAt, now), relativeTimeOrDash(run.FinishedAt, now), shorten(runErrorText(run.Error), errorColumnWidth))
	}
	return table.Flush()
}

// runStatusText is a run's status, "pending (held)" for a run held back
// by its tenant's limit, "pending (rate-limited)" for one waiting for its
// tenant's rate.
func runStatusText(run *workflow.Run) string {
	switch {
	case run.Status != workflow.StatusPending || run.Held == "":
		return string(run.Status)
	case run.Held == workflow.HeldTenantRate:
		return string(run.Status) + " (rate-limited)"
	}
	return string(run.Status) + " (held)"
}
