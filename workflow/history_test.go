package workflow

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// code is one version of a workflow's body, swapped between attempts the
// way a deploy swaps it.
type code func(ctx Context) (string, error)

// evolvingEnv runs one workflow type whose code can be redeployed while a
// run of it is parked.
type evolvingEnv struct {
	*testEnv
	def     *Definition[struct{}, string]
	current atomic.Pointer[code]
}

func newEvolvingEnv(t *testing.T, initial code, others ...Registrable) *evolvingEnv {
	t.Helper()
	e := &evolvingEnv{}
	e.deploy(initial)
	e.def = Define("evolving", func(ctx Context, _ struct{}) (string, error) { return (*e.current.Load())(ctx) }, &DefineOpts{MaxAttempts: 3})
	e.testEnv = newTestEnv(t, append([]Registrable{e.def}, others...)...)
	return e
}

func (e *evolvingEnv) deploy(c code) { e.current.Store(&c) }

// start starts a run under the code deployed now and waits until it is
// parked waiting for a signal.
func (e *evolvingEnv) start(t *testing.T) *Handle[string] {
	t.Helper()
	h, err := e.def.Start(ctxT(t), e.client, struct{}{}, nil)
	require.NoError(t, err)
	waitStatus(t, e.client, h, StatusWaiting)
	return h
}

// resume sends signal name to the run and returns its result.
func (e *evolvingEnv) resume(t *testing.T, h *Handle[string], name string) (string, error) {
	t.Helper()
	ctx := ctxT(t)
	require.NoError(t, e.client.Signal(ctx, h.ID, name, "now"))
	return h.Result(ctx)
}

// countingStep is a step that counts its calls.
func countingStep(ctx Context, name string, calls *atomic.Int32) error {
	_, err := Step(ctx, name, func(context.Context) (int, error) { calls.Add(1); return 1, nil })
	return err
}

// steps runs the named steps in order (a name "wait:x" waits for signal x,
// "nap" sleeps until a time already past, "kid" runs a child run),
// counting the calls of the steps' functions.
func steps(calls *atomic.Int32, kid *Definition[int, int], names ...string) code {
	return func(ctx Context) (string, error) {
		for _, name := range names {
			var err error
			switch {
			case name == "nap":
				err = SleepUntil(ctx, name, time.Now().Add(-time.Second))
			case name == "kid":
				_, err = RunChild(ctx, name, kid, 1, nil)
			case len(name) > 5 && name[:5] == "wait:":
				_, err = WaitSignal[string](ctx, name[5:], nil)
			default:
				err = countingStep(ctx, name, calls)
			}
			if err != nil {
				return "", err
			}
		}
		return fmt.Sprint(names), nil
	}
}

// TestReplayDetectsChangedSteps redeploys a workflow with steps renamed,
// inserted before recorded ones or reordered, while a run of the old code
// is parked: the run's replay under the new code fails with a
// *DivergenceError that names the step expected and the step asked for,
// and the new code's steps are not run.
func TestReplayDetectsChangedSteps(t *testing.T) {
	t.Parallel()

	kid := Define("kid", func(ctx Context, n int) (int, error) { return n, nil }, nil)
	for _, tc := range []struct {
		name     string
		v1, v2   []string
		expected string // the recorded step the replay reaches
		asked    string // the step the new code asks for instead
		position int
	}{
		{name: "Rename", v1: []string{"a", "wait:go"}, v2: []string{"a_renamed", "wait:go"}, expected: "a", asked: "a_renamed", position: 1},
		{name: "InsertBefore", v1: []string{"a", "wait:go"}, v2: []string{"x", "a", "wait:go"}, expected: "a", asked: "x", position: 1},
		{name: "InsertBeforeWait", v1: []string{"a", "wait:go"}, v2: []string{"a", "x", "wait:go"}, expected: "signal:go", asked: "x", position: 2},
		{name: "Reorder", v1: []string{"a", "b", "wait:go"}, v2: []string{"b", "a", "wait:go"}, expected: "a", asked: "b", position: 1},
		{name: "ReorderSleep", v1: []string{"nap", "a", "wait:go"}, v2: []string{"a", "nap", "wait:go"}, expected: "nap", asked: "a", position: 1},
		{name: "InsertBeforeChild", v1: []string{"kid", "wait:go"}, v2: []string{"x", "kid", "wait:go"}, expected: "kid", asked: "x", position: 1},
		{name: "RenameWait", v1: []string{"a", "wait:go"}, v2: []string{"a", "wait:proceed", "wait:go"}, expected: "signal:go", asked: "signal:proceed", position: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			var v1Calls, v2Calls atomic.Int32
			env := newEvolvingEnv(t, steps(&v1Calls, kid, tc.v1...), kid)
			h := env.start(t)
			env.deploy(steps(&v2Calls, kid, tc.v2...))
			_, err := env.resume(t, h, "go")

			require.ErrorIs(t, err, ErrDivergence)
			var runErr *RunError
			require.ErrorAs(t, err, &runErr)
			require.Equal(t, ErrorKindDivergence, runErr.Kind)
			require.Equal(t, tc.asked, runErr.Step)
			require.Contains(t, runErr.Message, fmt.Sprintf(`(position %d of the run's history): history has step %q (`, tc.position, tc.expected))
			require.Contains(t, runErr.Message, fmt.Sprintf(`code now asks for step %q (`, tc.asked))
			require.Contains(t, runErr.Message, "guard the change with workflow.Version")
			require.Contains(t, runErr.Message, "or cancel the run and start a new one")
			require.Zero(t, v2Calls.Load(), "the new code's steps must not run under the old run")

			run, err := env.client.GetRun(ctxT(t), h.ID)
			require.NoError(t, err)
			require.Equal(t, StatusFailed, run.Status)
			require.Equal(t, 1, run.Attempt, "a divergence is not retried")
		})
	}
}

// TestReplayDivergenceErrorText pins the whole message of a renamed step.
func TestReplayDivergenceErrorText(t *testing.T) {
	t.Parallel()

	err := &DivergenceError{Step: "a_renamed", Expected: "a", Recorded: "step returning int", Replayed: "step returning int", Position: 1}
	require.Equal(t, `workflow: replay diverged (position 1 of the run's history): history has step "a" (step returning int) next, `+
		`code now asks for step "a_renamed" (step returning int) instead; steps renamed, inserted before recorded ones or reordered `+
		`do not fit a run in flight; guard the change with workflow.Version so that runs recorded before it keep the old code path `+
		`(then retry this run: its history is intact), or cancel the run and start a new one`, err.Error())
	require.ErrorIs(t, err, ErrDivergence)
}

// TestReplayDivergedRunRetriedAfterGuard checks the way out of a
// divergence: deploy code that guards the change with Version, and retry
// the run, which then keeps its old path.
func TestReplayDivergedRunRetriedAfterGuard(t *testing.T) {
	t.Parallel()

	var calls atomic.Int32
	env := newEvolvingEnv(t, steps(&calls, nil, "a", "wait:go"))
	h := env.start(t)
	env.deploy(steps(&calls, nil, "a_renamed", "wait:go"))
	_, err := env.resume(t, h, "go")
	require.ErrorIs(t, err, ErrDivergence)

	env.deploy(func(ctx Context) (string, error) {
		v, err := Version(ctx, "rename-a", DefaultVersion, 1)
		if err != nil {
			return "", err
		}
		if v == DefaultVersion {
			return steps(&calls, nil, "a", "wait:go")(ctx)
		}
		return steps(&calls, nil, "a_renamed", "wait:go")(ctx)
	})
	ctx := ctxT(t)
	require.NoError(t, env.client.Retry(ctx, h.ID))
	out, err := h.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, "[a wait:go]", out, "the signal sent before the divergence was received")
	require.Equal(t, int32(1), calls.Load(), "a ran once; a_renamed never")
}

// TestReplayAppendedSteps checks that steps added after the recorded ones
// replay fine: the recorded ones return their memos and the new ones run.
func TestReplayAppendedSteps(t *testing.T) {
	t.Parallel()

	var v1Calls, v2Calls atomic.Int32
	env := newEvolvingEnv(t, steps(&v1Calls, nil, "a", "nap", "wait:go"))
	h := env.start(t)
	env.deploy(steps(&v2Calls, nil, "a", "nap", "wait:go", "c", "wait:more", "d"))
	ctx := ctxT(t)
	require.NoError(t, env.client.Signal(ctx, h.ID, "go", "now"))
	waitStatus(t, env.client, h, StatusWaiting) // now at "wait:more", past the recorded steps
	out, err := env.resume(t, h, "more")
	require.NoError(t, err)
	require.Equal(t, "[a nap wait:go c wait:more d]", out)
	require.Equal(t, int32(1), v1Calls.Load(), "a ran once, under v1")
	require.Equal(t, int32(2), v2Calls.Load(), "c and d ran once each, under v2")

	run, err := env.client.GetRun(ctx, h.ID)
	require.NoError(t, err)
	var names []string
	for _, s := range run.Steps {
		names = append(names, s.Name)
	}
	require.Equal(t, []string{"a", "nap", "signal:go", "c", "signal:more", "d"}, names, "steps in the order the workflow reached them")
}

// TestReplayFailedStepDoesNotBind checks that a failed step's record does
// not hold the code to it: a fix that renames it replays fine.
func TestReplayFailedStepDoesNotBind(t *testing.T) {
	t.Parallel()

	var calls atomic.Int32
	v1 := func(ctx Context) (string, error) {
		if err := countingStep(ctx, "a", &calls); err != nil {
			return "", err
		}
		_, err := Step(ctx, "b", func(context.Context) (int, error) { return 0, NonRetryable(errors.New("bug")) })
		return "", err
	}
	env := newEvolvingEnv(t, v1)
	ctx := ctxT(t)
	h, err := env.def.Start(ctx, env.client, struct{}{}, nil)
	require.NoError(t, err)
	_, err = h.Result(ctx)
	require.ErrorContains(t, err, "bug")

	env.deploy(steps(&calls, nil, "a", "b_fixed"))
	require.NoError(t, env.client.Retry(ctx, h.ID))
	out, err := h.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, "[a b_fixed]", out)
	require.Equal(t, int32(2), calls.Load(), "a ran once, b_fixed once")
}

// TestReplayStepsOneAtATime checks that a step reached while another is in
// progress (from inside its function, or from another goroutine) fails the
// run: such steps have no order a replay could match.
func TestReplayStepsOneAtATime(t *testing.T) {
	t.Parallel()

	t.Run("Nested", func(t *testing.T) {
		t.Parallel()

		var calls atomic.Int32
		def := Define("nested", func(ctx Context, _ struct{}) (int, error) {
			return Step(ctx, "outer", func(context.Context) (int, error) {
				return 0, countingStep(ctx, "inner", &calls)
			})
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)
		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		_, err = h.Result(ctx)
		require.ErrorContains(t, err, `(non_retryable) at step "inner"`)
		require.ErrorContains(t, err, `step "inner" was reached while step "outer" was still in progress; call steps one at a time`)
		require.Zero(t, calls.Load())
	})

	t.Run("Goroutines", func(t *testing.T) {
		t.Parallel()

		def := Define("fan_out", func(ctx Context, _ struct{}) (int, error) {
			second := make(chan error, 1)
			return Step(ctx, "first", func(context.Context) (int, error) {
				go func() { second <- Sleep(ctx, "second", time.Millisecond) }()
				return 0, <-second // the first step is in progress while the second is reached
			})
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)
		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		_, err = h.Result(ctx)
		require.ErrorContains(t, err, `(non_retryable) at step "second"`)
		require.ErrorContains(t, err, `sleep "second" was reached while step "first" was still in progress`)
	})
}

// TestReplayRecordsFromBeforePositions checks runs in flight across
// migration 007: their records have no position and are matched by name,
// as before, so that the upgrade does not fail them.
func TestReplayRecordsFromBeforePositions(t *testing.T) {
	t.Parallel()

	var calls atomic.Int32
	env := newEvolvingEnv(t, steps(&calls, nil, "a", "wait:go"))
	h := env.start(t)
	ctx := ctxT(t)
	_, err := env.pool.Exec(ctx, `UPDATE step_runs SET seq = NULL, signal_name = NULL WHERE run_id = $1`, h.ID)
	require.NoError(t, err)

	env.deploy(func(ctx Context) (string, error) {
		v, err := Version(ctx, "change", DefaultVersion, 1)
		if err != nil {
			return "", err
		}
		out, err := steps(&calls, nil, "x", "a", "wait:go")(ctx)
		return fmt.Sprint(v, out), err
	})
	out, err := env.resume(t, h, "go")
	require.NoError(t, err)
	require.Equal(t, "-1[x a wait:go]", out, "the run has records ahead of the Version call: DefaultVersion")
	require.Equal(t, int32(2), calls.Load(), "a ran once; x, inserted before a, is not detected in such a run")
}
