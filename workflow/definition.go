package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"time"

	"github.com/riverqueue/river"
)

// Func is the body of a workflow: a deterministic function of its input whose
// side effects all happen inside steps (Step, StepTx), so that a replay can
// skip what already happened.
type Func[In, Out any] func(ctx Context, input In) (Out, error)

// DefineOpts are per-type defaults for runs of a workflow. A nil *DefineOpts
// uses every default. StartOpts override them per run.
type DefineOpts struct {
	// MaxAttempts is how many attempts (River jobs attempts) a run gets before
	// it is marked failed. Sleeping and waiting do not use up attempts.
	//
	// Defaults to 10.
	MaxAttempts int

	// Retry is how long a run waits between a failed attempt and the next
	// (see RetryPolicy); StartOpts.Retry and a schedule's replace it whole.
	//
	// Defaults to nil: River's backoff (attempt^4 seconds).
	Retry *RetryPolicy

	// Priority is the River priority (1 highest, 4 lowest) of the run's job.
	//
	// Defaults to 1.
	Priority int

	// Queue is the River queue the run's job goes to.
	//
	// Defaults to river.QueueDefault.
	Queue string

	// TenantLimit is the most runs of this type of one tenant
	// (StartOpts.Tenant) that work at once, across every client of the
	// database; an operator may set another for one tenant
	// (Client.SetTenantLimit: a big tenant gets 50 where the rest get 5).
	// A run works while an attempt of it runs (its River job is running):
	// one that sleeps, waits for a signal or for a child counts for
	// nothing. A run over the limit is held back by River's fetch without
	// holding a worker or being retried (its job stays ready in its place,
	// its metadata says why, and GetRun shows it held) and starts when a
	// run of its tenant ends its attempt, in the order its tenant's runs
	// were started. A run without a tenant is not limited. See
	// tenant_limit.go for how the limit holds under racing clients and
	// crashes.
	//
	// Defaults to 0: no limit.
	TenantLimit int

	// TenantRate is the most attempts of runs of this type of one tenant
	// that start per period, across every client of the database: at most
	// TenantRate.Limit per TenantRate.Per over time, and in any window of
	// length Per at most Limit plus a tenth of a second's worth of the rate
	// (at least 1), the bucket a fetch may take at once after a quiet spell
	// (a tenant seen for the first time starts with one token). Each attempt
	// counts: a first one, a retry, one that resumes after a sleep. A run
	// over the rate starts later, when its tenant's next token comes; it
	// never fails for it, and holds no worker meanwhile: its job waits as
	// River's available, fetched in its tenant's turn once a token is
	// there; GetRun shows it waiting (Run.Held HeldTenantRate) and Tenants
	// counts it (Tenant.RateLimited). A run without a tenant is not rated.
	// An operator may set another rate for one tenant
	// (Client.SetTenantRate). The tokens live in tributary_tenant_rates,
	// taken in the same transaction as the fetch that starts the attempts.
	//
	// Defaults to the zero Rate: no rate limit.
	TenantRate Rate

	// Timeout bounds one attempt: River cancels the attempt's context after it.
	// Completed steps are kept; the next attempt continues after them.
	//
	// Defaults to 0, which leaves River's Config.JobTimeout in force (one
	// minute unless configured). -1 means no timeout; beware that River
	// never rescues a job without a timeout, so a run whose worker crashes
	// mid-attempt then stays running until an operator cancels it.
	Timeout time.Duration
}

const (
	defaultMaxAttempts = 10
	maxNameLength      = 128
	maxStepNameLength  = 200
)

// Names of workflow types: letters, digits and _ . : - (starting with a letter
// or digit), as River requires of job kinds.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:\-]*$`)

// Definition is a workflow type: a name, a typed function, and defaults. Make
// one with Define, list it in Config.Workflows, and start runs of it with
// Start or StartTx. A Definition is immutable and safe for concurrent use.
type Definition[In, Out any] struct {
	err     error
	fn      Func[In, Out]
	name    string
	opts    DefineOpts
	outType string
}

// Define makes a workflow type from fn. Input and output must be
// JSON-encodable; they are stored in the workflow_runs row.
//
// Define does not panic: a bad name or a nil function is reported as a
// *ValidationError by NewClient and by every Start of the definition. opts may
// be nil.
func Define[In, Out any](name string, fn Func[In, Out], opts *DefineOpts) *Definition[In, Out] {
	d := &Definition[In, Out]{fn: fn, name: name, outType: typeName[Out]()}
	if opts != nil {
		d.opts = *opts
	}
	d.opts.MaxAttempts = orDefault(d.opts.MaxAttempts, defaultMaxAttempts)
	d.opts.Priority = orDefault(d.opts.Priority, 1)
	d.opts.Queue = orDefaultString(d.opts.Queue, river.QueueDefault)
	d.err = d.validate()
	return d
}

// Name is the workflow type's name, as stored in workflow_runs.workflow_type.
func (d *Definition[In, Out]) Name() string { return d.name }

// Kind is the River job kind of the type's runs: "workflow:" + Name. River UI
// lists and filters runs by it.
func (d *Definition[In, Out]) Kind() string { return kindOf(d.name) }

func (d *Definition[In, Out]) validate() error {
	if err := validateName(d.name); err != nil {
		return err
	}
	if d.fn == nil {
		return &ValidationError{Field: "fn", Problem: fmt.Sprintf("workflow %q has a nil function; pass the function that implements it to Define", d.name)}
	}
	if err := d.opts.TenantRate.check("DefineOpts.TenantRate"); err != nil {
		return err
	}
	if d.opts.Retry != nil {
		if err := d.opts.Retry.check("DefineOpts.Retry"); err != nil {
			return err
		}
	}
	if d.opts.TenantLimit < 0 {
		return &ValidationError{Field: "DefineOpts.TenantLimit", Problem: fmt.Sprintf("is %d; use 1 or more, or 0 for no limit", d.opts.TenantLimit)}
	}
	return validatePolicy("DefineOpts", d.opts.MaxAttempts, d.opts.Priority, d.opts.Queue)
}

// validateName checks a workflow type name, for Define and for callers that
// only have the name (a schedule: wfruntime.Runtime.ValidateTypeName). It
// returns a *ValidationError or nil.
func validateName(name string) error {
	switch {
	case name == "":
		return &ValidationError{Field: "name", Problem: `workflow name is empty; use a short stable name such as "send_invoice"`}
	case len(name) > maxNameLength:
		return &ValidationError{Field: "name", Problem: fmt.Sprintf("workflow name is %d bytes, the limit is %d; use a shorter name", len(name), maxNameLength)}
	case !nameRE.MatchString(name):
		return &ValidationError{Field: "name", Problem: fmt.Sprintf("workflow name %q has characters other than letters, digits and _ . : -; use a name such as \"send_invoice\"", name)}
	}
	return nil
}

func validatePolicy(prefix string, maxAttempts, priority int, queue string) error {
	if maxAttempts < 1 {
		return &ValidationError{Field: prefix + ".MaxAttempts", Problem: fmt.Sprintf("is %d; it must be at least 1", maxAttempts)}
	}
	if priority < 1 || priority > 4 {
		return &ValidationError{Field: prefix + ".Priority", Problem: fmt.Sprintf("is %d; River priorities run from 1 (highest) to 4", priority)}
	}
	if queue != "" && !queueRE.MatchString(queue) {
		return &ValidationError{Field: prefix + ".Queue", Problem: fmt.Sprintf("%q is not a valid River queue name; use lowercase letters, digits, _ and -", queue)}
	}
	return nil
}

var queueRE = regexp.MustCompile(`^[a-z0-9]+(?:[_|\-]?[a-z0-9]+)*$`)

func kindOf(name string) string { return workflowKindPrefix + name }

// workflowKindPrefix begins the River job kind of every workflow type.
const workflowKindPrefix = "workflow:"

// typeName names a Go type for memo records, so that replaying a memo into a
// different type is caught as a divergence.
func typeName[T any]() string {
	return reflect.TypeFor[T]().String() // "interface {}" for any
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func orDefaultString(v, def string) string { return orDefault(v, def) }

// Registrable is a workflow definition of any input and output type. Only
// *Definition implements it.
type Registrable interface {
	// Name is the workflow type's name.
	Name() string

	definition() *registration
}

// registration is the type-erased view of a Definition the engine runs.
type registration struct {
	err     error
	name    string
	kind    string
	opts    DefineOpts
	outType string
	// run decodes the input, calls the function and encodes the output.
	run func(ctx *wfContext, input json.RawMessage) (json.RawMessage, error)
	// checkInput returns a *ValidationError when input does not decode
	// into the workflow's input type.
	checkInput func(input []byte) error
}

func (d *Definition[In, Out]) definition() *registration {
	return &registration{
		err:     d.err,
		name:    d.name,
		kind:    d.Kind(),
		opts:    d.opts,
		outType: d.outType,
		checkInput: func(input []byte) error {
			var in In
			if err := json.Unmarshal(input, &in); err != nil {
				return &ValidationError{Field: "input", Problem: fmt.Sprintf("does not decode into %s, the input of workflow %q (%v); fix the input or the type", typeName[In](), d.name, err)}
			}
			return nil
		},
		run: func(ctx *wfContext, input json.RawMessage) (json.RawMessage, error) {
			var in In
			if len(input) > 0 {
				if err := json.Unmarshal(input, &in); err != nil {
					return nil, NonRetryable(fmt.Errorf("decode input of workflow %q into %s: %w", d.name, typeName[In](), err))
				}
			}
			out, err := d.fn(ctx, in)
			if err != nil {
				return nil, err
			}
			encoded, err := json.Marshal(out)
			if err != nil {
				return nil, NonRetryable(fmt.Errorf("encode output of workflow %q (%s): %w", d.name, typeName[Out](), err))
			}
			return encoded, nil
		},
	}
}

var _ context.Context = (*wfContext)(nil)

// Rate is a rate limit: at most Limit per Per (DefineOpts.TenantRate,
// Client.SetTenantRate). The zero Rate is no limit. In JSON, Per is in
// nanoseconds, as a time.Duration is.
type Rate struct {
	Limit int           `json:"limit"`
	Per   time.Duration `json:"per"`
}

// String is r for people: "100 per 1m0s"; "none" for the zero Rate.
func (r Rate) String() string {
	if r == (Rate{}) {
		return "none"
	}
	return fmt.Sprintf("%d per %s", r.Limit, r.Per)
}

// check validates r, a field named field.
func (r Rate) check(field string) error {
	switch {
	case r == Rate{}:
		return nil
	case r.Limit < 1:
		return &ValidationError{Field: field + ".Limit", Problem: fmt.Sprintf("is %d; use 1 or more per Per, or the zero Rate for no rate limit", r.Limit)}
	case r.Per <= 0:
		return &ValidationError{Field: field + ".Per", Problem: fmt.Sprintf("is %s, a rate with no period; give a positive duration such as time.Second", r.Per)}
	}
	return nil
}

// perSecond is r in attempts a second, and the bucket a fetch may take at
// once: a tenth of a second's worth, at least 1.
func (r Rate) perSecond() (rate, burst float64) {
	rate = float64(r.Limit) / r.Per.Seconds()
	return rate, max(1, math.Ceil(rate/10))
}
