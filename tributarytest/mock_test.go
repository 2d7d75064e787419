package tributarytest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/tributarytest"
	"github.com/tributary-go/tributary/workflow"
)

// charge calls a card network that tests must not reach.
var charge = workflow.Define("charge", func(ctx workflow.Context, cents int) (string, error) {
	receipt, err := workflow.Step(ctx, "charge_card", func(context.Context) (string, error) {
		return "", errors.New("the card network is not reachable from tests")
	})
	if err != nil {
		return "", err
	}
	return workflow.Step(ctx, "email_receipt", func(context.Context) (string, error) { return "emailed " + receipt, nil })
}, &workflow.DefineOpts{MaxAttempts: 1})

func TestMockStep(t *testing.T) {
	t.Parallel()

	env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{charge}})
	tributarytest.MockStep(env, "charge", "charge_card", func(context.Context) (string, error) { return "receipt-42", nil })
	h, err := charge.Start(env.Context(), env.Workflows, 1999, nil)
	require.NoError(t, err)
	out, err := tributarytest.Result(env, h)
	require.NoError(t, err)
	require.Equal(t, "emailed receipt-42", out)
	steps := env.RequireSteps(h.ID, "charge_card", "email_receipt")
	require.JSONEq(t, `"receipt-42"`, string(steps[0].Output), "the mock's result is the step's memo")
}

func TestMockStepOfAnotherType(t *testing.T) {
	t.Parallel()

	env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{charge}})
	tributarytest.MockStep(env, "charge", "charge_card", func(context.Context) (int, error) { return 42, nil })
	h, err := charge.Start(env.Context(), env.Workflows, 1999, nil)
	require.NoError(t, err)
	_, err = tributarytest.Result(env, h)
	require.ErrorContains(t, err, `the test's mock of step "charge_card" of charge is a func(context.Context) (int, error); the step returns string`)
	env.RequireStatus(h.ID, workflow.StatusFailed)
}

// An operator's retry from the test: the run failed on its step; the test
// puts a working function in its place and retries the run, which goes on
// from the failed step.
func TestRetryAfterFix(t *testing.T) {
	t.Parallel()

	env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{charge}})
	h, err := charge.Start(env.Context(), env.Workflows, 1999, nil)
	require.NoError(t, err)
	_, err = tributarytest.Result(env, h)
	require.ErrorContains(t, err, "the card network is not reachable from tests")
	env.RequireStatus(h.ID, workflow.StatusFailed)

	tributarytest.MockStep(env, "charge", "charge_card", func(context.Context) (string, error) { return "receipt-7", nil })
	require.NoError(t, env.Workflows.Retry(env.Context(), h.ID))
	out, err := tributarytest.Result(env, h)
	require.NoError(t, err)
	require.Equal(t, "emailed receipt-7", out)
}
