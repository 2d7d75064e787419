package tributarytest

import (
	"context"
	"slices"

	"github.com/tributary-go/tributary/internal/wfruntime"
)

// MockStep puts fn in place of the function of the step named step of
// workflow type typ, for every attempt of the Env's runs from now on, as
// Temporal's tests mock activities: a workflow that charges a card can be
// tested without the card network. The step is otherwise a step like any
// other (its memo is stored and replayed); a StepTx so mocked runs fn in
// the step's transaction without handing it the transaction. T must be
// the step's own result type: a mock of another type fails the run with an
// error naming both. It fails the test when typ is not one of the Env's
// workflow types.
func MockStep[T any](e *Env, typ, step string, fn func(ctx context.Context) (T, error)) {
	e.t.Helper()
	if !slices.Contains(e.Workflows.Types(), typ) {
		e.t.Fatalf("tributarytest: mock step %q of workflow type %q: the Env does not work that type; add it to Config.Workflows", step, typ)
	}
	wfruntime.Of(e.Workflows).MockStep(typ, step, fn)
}
