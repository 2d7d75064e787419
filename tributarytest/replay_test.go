package tributarytest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/tributarytest"
	"github.com/tributary-go/tributary/workflow"
)

// invoice is yesterday's code; invoiceRenamed is today's, with a step
// renamed.
func invoiceDef(charge string) *workflow.Definition[int, string] {
	return workflow.Define("invoice", func(ctx workflow.Context, cents int) (string, error) {
		id, err := workflow.Step(ctx, "create", func(context.Context) (string, error) { return "inv-1", nil })
		if err != nil {
			return "", err
		}
		if err := workflow.Sleep(ctx, "grace", 24*time.Hour); err != nil {
			return "", err
		}
		return workflow.Step(ctx, charge, func(context.Context) (string, error) { return id + " charged", nil })
	}, nil)
}

func TestReplay(t *testing.T) {
	t.Parallel()

	// Yesterday: a run recorded in production.
	yesterday := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{invoiceDef("charge")}})
	h, err := invoiceDef("charge").Start(yesterday.Context(), yesterday.Workflows, 1999, nil)
	require.NoError(t, err)
	_, err = tributarytest.Result(yesterday, h)
	require.NoError(t, err)
	history, err := json.MarshalIndent(yesterday.Run(h.ID), "", "  ") // what `tributary workflow get --json` prints
	require.NoError(t, err)

	t.Run("SameCode", func(t *testing.T) {
		t.Parallel()
		env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{invoiceDef("charge")}})
		require.NoError(t, tributarytest.Replay(env, history))
	})
	t.Run("TheAPIsJSON", func(t *testing.T) {
		t.Parallel()
		env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{invoiceDef("charge")}})
		api := strings.Replace(string(history), `"workflow_type"`, `"type"`, 1)
		require.NoError(t, tributarytest.Replay(env, []byte(api)))
	})
	t.Run("RenamedStep", func(t *testing.T) {
		t.Parallel()
		env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{invoiceDef("bill")}})
		err := tributarytest.Replay(env, history)
		var div *workflow.DivergenceError
		require.True(t, errors.As(err, &div), "want a DivergenceError, got %v", err)
		require.Equal(t, "bill", div.Step)
	})
	t.Run("NothingRuns", func(t *testing.T) {
		t.Parallel()
		ran := false
		def := workflow.Define("invoice", func(ctx workflow.Context, cents int) (string, error) {
			return workflow.Step(ctx, "create", func(context.Context) (string, error) { ran = true; return "other", nil })
		}, nil)
		env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{def}})
		err := tributarytest.Replay(env, history)
		require.ErrorContains(t, err, `this code returns "inv-1" from the same history`, "a completed run's code that returns another output")
		require.False(t, ran, "a recorded step's function is not called")
	})
}
