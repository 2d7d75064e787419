package workflow

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// versioned is a body that asks Version for change "sms" with the given
// range, runs step "sms" or "email" by the answer, waits for signal "go",
// and returns the version and its branch.
func versioned(minSupported, maxSupported int, calls map[string]*atomic.Int32) code {
	return func(ctx Context) (string, error) {
		if err := countingStep(ctx, "a", calls["a"]); err != nil {
			return "", err
		}
		v, err := Version(ctx, "sms", minSupported, maxSupported)
		if err != nil {
			return "", err
		}
		branch := "email"
		if v >= 1 {
			branch = "sms"
		}
		if err := countingStep(ctx, branch, calls[branch]); err != nil {
			return "", err
		}
		if _, err := WaitSignal[string](ctx, "go", nil); err != nil {
			return "", err
		}
		return fmt.Sprintf("%d %s", v, branch), nil
	}
}

// unversioned is the code before the change: step "email", no Version call.
func unversioned(calls map[string]*atomic.Int32) code {
	return func(ctx Context) (string, error) {
		if err := countingStep(ctx, "a", calls["a"]); err != nil {
			return "", err
		}
		if err := countingStep(ctx, "email", calls["email"]); err != nil {
			return "", err
		}
		_, err := WaitSignal[string](ctx, "go", nil)
		return "0 email", err
	}
}

func newCalls() map[string]*atomic.Int32 {
	return map[string]*atomic.Int32{"a": {}, "email": {}, "sms": {}}
}

// versionRecords returns the version records of a run, as "name=output".
func versionRecords(t *testing.T, env *evolvingEnv, h *Handle[string]) []string {
	t.Helper()
	run, err := env.client.GetRun(ctxT(t), h.ID)
	require.NoError(t, err)
	var records []string
	for _, s := range run.Steps {
		if s.Kind == StepKindVersion {
			records = append(records, s.Name+"="+string(s.Output))
		}
	}
	return records
}

func TestVersion(t *testing.T) {
	t.Parallel()

	t.Run("OldRunKeepsOldBranch", func(t *testing.T) {
		t.Parallel()

		calls := newCalls()
		env := newEvolvingEnv(t, unversioned(calls))
		h := env.start(t)
		env.deploy(versioned(DefaultVersion, 1, calls))
		out, err := env.resume(t, h, "go")
		require.NoError(t, err)
		require.Equal(t, "-1 email", out, "the run passed the change's point before it: DefaultVersion")
		require.Equal(t, int32(1), calls["email"].Load(), "email ran once, under the old code")
		require.Zero(t, calls["sms"].Load())
		require.Empty(t, versionRecords(t, env, h), "nothing is recorded for a run from before the change")
	})

	t.Run("NewRunTakesNewBranch", func(t *testing.T) {
		t.Parallel()

		calls := newCalls()
		env := newEvolvingEnv(t, versioned(DefaultVersion, 1, calls))
		h := env.start(t)
		out, err := env.resume(t, h, "go")
		require.NoError(t, err)
		require.Equal(t, "1 sms", out)
		require.Equal(t, int32(1), calls["sms"].Load())
		require.Zero(t, calls["email"].Load())
		require.Equal(t, []string{"version:sms=1"}, versionRecords(t, env, h))
	})

	t.Run("ChoiceIsRecordedAndStable", func(t *testing.T) {
		t.Parallel()

		calls := newCalls()
		env := newEvolvingEnv(t, versioned(DefaultVersion, 1, calls))
		h := env.start(t) // records version 1, then parks
		// A later deploy makes version 2 the new one; the parked run keeps 1.
		env.deploy(versioned(DefaultVersion, 2, calls))
		out, err := env.resume(t, h, "go")
		require.NoError(t, err)
		require.Equal(t, "1 sms", out)
		require.Equal(t, int32(1), calls["sms"].Load(), "the replay returned sms's memo")
		require.Equal(t, []string{"version:sms=1"}, versionRecords(t, env, h))

		fresh := env.start(t)
		out, err = env.resume(t, fresh, "go")
		require.NoError(t, err)
		require.Equal(t, "2 sms", out, "a new run records the new maximum")
	})

	t.Run("RemovedCallIsPassedOver", func(t *testing.T) {
		t.Parallel()

		calls := newCalls()
		env := newEvolvingEnv(t, versioned(DefaultVersion, 1, calls))
		h := env.start(t)
		// Once no run needs the old branch, the call goes; the new branch stays.
		env.deploy(steps(calls["sms"], nil, "a", "sms", "wait:go"))
		out, err := env.resume(t, h, "go")
		require.NoError(t, err)
		require.Equal(t, "[a sms wait:go]", out)
		require.Equal(t, int32(1), calls["sms"].Load())
	})

	t.Run("SameChangeTwice", func(t *testing.T) {
		t.Parallel()

		env := newEvolvingEnv(t, func(ctx Context) (string, error) {
			first, err := Version(ctx, "twice", DefaultVersion, 3)
			if err != nil {
				return "", err
			}
			if _, err := WaitSignal[string](ctx, "go", nil); err != nil {
				return "", err
			}
			second, err := Version(ctx, "twice", DefaultVersion, 3)
			return fmt.Sprint(first, second), err
		})
		h := env.start(t)
		out, err := env.resume(t, h, "go")
		require.NoError(t, err)
		require.Equal(t, "3 3", out)
		require.Equal(t, []string{"version:twice=3"}, versionRecords(t, env, h))
	})

	t.Run("UnsupportedVersionFails", func(t *testing.T) {
		t.Parallel()

		for _, tc := range []struct {
			name          string
			before, after func(map[string]*atomic.Int32) code
			message       string
		}{{
			name:    "DefaultNoLongerSupported",
			before:  unversioned,
			after:   func(c map[string]*atomic.Int32) code { return versioned(1, 1, c) },
			message: `replay diverged at step "version:sms": history has no version (the run passed this point before the change), code now asks for a version from 1 to 1; this code no longer supports runs from before change "sms"`,
		}, {
			name:    "RolledBack",
			before:  func(c map[string]*atomic.Int32) code { return versioned(DefaultVersion, 2, c) },
			after:   func(c map[string]*atomic.Int32) code { return versioned(DefaultVersion, 1, c) },
			message: `history has version 2, code now asks for a version from -1 to 1; deploy code that supports version 2 of change "sms", or cancel the run and start a new one`,
		}} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()

				calls := newCalls()
				env := newEvolvingEnv(t, tc.before(calls))
				h := env.start(t)
				env.deploy(tc.after(calls))
				_, err := env.resume(t, h, "go")
				require.ErrorIs(t, err, ErrDivergence)
				require.ErrorContains(t, err, tc.message)
				require.Equal(t, int32(2), calls["a"].Load()+calls["email"].Load()+calls["sms"].Load(), "only the old code's two steps ran")
			})
		}
	})

	t.Run("MovedCallDiverges", func(t *testing.T) {
		t.Parallel()

		calls := newCalls()
		env := newEvolvingEnv(t, versioned(DefaultVersion, 1, calls))
		h := env.start(t)
		env.deploy(func(ctx Context) (string, error) {
			if _, err := Version(ctx, "sms", DefaultVersion, 1); err != nil { // now before step "a"
				return "", err
			}
			return steps(calls["a"], nil, "a", "sms", "wait:go")(ctx)
		})
		_, err := env.resume(t, h, "go")
		require.ErrorIs(t, err, ErrDivergence)
		require.ErrorContains(t, err, `replay diverged at step "version:sms" (position 2 of the run's history): history has version 1 at another point, code now asks for a version from -1 to 1 here`)
	})

	t.Run("BadArguments", func(t *testing.T) {
		t.Parallel()

		for _, tc := range []struct {
			change   string
			min, max int
			message  string
		}{
			{change: "", min: DefaultVersion, max: 1, message: `invalid version change: is empty`},
			{change: strings.Repeat("c", 193), min: DefaultVersion, max: 1, message: `the limit is 192`},
			{change: "c", min: 2, max: 1, message: `minSupported of change "c" is 2; it must be from DefaultVersion (-1) to maxSupported (1)`},
			{change: "c", min: -5, max: 1, message: `minSupported of change "c" is -5`},
			{change: "c", min: DefaultVersion, max: DefaultVersion, message: `maxSupported of change "c" is -1; it is the version new runs record, from 0 up`},
		} {
			t.Run(tc.message, func(t *testing.T) {
				t.Parallel()

				def := Define("bad_version", func(ctx Context, _ struct{}) (int, error) {
					return Version(ctx, tc.change, tc.min, tc.max)
				}, nil)
				env := newTestEnv(t, def)
				ctx := ctxT(t)
				h, err := def.Start(ctx, env.client, struct{}{}, nil)
				require.NoError(t, err)
				_, err = h.Result(ctx)
				require.ErrorContains(t, err, "(non_retryable)")
				require.ErrorContains(t, err, tc.message)
			})
		}
	})

	t.Run("InsideAStepFails", func(t *testing.T) {
		t.Parallel()

		def := Define("version_in_step", func(ctx Context, _ struct{}) (int, error) {
			return Step(ctx, "outer", func(context.Context) (int, error) { return Version(ctx, "c", DefaultVersion, 1) })
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)
		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		_, err = h.Result(ctx)
		require.ErrorContains(t, err, `version "version:c" was reached while step "outer" was still in progress`)
	})
}
