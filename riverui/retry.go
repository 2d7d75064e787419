package riverui

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-go/tributary/internal/durfmt"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/workflow"
)

// A retry policy (workflow.RetryPolicy) in the API and the dashboard: the
// "retry" of POST /api/runs, of a schedule's body and answer, and the
// retry fields of the schedule forms.

// retryBody is a "retry" object: {"delay": "30s"}, or {"base": "1s",
// "factor": 2, "max": "5m"}, either with "jitter": 0.1; durations as Go
// duration strings. Members left out are zero: the policy's defaults.
type retryBody struct {
	Delay, Base, Max opt[wire.Duration]
	Factor, Jitter   opt[float64]
}

func (b *retryBody) members() []member {
	return []member{
		{name: "delay", dst: &b.Delay}, {name: "base", dst: &b.Base}, {name: "factor", dst: &b.Factor},
		{name: "max", dst: &b.Max}, {name: "jitter", dst: &b.Jitter},
	}
}

// UnmarshalJSON reads a retry object as a body's fields are read: an
// unknown or null member, or a value of the wrong kind, is a *memberError
// naming it.
func (b *retryBody) UnmarshalJSON(raw []byte) error {
	return readObject(raw, retryWant, "retry", "delay, base, factor, max and jitter", b.members(), func() {})
}

// retryWant is what "retry" takes.
const retryWant = `a JSON object such as {"delay": "30s"} or {"base": "1s", "factor": 2, "max": "5m", "jitter": 0.1}`

// policy is b as the Go API takes it.
func (b *retryBody) policy() workflow.RetryPolicy {
	return workflow.RetryPolicy{
		Delay: time.Duration(b.Delay.value()), Base: time.Duration(b.Base.value()), Factor: b.Factor.value(),
		Max: time.Duration(b.Max.value()), Jitter: b.Jitter.value(),
	}
}

// retryPolicy is the policy of a body's "retry" (o): nil when it was not
// sent, or sent as null, or as the zero policy ({}) when zeroIsNone, as it
// is for a schedule, whose zero policy is none.
func retryPolicy(o *opt[retryBody], zeroIsNone bool) *workflow.RetryPolicy {
	if !o.set || o.null {
		return nil
	}
	p := o.v.policy()
	if zeroIsNone && p.IsZero() {
		return nil
	}
	return &p
}

// checkRetry validates p (nil is valid) and answers the error in the
// API's words, naming the member ("retry.factor").
func checkRetry(p *workflow.RetryPolicy) error {
	if p == nil {
		return nil
	}
	var invalid *workflow.ValidationError
	if err := p.Validate(); errors.As(err, &invalid) {
		name, problem := retryProblem(invalid.Field, invalid.Problem)
		return badField(name, "%s", problem)
	} else if err != nil {
		return err
	}
	return nil
}

// retryProblem names the field of a retry policy's validation error (a Go
// name such as "Retry.Factor" or "StartOpts.Retry.Base") as the API does,
// "retry.factor", and rewords its problem with the API's member names.
func retryProblem(field, problem string) (string, string) {
	name := "retry"
	if _, member, ok := strings.Cut(field, "Retry."); ok {
		name += "." + snakeCase(member)
	}
	return name, retryWords.Replace(problem)
}

// retryWords spells a retry policy's Go names and durations in a
// validation problem as the API and the forms do.
var retryWords = strings.NewReplacer(
	"30*time.Second", `"30s"`, "time.Second", `"1s"`,
	"Delay", "delay", "Base", "base", "Factor", "factor", "Max", "max", "Jitter", "jitter",
)

// sameRetry reports whether a and b are the same policy, nil and the zero
// policy being the same (none).
func sameRetry(a, b *workflow.RetryPolicy) bool {
	var za, zb workflow.RetryPolicy
	if a != nil {
		za = *a
	}
	if b != nil {
		zb = *b
	}
	return za == zb
}

// retryFields are the retry fields of the schedule forms, as typed: a
// fixed delay, or a base with its factor and max, and a jitter in percent.
// Posted is false for a form loaded before the fields existed, which
// leaves the policy unchanged.
type retryFields struct {
	Posted                   bool
	Delay, Base, Factor, Max string
	Jitter                   string
}

// retryFieldsOf fills the form's retry fields with p.
func retryFieldsOf(p *workflow.RetryPolicy) retryFields {
	f := retryFields{Posted: true}
	if p == nil {
		return f
	}
	dur := func(d time.Duration) string {
		if d == 0 {
			return ""
		}
		return durfmt.Short(d)
	}
	f.Delay, f.Base, f.Max = dur(p.Delay), dur(p.Base), dur(p.Max)
	if p.Factor != 0 {
		f.Factor = strconv.FormatFloat(p.Factor, 'g', -1, 64)
	}
	if p.Jitter != 0 {
		f.Jitter = strconv.FormatFloat(p.Jitter*100, 'g', -1, 64)
	}
	return f
}

// policy reads the form's retry fields: nil when they are all empty (no
// policy: the workflow type's). An error is about one field, named as
// the form names it ("retry_factor").
func (f retryFields) policy() (*workflow.RetryPolicy, error) {
	if f.Delay == "" && f.Base == "" && f.Factor == "" && f.Max == "" && f.Jitter == "" {
		return nil, nil
	}
	var p workflow.RetryPolicy
	for _, d := range []struct {
		name, form, text string
		dst              *time.Duration
	}{
		{"retry_delay", f.Delay, "retry delay", &p.Delay},
		{"retry_base", f.Base, "first retry's wait", &p.Base},
		{"retry_max", f.Max, "longest wait", &p.Max},
	} {
		if d.form == "" {
			continue
		}
		v, err := formDuration(d.text, d.form, "leave it empty")
		if err != nil {
			return nil, inField(d.name, err)
		}
		*d.dst = v
	}
	for _, n := range []struct {
		name, form, text string
		dst              *float64
		scale            float64
	}{
		{"retry_factor", f.Factor, "factor", &p.Factor, 1},
		{"retry_jitter", f.Jitter, "jitter", &p.Jitter, 100},
	} {
		if n.form == "" {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(n.form), "%"), 64)
		if err != nil {
			return nil, inField(n.name, badRequest("%s %q is not a number; write one like 2 or 1.5, or leave it empty", n.text, n.form))
		}
		*n.dst = v / n.scale
	}
	var invalid *workflow.ValidationError
	if err := p.Validate(); errors.As(err, &invalid) {
		_, problem := retryProblem(invalid.Field, invalid.Problem)
		member := strings.ToLower(invalid.Field[strings.LastIndexByte(invalid.Field, '.')+1:])
		if member == "jitter" {
			problem = strings.Replace(problem, fmt.Sprintf("is %g;", p.Jitter), fmt.Sprintf("is %g %%;", p.Jitter*100), 1)
			problem = strings.NewReplacer("a fraction from 0 (none) to 1", "a percentage from 0 (none) to 100").Replace(problem)
		}
		return nil, inField("retry_"+member, badRequest("retry %s %s", member, problem))
	} else if err != nil {
		return nil, err
	}
	return &p, nil
}
