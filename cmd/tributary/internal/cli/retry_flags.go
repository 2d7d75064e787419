package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/internal/durfmt"
	"github.com/tributary-go/tributary/workflow"
)

// retryFlagNames are the flags of a retry policy (workflow.RetryPolicy),
// which workflow start and schedule create and update share.
var retryFlagNames = []string{"retry-delay", "retry-backoff", "retry-jitter"}

// retryFlags are the values of retryFlagNames.
type retryFlags struct {
	delay   *time.Duration
	backoff *string
	jitter  *float64
}

// addRetryFlags adds the retry policy's flags to fs; whose says whose
// policy they set ("the run's", "each run's"), none what leaving them out
// means.
func addRetryFlags(fs *pflag.FlagSet, whose, none string) *retryFlags {
	return &retryFlags{
		delay: fs.Duration("retry-delay", 0, "wait this `duration` after "+whose+" failed attempt before the next, such as 30s: a fixed delay, "+
			"or --retry-backoff for an exponential one (default "+none+")"),
		backoff: fs.String("retry-backoff", "", "wait exponentially after "+whose+" failed attempts: `base=D,factor=F,max=D`, such as base=1s,factor=2,max=5m, "+
			"waits 1s, 2s, 4s … up to 5m (factor defaults to 2, max to no bound)"),
		jitter: fs.Float64("retry-jitter", 0, "take up to this `fraction` (0 to 1) off each wait of --retry-delay or --retry-backoff, "+
			"drawn per run and attempt, such as 0.1 (default 0)"),
	}
}

// policy is the retry policy the flags give, nil when none is given. Bad
// values are usage errors naming the flag, before anything is read or
// written. --retry-delay 0 alone is the zero policy: River's backoff for a
// run, none (the type's) for a schedule.
func (r *retryFlags) policy(fs *pflag.FlagSet) (*workflow.RetryPolicy, error) {
	given := false
	for _, name := range retryFlagNames {
		given = given || fs.Changed(name)
	}
	if !given {
		return nil, nil
	}
	p := &workflow.RetryPolicy{Delay: *r.delay, Jitter: *r.jitter}
	if fs.Changed("retry-backoff") {
		for _, part := range strings.Split(*r.backoff, ",") {
			key, value, _ := strings.Cut(strings.TrimSpace(part), "=")
			var err error
			switch key {
			case "base":
				p.Base, err = time.ParseDuration(value)
			case "max":
				p.Max, err = time.ParseDuration(value)
			case "factor":
				p.Factor, err = strconv.ParseFloat(value, 64)
			default:
				err = errors.New("not base, factor or max")
			}
			if err != nil {
				return nil, withHint(usageErrorf("--retry-backoff %q: %q: %v", *r.backoff, part, err),
					"pass base=D,factor=F,max=D such as base=1s,factor=2,max=5m")
			}
		}
		if p.Base == 0 {
			return nil, withHint(usageErrorf("--retry-backoff %q has no base", *r.backoff), "pass the first wait, such as base=1s")
		}
	}
	if err := p.Validate(); err != nil {
		var invalid *workflow.ValidationError
		if !errors.As(err, &invalid) {
			return nil, err
		}
		flag := "--retry-backoff"
		switch invalid.Field {
		case "Retry.Delay":
			flag = "--retry-delay"
		case "Retry.Jitter":
			flag = "--retry-jitter"
		}
		return nil, usageErrorf("%s: %s", flag, invalid.Problem)
	}
	return p, nil
}

// nextAttemptText is a run's attempts for people, as the dashboard shows
// them too: "attempt 3 of 10", and for a run waiting to retry ", next in
// 40s" (or ", next now" once due).
func nextAttemptText(run *workflow.Run, now time.Time) string {
	s := fmt.Sprintf("attempt %d of %d", run.Attempt, run.MaxAttempts)
	if run.NextAttemptAt == nil {
		return s
	}
	if wait := run.NextAttemptAt.Sub(now); wait >= time.Second {
		return s + ", next in " + durfmt.Human(wait.Round(time.Second))
	}
	return s + ", next now"
}
