package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/workflow"
)

// newWorkflowSignalCommand is `tributary workflow signal`.
func newWorkflowSignalCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "signal <run-id> <signal-name> [--payload <json>] [flags]",
		Short: "Send a named signal with a JSON payload to a run (WaitSignal receives it)",
		Example: `tributary workflow signal 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e approved --payload '{"by": "ops"}'
					tributary workflow signal 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e continue`,
	}, setupWorkflowSignal)
}

func setupWorkflowSignal(fs *pflag.FlagSet, env *Env) Action {
	payload := fs.String("payload", "null", "the signal's payload, a `JSON` value such as '{\"approved\": true}', @file.json or - for standard input (default null)")
	type signal struct {
		id      uuid.UUID
		name    string
		payload json.RawMessage
	}
	parse := func(args []string) (sig signal, err error) {
		if err := wantArgs("signal", args, "run-id", "signal-name"); err != nil {
			return sig, err
		}
		if sig.id, err = parseRunID("", args[0]); err != nil {
			return sig, err
		}
		sig.name = args[1]
		sig.payload, err = jsonFlag(env, "payload", *payload, `{"approved": true}`)
		return sig, err
	}
	return dbCommand(fs, env, dbSpec{json: "print the run as it is after the signal, as JSON (like get --json)"}, parse, func(ctx context.Context, c *commandRun, sig signal) error {
		id, name, payloadJSON := sig.id, sig.name, sig.payload

		sent, err := c.wf.SendSignal(ctx, id, name, payloadJSON)
		if err != nil {
			if errors.Is(err, workflow.ErrRunFinished) {
				return withHint(fmt.Errorf("run %s has already finished%s, so signal %q was not sent", id, statusSuffix(runStatusOf(ctx, c.wf, id)), name),
					"only a run that has not finished can receive signals")
			}
			return workflowError(err, id)
		}
		if c.asJSON {
			run, err := c.wf.GetRun(ctx, id)
			if err != nil {
				return workflowError(err, id)
			}
			return printRunAnswer(ctx, env, c.wf, run, nil)
		}
		_, err = fmt.Fprintf(env.Stdout, "sent signal %q to run %s%s\n", name, id, signalNote(sent, name))
		return err
	})
}

// statusSuffix is " (completed)" for an error message, or "" when the
// status is unknown.
func statusSuffix(status workflow.Status) string {
	if status == "" {
		return ""
	}
	return " (" + string(status) + ")"
}

// signalNote says, after "sent signal", when the run was not waiting for
// the signal: it is kept until the run waits for its name.
func signalNote(sent *workflow.SignalResult, name string) string {
	if sent.Waiting {
		return ""
	}
	pending := ""
	if sent.Pending > 1 {
		pending = fmt.Sprintf(" (%d of that name are pending)", sent.Pending)
	}
	if sent.WaitingFor != "" {
		return fmt.Sprintf("; it is waiting for signal %q, not for this one, so the signal is kept until the run waits for %q%s",
			sent.WaitingFor, name, pending)
	}
	state := string(sent.Status)
	if sent.Status == workflow.StatusWaiting {
		state = "waiting for a child run" // parked, and not in a WaitSignal
	}
	return fmt.Sprintf("; it is %s, not waiting for a signal now, so the signal is kept until the run waits for %q%s", state, name, pending)
}
