package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/runmeta"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/workflow"

	"github.com/tributary-go/tributary/schedule"
)

// newScheduleHistoryCommand is `tributary schedule history`.
func newScheduleHistoryCommand(env *Env) *cobra.Command {
	return refCommand(env, &cobra.Command{
		Use:   "history " + scheduleRefUsage + " [--status <status>] [--limit <n>] [--after <run-id>] [flags]",
		Short: "List a schedule's runs, newest first: the slots that ran or were skipped (and why), and the triggered runs",
		Example: `tributary schedule history 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e
			tributary schedule history nightly-report --owner acme --status skipped --json`,
	}, setupScheduleHistory)
}

func setupScheduleHistory(fs *pflag.FlagSet, env *Env) Action {
	refFlags := addRefFlags(fs)
	status := fs.String("status", "", "list only runs in this `status`: pending, running, sleeping, waiting, completed, failed, cancelled or skipped")
	limit := fs.Int("limit", defaultListLimit, fmt.Sprintf("list at most `n` runs, at most %d (default %d)", maxListLimit, defaultListLimit))
	after := fs.String("after", "", "list the runs after this `run-id` (the last one of the previous page)")
	parse := func(args []string) (*historyQuery, error) {
		ref, err := refFlags.ref("history", args)
		if err != nil {
			return nil, err
		}
		params := &workflow.ListParams{Status: workflow.Status(*status), Limit: *limit}
		if *status != "" && !isRunStatus(params.Status) {
			return nil, withHint(usageErrorf("--status %q is not a run status", *status),
				"use one of pending, running, sleeping, waiting, completed, failed, cancelled or skipped")
		}
		if err := checkLimit(*limit); err != nil {
			return nil, err
		}
		if *after != "" {
			runID, err := parseRunID("--after", *after)
			if err != nil {
				return nil, err
			}
			params.After = &runID
		}
		return &historyQuery{ref: ref, params: params}, nil
	}
	return dbCommand(fs, env, dbSpec{json: `print the page as JSON, {"runs": […], "next_after": …} as 'workflow list --json' does, instead of a table`, schedules: true}, parse, func(ctx context.Context, c *commandRun, q *historyQuery) error {
		ref, params := q.ref, q.params
		// History lists nothing for an unknown schedule; Get tells it apart,
		// and gives the zone to show fire times in.
		s, err := c.sc.Get(ctx, ref)
		if err != nil {
			return scheduleError(err, ref)
		}
		runs, err := c.sc.History(ctx, schedule.ByID(s.ID), params)
		if err != nil {
			return runsError(err, schedule.ByID(s.ID), "")
		}
		if c.asJSON {
			page, err := wire.RunPage(ctx, c.wf, runs, *limit)
			if err != nil {
				return runsError(err, schedule.ByID(s.ID), "")
			}
			return printJSON(env.Stdout, page)
		}
		return printListing(env, runs, *limit, "runs",
			func(r *workflow.Run) uuid.UUID { return r.ID },
			func(w io.Writer) error { return printHistoryTable(w, runs, scheduleLocation(s), time.Now()) })
	})
}

// printHistoryTable prints a schedule's runs, their fire times in the
// schedule's zone loc.
func printHistoryTable(w io.Writer, runs []*workflow.Run, loc *time.Location, now time.Time) error {
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "RUN\tFIRE AT\tSTATUS\tSKIP REASON\tATTEMPT\tFINISHED\tNOTE")
	for _, run := range runs {
		fireAt := "-"
		if run.FireAt != nil {
			fireAt = zonedTime(*run.FireAt, loc)
		}
		fmt.Fprintf(table, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\n", run.ID, fireAt, run.Status, orDash(oneLine(run.SkipReason)),
			run.Attempt, run.MaxAttempts, relativeTimeOrDash(run.FinishedAt, now), historyNote(run.Metadata))
	}
	return table.Flush()
}

// historyNote explains a run of a schedule from its metadata: "triggered"
// for a run of `schedule trigger`, and what daylight saving time did to its
// slot.
func historyNote(metadata json.RawMessage) string {
	meta := runmeta.Decode(metadata) // metadata that can't be read has no note
	var notes []string
	if meta.Trigger {
		notes = append(notes, "triggered")
	}
	if meta.DSTNote != "" {
		notes = append(notes, meta.DSTNote)
	}
	return orDash(oneLine(strings.Join(notes, "; ")))
}

// historyQuery is what `schedule history` is asked: the schedule and the
// page of its runs.
type historyQuery struct {
	ref    schedule.Ref
	params *workflow.ListParams
}
