package workflow

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/durfmt"
)

// RetryPolicy is how long a run waits, after an attempt fails, before its
// next attempt: a fixed Delay, or an exponential backoff from Base by
// Factor up to Max, either shortened by up to Jitter of itself. How many
// attempts a run gets is MaxAttempts (DefineOpts, StartOpts,
// schedule.Params), not part of the policy.
//
// A policy is set per workflow type (DefineOpts.Retry), per run
// (StartOpts.Retry) and per schedule (schedule.Params.Retry). The most
// specific one wins, whole, never field by field: a run's StartOpts.Retry,
// else for a schedule's run the schedule's, else the type's. A run with
// none, or with the zero RetryPolicy, retries on River's backoff (the
// client's River Config.RetryPolicy: attempt^4 seconds, with 10% jitter).
//
// The policy a run starts with is written on its River job (the job's
// args, carried over to every later job of the run: after a sleep, a
// wait, an operator's retry), so that every client, after any crash,
// computes the same delay for the same attempt: the delay is a function of
// the policy, the run's id and the attempt's number, jitter included. A
// run started by a client that does not register its type (the CLI, a web
// app that only starts runs) and with no policy of its own carries none;
// the working client's DefineOpts.Retry then applies.
//
// The delay is measured from the moment the failed attempt ends, on the
// client's clock (the database's, or Config.Clock), and is when River makes
// the run's job available again: River's scheduler makes a job that waits
// longer than its interval (five seconds) available within that interval.
// A policy applies to attempts that fail (an error, a panic, a timeout); an
// error made with RetryAfter waits its own delay instead, and an attempt
// whose client died is rescued as River and the worker registry rescue it
// (see Config).
//
// In JSON (the River job's args, the schedule's row), durations are in
// nanoseconds, as a time.Duration is.
type RetryPolicy struct {
	// Delay is the fixed wait before every retry. Set either Delay or Base.
	Delay time.Duration `json:"delay,omitempty"`

	// Base is the wait before the first retry of an exponential backoff:
	// the retry after the run's attempt n waits Base·Factor^(n-1), at most
	// Max. The attempt number is the run's (Run.Attempt), which continues
	// across sleeps and an operator's retries.
	Base time.Duration `json:"base,omitempty"`

	// Factor multiplies the wait after each failed attempt of an
	// exponential backoff; at least 1. Only with Base.
	//
	// Defaults to 2.
	Factor float64 `json:"factor,omitempty"`

	// Max bounds the wait of an exponential backoff, before jitter; at
	// least Base. Only with Base.
	//
	// Defaults to 0: no bound.
	Max time.Duration `json:"max,omitempty"`

	// Jitter is the largest fraction of the wait taken off it, from 0 to
	// 1: a wait d becomes a wait in [d·(1-Jitter), d], so that Delay and
	// Max stay upper bounds. Which fraction a run's retry gets is drawn
	// from the run's id and the attempt's number: runs that failed
	// together spread apart, and every client computes the same wait.
	// With Delay or Base only.
	//
	// Defaults to 0: no jitter.
	Jitter float64 `json:"jitter,omitempty"`
}

// defaultRetryFactor is RetryPolicy.Factor's default.
const defaultRetryFactor = 2

// IsZero reports whether p is the zero policy: River's backoff.
func (p RetryPolicy) IsZero() bool { return p == RetryPolicy{} }

// String is p in words, as the dashboard and the CLI show it: "retries
// after 30s", "retries after 1s, ×2 each time, at most 5m, less up to
// 10 %"; "retries on River's backoff" for the zero policy.
func (p RetryPolicy) String() string {
	var s string
	switch {
	case p.IsZero():
		return "retries on River's backoff"
	case p.Delay > 0:
		s = "retries after " + durfmt.Short(p.Delay)
	default:
		s = fmt.Sprintf("retries after %s, ×%g each time", durfmt.Short(p.Base), orDefault(p.Factor, defaultRetryFactor))
		if p.Max > 0 {
			s += ", at most " + durfmt.Short(p.Max)
		}
	}
	if p.Jitter > 0 {
		s += fmt.Sprintf(", less up to %g %%", p.Jitter*100)
	}
	return s
}

// Validate reports whether p is a valid policy. The error is a
// *ValidationError whose Field names the field ("Retry.Factor").
func (p RetryPolicy) Validate() error { return p.check("Retry") }

// check is Validate with the fields named under prefix.
func (p RetryPolicy) check(prefix string) error {
	problem := func(field, format string, args ...any) error {
		return &ValidationError{Field: prefix + "." + field, Problem: fmt.Sprintf(format, args...)}
	}
	switch {
	case p.Delay < 0:
		return problem("Delay", "is %s; give a positive wait such as 30*time.Second, or 0 with Base for an exponential backoff", p.Delay)
	case p.Base < 0:
		return problem("Base", "is %s; give a positive first wait such as time.Second, or 0 with Delay for a fixed wait", p.Base)
	case p.Delay > 0 && p.Base > 0:
		return problem("Base", "is set with Delay; a policy is fixed (Delay) or exponential (Base, Factor, Max), not both")
	case math.IsNaN(p.Factor) || math.IsInf(p.Factor, 0) || p.Factor != 0 && p.Factor < 1:
		return problem("Factor", "is %g; use 1 or more (2 doubles the wait after each attempt), or 0 for 2", p.Factor)
	case p.Factor != 0 && p.Base == 0:
		return problem("Factor", "is set without Base; a factor multiplies an exponential backoff's Base")
	case p.Max < 0:
		return problem("Max", "is %s; give a positive bound, or 0 for none", p.Max)
	case p.Max > 0 && p.Base == 0:
		return problem("Max", "is set without Base; Max bounds an exponential backoff (a fixed Delay is its own bound)")
	case p.Max > 0 && p.Max < p.Base:
		return problem("Max", "is %s, less than Base (%s); give a bound of at least Base", p.Max, p.Base)
	case math.IsNaN(p.Jitter) || p.Jitter < 0 || p.Jitter > 1:
		return problem("Jitter", "is %g; give a fraction from 0 (none) to 1 (a wait anywhere from 0 to the full wait)", p.Jitter)
	case p.Jitter > 0 && p.Delay == 0 && p.Base == 0:
		return problem("Jitter", "is set without Delay or Base; River's backoff, which the policy leaves in force, has its own jitter")
	}
	return nil
}

// resolved is p with its defaults filled in, as a run's job stores it, so
// that a later change of a default does not change a started run's waits.
func (p RetryPolicy) resolved() RetryPolicy {
	if p.Base > 0 {
		p.Factor = orDefault(p.Factor, defaultRetryFactor)
	}
	return p
}

// delayAfter is the wait after the run's attempt number attempt (1 for the
// first) failed. It is 0 for the zero policy: River's backoff applies.
func (p RetryPolicy) delayAfter(runID uuid.UUID, attempt int) time.Duration {
	var d time.Duration
	switch {
	case p.Delay > 0:
		d = p.Delay
	case p.Base > 0:
		limit := float64(math.MaxInt64)
		if p.Max > 0 {
			limit = float64(p.Max)
		}
		wait := float64(p.Base) * math.Pow(orDefault(p.Factor, defaultRetryFactor), float64(max(attempt, 1)-1))
		if wait >= limit {
			wait = limit
		}
		d = time.Duration(wait)
		if wait >= float64(math.MaxInt64) {
			d = math.MaxInt64
		}
	default:
		return 0
	}
	if p.Jitter > 0 {
		d -= time.Duration(float64(d) * p.Jitter * jitterDraw(runID, attempt))
	}
	return d
}

// jitterDraw is a number in [0, 1) drawn from the run's id and the
// attempt's number: the same for every client, different across runs.
func jitterDraw(runID uuid.UUID, attempt int) float64 {
	h := fnv.New64a()
	_, _ = h.Write(runID[:])
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(attempt))
	_, _ = h.Write(n[:])
	return float64(h.Sum64()>>11) / (1 << 53)
}

// NextRetry is when River makes the run's job available again after an
// attempt fails: the run's RetryPolicy (its job's, else the working
// client's DefineOpts.Retry) applied from now, or the zero time for River's
// backoff.
func (w *worker) NextRetry(job *river.Job[runArgs]) time.Time {
	p := job.Args.Retry
	if p == nil {
		p = w.reg.opts.Retry
	}
	if p == nil || p.IsZero() {
		return time.Time{}
	}
	at := w.c.now().Add(p.delayAfter(job.Args.RunID, job.Args.AttemptBase+job.Attempt))
	if w.c.dbClock != nil {
		// River compares the time with its own, the local clock, and falls
		// back to its backoff for a time before it: the database's clock
		// may be a little behind.
		if local := time.Now(); at.Before(local) {
			at = local
		}
	}
	return at
}

// runRetry is the policy a run's job carries: opts' when set, else the
// schedule's (scheduled), else the type's (defaults); nil when none is
// set, and the zero policy kept as set (it asks for River's backoff over
// the type's policy).
func runRetry(opts, scheduled, defaults *RetryPolicy) *RetryPolicy {
	for _, p := range []*RetryPolicy{opts, scheduled, defaults} {
		if p != nil {
			r := p.resolved()
			return &r
		}
	}
	return nil
}
