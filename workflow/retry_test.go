package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestRetryPolicyValidate(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct {
		name   string
		policy RetryPolicy
		field  string
	}{
		{"negative delay", RetryPolicy{Delay: -time.Second}, "Retry.Delay"},
		{"negative base", RetryPolicy{Base: -time.Second}, "Retry.Base"},
		{"delay and base", RetryPolicy{Delay: time.Second, Base: time.Second}, "Retry.Base"},
		{"factor below 1", RetryPolicy{Base: time.Second, Factor: 0.5}, "Retry.Factor"},
		{"factor without base", RetryPolicy{Delay: time.Second, Factor: 2}, "Retry.Factor"},
		{"negative max", RetryPolicy{Base: time.Second, Max: -time.Second}, "Retry.Max"},
		{"max without base", RetryPolicy{Delay: time.Second, Max: time.Minute}, "Retry.Max"},
		{"base over max", RetryPolicy{Base: time.Minute, Max: time.Second}, "Retry.Max"},
		{"jitter below 0", RetryPolicy{Delay: time.Second, Jitter: -0.1}, "Retry.Jitter"},
		{"jitter over 1", RetryPolicy{Delay: time.Second, Jitter: 1.5}, "Retry.Jitter"},
		{"jitter alone", RetryPolicy{Jitter: 0.1}, "Retry.Jitter"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var verr *ValidationError
			require.ErrorAs(t, tt.policy.Validate(), &verr)
			require.Equal(t, tt.field, verr.Field)
			require.ErrorIs(t, verr, ErrInvalid)
		})
	}

	for _, ok := range []RetryPolicy{
		{},
		{Delay: 30 * time.Second, Jitter: 1},
		{Base: time.Second},
		{Base: time.Second, Factor: 1, Max: time.Second, Jitter: 0.25},
	} {
		require.NoError(t, ok.Validate(), "%+v", ok)
	}
}

func TestRetryPolicyDelay(t *testing.T) {
	t.Parallel()

	runID := uuid.New()

	t.Run("Fixed", func(t *testing.T) {
		t.Parallel()
		p := RetryPolicy{Delay: 40 * time.Second}
		for attempt := 1; attempt <= 5; attempt++ {
			require.Equal(t, 40*time.Second, p.delayAfter(runID, attempt))
		}
	})

	t.Run("ExponentialWithMax", func(t *testing.T) {
		t.Parallel()
		p := RetryPolicy{Base: time.Second, Factor: 2, Max: 5 * time.Second}
		var got []time.Duration
		for attempt := 1; attempt <= 5; attempt++ {
			got = append(got, p.delayAfter(runID, attempt))
		}
		require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}, got)

		// The factor defaults to 2, and no Max means no bound short of
		// the largest duration.
		require.Equal(t, 8*time.Second, RetryPolicy{Base: time.Second}.delayAfter(runID, 4))
		require.Equal(t, time.Duration(1<<63-1), RetryPolicy{Base: time.Hour, Factor: 10}.delayAfter(runID, 1000))
	})

	t.Run("JitterBounds", func(t *testing.T) {
		t.Parallel()
		p := RetryPolicy{Base: 10 * time.Second, Max: time.Minute, Jitter: 0.2}
		seen := map[time.Duration]bool{}
		for range 1000 {
			id := uuid.New()
			for attempt, full := range map[int]time.Duration{1: 10 * time.Second, 3: 40 * time.Second, 9: time.Minute} {
				d := p.delayAfter(id, attempt)
				require.GreaterOrEqual(t, d, full-full/5, "attempt %d", attempt)
				require.LessOrEqual(t, d, full, "attempt %d", attempt)
				require.Equal(t, d, p.delayAfter(id, attempt), "the same run and attempt get the same wait")
				seen[d] = true
			}
		}
		require.Greater(t, len(seen), 2000, "runs spread apart")
	})

	t.Run("Zero", func(t *testing.T) {
		t.Parallel()
		require.Zero(t, RetryPolicy{}.delayAfter(runID, 1))
	})
}

// failingRun fails every attempt.
func failingRun(ctx Context, in int) (int, error) { return 0, errors.New("boom") }

// waitRetrying waits until run id's failed attempt waits to retry, and
// returns the run read then.
func waitRetrying(t *testing.T, c *Client, id uuid.UUID) *Run {
	t.Helper()
	return waitRun(t, c, id, "a retry", func(run *Run) bool { return run.NextAttemptAt != nil })
}

// requireNextAttempt checks that run's next attempt is due wait after its
// failure, which happened between from and the run's read.
func requireNextAttempt(t *testing.T, run *Run, from time.Time, wait time.Duration) {
	t.Helper()
	require.NotNil(t, run.NextAttemptAt)
	require.WithinRange(t, *run.NextAttemptAt, from.Add(wait).Add(-time.Second), time.Now().Add(wait).Add(time.Second))
}

func TestRetryPolicyRuns(t *testing.T) {
	t.Parallel()

	fixed := Define("retry_fixed", failingRun, &DefineOpts{MaxAttempts: 10, Retry: &RetryPolicy{Delay: time.Hour}})
	backoff := Define("retry_backoff", failingRun, &DefineOpts{Retry: &RetryPolicy{Base: time.Hour, Factor: 3, Max: 2 * time.Hour}})
	jittered := Define("retry_jitter", failingRun, &DefineOpts{Retry: &RetryPolicy{Delay: time.Hour, Jitter: 0.5}})
	plain := Define("retry_none", failingRun, nil)
	env := newTestEnv(t, fixed, backoff, jittered, plain)
	c := env.client

	jobRetry := func(t *testing.T, run *Run) *RetryPolicy {
		t.Helper()
		var args runArgs
		var scheduledAt time.Time
		require.NoError(t, env.pool.QueryRow(ctxT(t), `SELECT args, scheduled_at FROM `+env.db.Schema+`.river_job WHERE id = $1`, run.JobID).Scan(&args, &scheduledAt))
		if run.NextAttemptAt != nil {
			require.True(t, scheduledAt.Equal(*run.NextAttemptAt), "the run's next attempt is its job's scheduled_at")
		}
		if run.FinishedAt == nil {
			require.Equal(t, args.Retry, run.Retry, "the run reads the policy its job carries")
		}
		return args.Retry
	}

	t.Run("FixedDelay", func(t *testing.T) {
		t.Parallel()
		from := time.Now()
		h, err := fixed.Start(ctxT(t), c, 1, nil)
		require.NoError(t, err)
		run := waitRetrying(t, c, h.ID)
		require.Equal(t, StatusPending, run.Status)
		require.Equal(t, 1, run.Attempt)
		require.Equal(t, 10, run.MaxAttempts)
		requireNextAttempt(t, run, from, time.Hour)
		require.Equal(t, &RetryPolicy{Delay: time.Hour}, jobRetry(t, run), "the policy is on the job, for any client")
	})

	t.Run("RunOverridesType", func(t *testing.T) {
		t.Parallel()
		from := time.Now()
		h, err := fixed.Start(ctxT(t), c, 1, &StartOpts{Retry: &RetryPolicy{Delay: 3 * time.Hour}})
		require.NoError(t, err)
		run := waitRetrying(t, c, h.ID)
		requireNextAttempt(t, run, from, 3*time.Hour)
		require.Equal(t, &RetryPolicy{Delay: 3 * time.Hour}, jobRetry(t, run))
	})

	t.Run("ExponentialWithMax", func(t *testing.T) {
		t.Parallel()
		from := time.Now()
		h, err := backoff.Start(ctxT(t), c, 1, nil)
		require.NoError(t, err)
		run := waitRetrying(t, c, h.ID)
		requireNextAttempt(t, run, from, time.Hour)
		require.Equal(t, &RetryPolicy{Base: time.Hour, Factor: 3, Max: 2 * time.Hour}, jobRetry(t, run))

		// The second attempt, made now, waits 3h bounded to 2h.
		from = time.Now()
		_, err = c.River().JobRetry(ctxT(t), run.JobID)
		require.NoError(t, err)
		run = waitRun(t, c, h.ID, "a second failed attempt", func(run *Run) bool { return run.Attempt == 2 && run.NextAttemptAt != nil })
		requireNextAttempt(t, run, from, 2*time.Hour)
	})

	t.Run("Jitter", func(t *testing.T) {
		t.Parallel()
		from := time.Now()
		h, err := jittered.Start(ctxT(t), c, 1, nil)
		require.NoError(t, err)
		run := waitRetrying(t, c, h.ID)
		wait := RetryPolicy{Delay: time.Hour, Jitter: 0.5}.delayAfter(h.ID, 1)
		require.GreaterOrEqual(t, wait, 30*time.Minute)
		requireNextAttempt(t, run, from, wait)
	})

	t.Run("OperatorRetryKeepsPolicy", func(t *testing.T) {
		t.Parallel()
		h, err := fixed.Start(ctxT(t), c, 1, &StartOpts{MaxAttempts: 1, Retry: &RetryPolicy{Delay: 2 * time.Hour}})
		require.NoError(t, err)
		failed := waitStatus(t, c, h, StatusFailed)
		require.Nil(t, failed.Retry, "a finished run has no retry policy to show")
		// The run is read in the retry's own transaction: once it commits,
		// the retried attempt may fail (it always does) and finish the run
		// before a later read.
		tx, err := env.pool.Begin(ctxT(t))
		require.NoError(t, err)
		defer tx.Rollback(ctxT(t))
		require.NoError(t, c.RetryTx(ctxT(t), tx, h.ID))
		run, err := runOf(c.db.RunByID(ctxT(t), tx, h.ID))
		require.NoError(t, err)
		require.Equal(t, StatusPending, run.Status)
		require.Equal(t, &RetryPolicy{Delay: 2 * time.Hour}, run.Retry)
		require.NoError(t, tx.Commit(ctxT(t)))
		require.Equal(t, &RetryPolicy{Delay: 2 * time.Hour}, jobRetry(t, run), "the new job carries the policy")
	})

	// A run reads the policy its job carries, in GetRun and ListRuns: the
	// zero policy (River's backoff, over the type's) as set, and none for a
	// type without one.
	t.Run("ReadWithTheRun", func(t *testing.T) {
		t.Parallel()
		later := time.Now().Add(time.Hour)
		zero, err := fixed.Start(ctxT(t), c, 1, &StartOpts{ScheduledAt: later, Retry: &RetryPolicy{}})
		require.NoError(t, err)
		none, err := plain.Start(ctxT(t), c, 1, &StartOpts{ScheduledAt: later})
		require.NoError(t, err)
		typed, err := backoff.Start(ctxT(t), c, 1, &StartOpts{ScheduledAt: later})
		require.NoError(t, err)

		for _, tt := range []struct {
			id   uuid.UUID
			want *RetryPolicy
		}{
			{zero.ID, &RetryPolicy{}},
			{none.ID, nil},
			{typed.ID, &RetryPolicy{Base: time.Hour, Factor: 3, Max: 2 * time.Hour}},
		} {
			run, err := c.GetRun(ctxT(t), tt.id)
			require.NoError(t, err)
			require.Equal(t, tt.want, run.Retry, run.Type)
			require.Equal(t, tt.want, jobRetry(t, run))
		}
		listed, err := c.ListRuns(ctxT(t), &ListParams{Type: "retry_none", Limit: 10})
		require.NoError(t, err)
		require.Len(t, listed, 1)
		require.Nil(t, listed[0].Retry)
		listed, err = c.ListRuns(ctxT(t), &ListParams{Type: "retry_backoff", Status: StatusPending, Limit: 10})
		require.NoError(t, err)
		require.NotEmpty(t, listed)
		for _, run := range listed {
			require.Equal(t, &RetryPolicy{Base: time.Hour, Factor: 3, Max: 2 * time.Hour}, run.Retry)
		}
	})

	t.Run("InvalidWritesNothing", func(t *testing.T) {
		t.Parallel()
		_, err := fixed.Start(ctxT(t), c, 1, &StartOpts{IdempotencyKey: "bad-retry", Retry: &RetryPolicy{Base: time.Second, Factor: 0.5}})
		var verr *ValidationError
		require.ErrorAs(t, err, &verr)
		require.Equal(t, "StartOpts.Retry.Factor", verr.Field)
		require.Zero(t, countRows(t, env.pool, `SELECT count(*) FROM `+env.db.Schema+`.workflow_runs WHERE idempotency_key = 'bad-retry'`))

		bad := Define("retry_bad", failingRun, &DefineOpts{Retry: &RetryPolicy{Delay: time.Second, Jitter: 2}})
		_, err = bad.Start(context.Background(), c, 1, nil)
		require.ErrorAs(t, err, &verr)
		require.Equal(t, "DefineOpts.Retry.Jitter", verr.Field)
	})
}

func TestRetryPolicyJSON(t *testing.T) {
	t.Parallel()

	p := RetryPolicy{Base: time.Second, Factor: 2, Max: time.Minute, Jitter: 0.1}
	doc, err := json.Marshal(p)
	require.NoError(t, err)
	require.JSONEq(t, `{"base": 1000000000, "factor": 2, "max": 60000000000, "jitter": 0.1}`, string(doc))
}

func TestRetryPolicyString(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		p    RetryPolicy
		want string
	}{
		{RetryPolicy{}, "retries on River's backoff"},
		{RetryPolicy{Delay: 30 * time.Second}, "retries after 30s"},
		{RetryPolicy{Delay: 90 * time.Second, Jitter: 0.25}, "retries after 1m30s, less up to 25 %"},
		{RetryPolicy{Base: time.Second}, "retries after 1s, ×2 each time"},
		{RetryPolicy{Base: time.Second, Factor: 1.5, Max: time.Hour}, "retries after 1s, ×1.5 each time, at most 1h"},
		{RetryPolicy{Base: time.Second, Factor: 2, Max: 5 * time.Minute, Jitter: 0.1}, "retries after 1s, ×2 each time, at most 5m, less up to 10 %"},
	} {
		require.Equal(t, tc.want, tc.p.String(), "%#v", tc.p)
	}
}
