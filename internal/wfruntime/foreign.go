package wfruntime

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// A River client that works the queues of workflow runs without
// Tributary's workers (an application's plain River client, an older
// deployment) fetches workflow jobs and fails them with River's
// UnknownJobKindError, using up an attempt of the run each time; with all
// attempts gone, the run fails. Tributary's own clients set
// FetchOnlyKnownKinds and never do. It cannot be refused from here, so it is
// made loud: the next attempt, on a Tributary client, sees the failure in
// the job's errors and logs an error naming the offending client and what
// to change, once a minute per client and queue.

// foreignFetchLogEvery bounds the error logs per offending client and queue.
const foreignFetchLogEvery = time.Minute

// ForeignFetches notices the attempts of workflow jobs that a River client
// without Tributary's workers failed, and remembers when each offending
// client and queue was last logged. The zero value is ready.
type ForeignFetches struct {
	mu     sync.Mutex
	logged map[[2]string]time.Time
}

// due reports whether key was last logged foreignFetchLogEvery ago or
// never, and if so records now as its last log.
func (f *ForeignFetches) due(key [2]string, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if last, seen := f.logged[key]; seen && now.Sub(last) < foreignFetchLogEvery {
		return false
	}
	if f.logged == nil {
		f.logged = make(map[[2]string]time.Time)
	}
	f.logged[key] = now
	return true
}

// Notice logs an error to logger when job's previous attempt was failed by
// a River client without the worker of its kind.
func (f *ForeignFetches) Notice(ctx context.Context, logger *slog.Logger, job *rivertype.JobRow) {
	if len(job.Errors) == 0 || job.Errors[len(job.Errors)-1].Error != (&rivertype.UnknownJobKindError{Kind: job.Kind}).Error() {
		return
	}
	// attempted_by ends with this attempt's client; the failed attempt's
	// is the one before.
	foreign := "unknown"
	if n := len(job.AttemptedBy); n >= 2 {
		foreign = job.AttemptedBy[n-2]
	}
	if !f.due([2]string{foreign, job.Queue}, time.Now()) {
		return
	}
	logger.ErrorContext(ctx, "tributary: A River client without Tributary's workers fetched a workflow job and failed it as an unknown kind, using up an attempt of its run; "+
		"give that client FetchOnlyKnownKinds: true in its river.Config (and LeaderElectionDisabled: true, so that its rescuer leaves workflow jobs alone), or keep it off this queue",
		slog.String("river_client_id", foreign), slog.String("queue", job.Queue), slog.String("kind", job.Kind),
		slog.Int64("job_id", job.ID), slog.Int("attempts_used", job.Attempt-1), slog.Int("max_attempts", job.MaxAttempts))
}
