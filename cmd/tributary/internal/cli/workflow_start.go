package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/workflow"
)

// newWorkflowStartCommand is `tributary workflow start`.
func newWorkflowStartCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "start <type> [--input <json>] [flags]",
		Short: "Start a run of a workflow type, for the service that registers it to work",
		Long: `Inserts the run and its River job in one transaction and prints the run's id. This process has
					no workflow code: the run waits until a working client that registers the type fetches it.
					With --idempotency-key, starting the same type with the same key again prints the first
					run instead of starting another. --tenant names the tenant (customer, partner) the run
					works for: 'workflow list --tenant' finds its runs. With --debounce, starts of the type with
					the same key collapse into one run (workflow.StartOpts.Debounce): it starts
					--debounce-period after the last of them, at most --debounce-max after the first, with the
					last one's input; a start that joins the open window's run prints that run and says so.`,
		Example: `tributary workflow start send_report --input '{"to": "ops"}'
					tributary workflow start import_users --input @users.json --idempotency-key import-2026-11-25
					tributary workflow start send_report --input '{"to": "ops"}' --tenant acme
					tributary workflow start index_doc --input '{"doc": 1}' --debounce doc-1 --debounce-period 30s --debounce-max 5m`,
	}, setupWorkflowStart)
}

func setupWorkflowStart(fs *pflag.FlagSet, env *Env) Action {
	input := fs.String("input", "null", "the run's input, a `JSON` value such as '{\"to\": \"ops\"}', @file.json or - for standard input (default null)")
	key := fs.String("idempotency-key", "", "start at most one run of the type with this `key`; again, it prints the first run")
	queue := fs.String("queue", "", "the River `queue` of the run's jobs (default the type's, else default)")
	priority := fs.Int("priority", 0, "the River priority of the run's jobs, `n` from 1 (highest) to 4 (default the type's, else 1)")
	tenant := fs.String("tenant", "", "the `tenant` (customer, partner) the run works for, 1 to 100 printable characters; its child runs carry it too (default none)")
	debounceKey := fs.String("debounce", "", "collapse the starts of the type with this `key` (such as the document's id) into one run, which starts --debounce-period after the last of them; needs --debounce-period")
	debouncePeriod := fs.Duration("debounce-period", 0, "with --debounce: the run starts this `duration` after the last start with the key, such as 30s")
	debounceMax := fs.Duration("debounce-max", 0, "with --debounce: the run starts at most this `duration` after the first start with the key, at least --debounce-period (default 0: no bound)")
	maxAttempts := fs.Int("max-attempts", 0, "the number `n` of attempts the run gets, at least 1 (default the type's, else 10)")
	retry := addRetryFlags(fs, "the run's", "the type's policy, else River's backoff; --retry-delay 0 alone: River's backoff")
	requireWorker := fs.Bool("require-worker", false, "refuse to start the run when no live worker serves the type (without it: start it and warn)")
	type start struct {
		typ   string
		input json.RawMessage
		opts  *workflow.StartOpts
	}
	parse := func(args []string) (st start, err error) {
		if len(args) != 1 {
			return st, withHint(usageErrorf("workflow start needs one workflow type, not %d arguments", len(args)),
				`e.g. tributary workflow start send_report --input '{"to": "ops"}'`)
		}
		st.typ = args[0]
		if st.input, err = jsonFlag(env, "input", *input, `{"to": "ops"}`); err != nil {
			return st, err
		}
		if err := checkTenantFlag(*tenant); err != nil {
			return st, err
		}
		debounce, err := debounceFlags(fs, *debounceKey, *debouncePeriod, *debounceMax)
		if err != nil {
			return st, err
		}
		retryPolicy, err := retry.policy(fs)
		if err != nil {
			return st, err
		}
		if *maxAttempts < 0 {
			return st, withHint(usageErrorf("--max-attempts must be at least 1, not %d", *maxAttempts), "leave it out for the type's default")
		}
		st.opts = &workflow.StartOpts{
			IdempotencyKey: *key, Queue: *queue, Priority: *priority, RequireWorker: *requireWorker, Tenant: *tenant,
			Debounce: debounce, MaxAttempts: *maxAttempts, Retry: retryPolicy,
		}
		return st, nil
	}
	return dbCommand(fs, env, dbSpec{json: "print the run as JSON (like get --json) instead of its id"}, parse, func(ctx context.Context, c *commandRun, st start) error {
		run, err := c.wf.StartByName(ctx, st.typ, st.input, st.opts)
		var noWorker *workflow.NoWorkerError
		if errors.As(err, &noWorker) {
			return withHint(err, "start the service that works it first, or leave --require-worker out to start the run anyway")
		}
		if err := debounceError(err); err != nil {
			return err
		}
		if err != nil {
			return workflowError(err, uuid.Nil)
		}
		if !*requireWorker { // else the start checked it
			warnNoWorker(ctx, env, c.wf, st.typ)
		}
		if st.opts.Debounce != nil && run.Existing {
			fmt.Fprintf(env.Stderr, "note: joined run %s (debounce window %s open); nothing was started, and the run takes this start's input\n", run.ID, oneLine(st.opts.Debounce.Key))
		}
		if c.asJSON {
			read, err := c.wf.GetRun(ctx, run.ID) // as it is now: a joined run may have steps
			if err != nil {
				return workflowError(err, run.ID)
			}
			return printRunAnswer(ctx, env, c.wf, read, &run.Existing)
		}
		_, err = fmt.Fprintln(env.Stdout, run.ID)
		return err
	})
}

// debounceFlags reads --debounce, --debounce-period and --debounce-max
// into a start's workflow.Debounce, nil without --debounce. A period or
// maximum without a key, a key without a period, or a duration the start
// would refuse is a usage error naming the flag, before anything is read or
// written.
func debounceFlags(fs *pflag.FlagSet, key string, period, maxDelay time.Duration) (*workflow.Debounce, error) {
	if !fs.Changed("debounce") {
		for _, name := range []string{"debounce-period", "debounce-max"} {
			if fs.Changed(name) {
				return nil, withHint(usageErrorf("--%s is for a debounced start, and --debounce is not given", name),
					"pass --debounce <key> too, or leave --"+name+" out")
			}
		}
		return nil, nil
	}
	switch {
	case !fs.Changed("debounce-period"):
		return nil, withHint(usageErrorf("--debounce needs --debounce-period"),
			"pass how long after the last start with the key the run starts, such as --debounce-period 30s")
	case period <= 0:
		return nil, withHint(usageErrorf("--debounce-period is %s", period),
			"pass a positive duration, how long after the last start with the key the run starts, such as 30s")
	case maxDelay < 0:
		return nil, withHint(usageErrorf("--debounce-max is %s", maxDelay),
			fmt.Sprintf("pass a duration of at least --debounce-period (%s), or 0 for no bound", period))
	case maxDelay > 0 && maxDelay < period:
		return nil, withHint(usageErrorf("--debounce-max %s is shorter than --debounce-period %s", maxDelay, period),
			fmt.Sprintf("pass a --debounce-max of at least %s, or 0 for no bound", period))
	}
	return &workflow.Debounce{Key: key, Period: period, MaxDelay: maxDelay}, nil
}

// debounceFlagNames are the flags of the fields of workflow.Debounce, as a
// *workflow.ValidationError names them.
var debounceFlagNames = map[string]string{
	"StartOpts.Debounce":          "--debounce",
	"StartOpts.Debounce.Key":      "--debounce",
	"StartOpts.Debounce.Period":   "--debounce-period",
	"StartOpts.Debounce.MaxDelay": "--debounce-max",
}

// debounceError rewords a start's *workflow.ValidationError about its
// Debounce as a usage error naming the flag; nil for any other error.
func debounceError(err error) error {
	var invalid *workflow.ValidationError
	if !errors.As(err, &invalid) {
		return nil
	}
	name, ok := debounceFlagNames[invalid.Field]
	if !ok {
		return nil
	}
	problem := strings.NewReplacer("IdempotencyKey", "--idempotency-key", "ScheduledAt", "a scheduled time").Replace(invalid.Problem)
	return usageErrorf("%s %s", name, problem)
}
