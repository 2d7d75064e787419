package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/wfruntime"
	"github.com/tributary-go/tributary/workflow"
)

// noArgs refuses positional arguments, for the commands that take none.
func noArgs(args []string) error {
	if len(args) > 0 {
		return usageErrorf("unexpected argument %q", args[0])
	}
	return nil
}

// parseID parses the id of a noun (run, schedule) given as what (a flag,
// or "" for an argument), with hint when it is not one.
func parseID(noun, hint, what, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		if what != "" {
			what += " "
		}
		return uuid.Nil, withHint(usageErrorf("%s%q is not a %s id", what, s, noun), hint)
	}
	return id, nil
}

// joinWords joins "a", "a and b", "a, b and c".
func joinWords(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// warnNoWorker prints a warning on stderr when no live worker serves
// workflow type typ: a run or schedule of it was accepted but will wait.
func warnNoWorker(ctx context.Context, env *Env, wf *workflow.Client, typ string) {
	served, err := wf.TypeServed(ctx, typ)
	switch {
	case err != nil:
		fmt.Fprintf(env.Stderr, "tributary: warning: could not read the worker registry (%v); check that 'tributary migrate up' has run\n", err)
	case !served:
		fmt.Fprintln(env.Stderr, "tributary: warning: "+wfruntime.NoWorkerWarning(typ))
	}
}
