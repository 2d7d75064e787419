package cli

import (
	"cmp"
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// newScheduleTriggerCommand is `tributary schedule trigger`.
func newScheduleTriggerCommand(env *Env) *cobra.Command {
	return refCommand(env, &cobra.Command{
		Use:   "trigger " + scheduleRefUsage + " [--input <json>] [--overlap <policy>] [flags]",
		Short: "Start a run of a schedule now, outside its cron; its slots are not affected",
		Example: `tributary schedule trigger 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e
			tributary schedule trigger nightly-report --owner acme --input '{"to": "me"}' --overlap allow --json`,
	}, setupScheduleTrigger)
}

func setupScheduleTrigger(fs *pflag.FlagSet, env *Env) Action {
	refFlags := addRefFlags(fs)
	input := fs.String("input", "", "the input of this run, a `JSON` value such as '{\"to\": \"ops\"}', @file.json or - for standard input (default the schedule's)")
	overlap := fs.String("overlap", "", "the overlap `policy` of this run, what it does while a run of the schedule is unfinished: "+overlapPolicies+" (default the schedule's)")
	type trigger struct {
		ref  schedule.Ref
		opts *schedule.TriggerOpts
	}
	parse := func(args []string) (trigger, error) {
		ref, err := refFlags.ref("trigger", args)
		if err != nil {
			return trigger{}, err
		}
		opts := &schedule.TriggerOpts{}
		var inputErr error
		fs.Visit(func(f *pflag.Flag) {
			if f.Name == "input" {
				opts.Input, inputErr = jsonFlag(env, "input", *input, `{"to": "ops"}`)
			}
		})
		if inputErr != nil {
			return trigger{}, inputErr
		}
		if opts.Overlap, err = parseOverlap(*overlap); err != nil {
			return trigger{}, err
		}
		return trigger{ref, opts}, nil
	}
	spec := dbSpec{json: "print the run as JSON (like 'workflow get --json') instead of its id", schedules: true}
	return dbCommand(fs, env, spec, parse, func(ctx context.Context, c *commandRun, t trigger) error {
		ref, opts := t.ref, t.opts

		s, err := c.sc.Get(ctx, ref)
		if err != nil {
			return scheduleError(err, ref)
		}
		runID, err := c.sc.Trigger(ctx, schedule.ByID(s.ID), opts)
		if err != nil {
			return runsError(err, schedule.ByID(s.ID), "fix --input")
		}
		run, err := c.wf.GetRun(ctx, runID)
		if err != nil {
			return workflowError(err, runID)
		}
		if c.asJSON {
			err = printRunAnswer(ctx, env, c.wf, run, nil)
		} else {
			_, err = fmt.Fprintln(env.Stdout, runID)
		}
		if err != nil {
			return err
		}
		if run.Status == workflow.StatusSkipped {
			fmt.Fprintf(env.Stderr, "note: run %s was recorded as skipped (%s): a run of schedule %s is unfinished and its overlap policy is %s; pass --overlap allow to run alongside it\n",
				runID, run.SkipReason, s.ID, cmp.Or(opts.Overlap, s.Overlap))
		}
		return nil
	})
}

// parseOverlap checks an --overlap flag of trigger, which the schedule
// package takes as is.
func parseOverlap(value string) (schedule.OverlapPolicy, error) {
	policy := schedule.OverlapPolicy(value)
	switch policy {
	case "", schedule.OverlapSkip, schedule.OverlapAllow, schedule.OverlapQueue, schedule.OverlapReplace:
		return policy, nil
	}
	return "", withHint(usageErrorf("--overlap %q is not an overlap policy", value), "use one of "+overlapPolicies)
}
