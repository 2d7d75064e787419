// Package bench measures Tributary against raw River on a real database, so
// that the cost of a workflow run and of a step read as ratios on the
// user's own hardware. It backs `tributary bench`. Its workflows and River
// jobs (ZeroSteps, ThreeSteps, NoopArgs, CheckpointArgs) are also those of
// the package benchmarks in workflow/bench_test.go, so that both measure
// the same work.
//
// Run works four cases, in this order:
//
//  1. River jobs whose worker does nothing.
//  2. Workflow runs of 0 steps.
//  3. River jobs whose worker commits 3 checkpoints: an INSERT of a small
//     JSON output per step, each in a transaction of its own.
//  4. Workflow runs of 3 steps (workflow.Step, outputs stored as memos).
//
// Config.Keyed adds the workflow cases with a tenant on every run, and
// Config.Starts the four cases with their items inserted or started while
// the clock runs, by concurrent callers one a call.
//
// Each case inserts its items before the clock starts, then starts one
// queue of Config.Workers workers with River's benchmark fetch tuning
// (FetchCooldown 2ms, FetchPollInterval 20ms) and times until River has
// reported every item's job completed. River sends that event after the
// job's final state is committed, for raw jobs and workflow runs alike.
//
// Each case runs on a schema of its own, created and migrated for it and
// dropped afterwards, also when the case fails or ctx is cancelled: Run
// never reads or writes any other table.
//
// RunSchedules, behind `tributary bench schedules`, measures something
// else the same way: how late runs start when many schedule slots fall due
// in the same second, beside River's periodic jobs doing the same (see
// schedules.go).
package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/workflow"
)

// Defaults of Config.
const (
	DefaultItems   = 5000
	DefaultRounds  = 1
	DefaultWorkers = 20
	DefaultCallers = 20
)

// Config configures Run.
type Config struct {
	// Items is how many River jobs or workflow runs each case works, all
	// inserted before the clock starts.
	//
	// Defaults to DefaultItems (5000).
	Items int

	// Logger receives River's, the workflow engine's and the migrator's
	// logs.
	//
	// Defaults to a logger that discards everything.
	Logger *slog.Logger

	// Rounds is how many times the four cases run, interleaved (all four,
	// then all four again, every other round in reverse order), so that a
	// machine busy with something else for a moment slows one round of
	// every case rather than every round of one, and no case always runs
	// first or last.
	//
	// Defaults to DefaultRounds (1).
	Rounds int

	// Workers is the MaxWorkers of the one River queue of every case.
	//
	// Defaults to DefaultWorkers (20).
	Workers int

	// Middleware is installed on the workflow cases' clients
	// (workflow.Config.Middleware), to measure what it costs.
	//
	// Defaults to none.
	Middleware []workflow.Middleware

	// Keyed adds four cases after the four: the workflow cases with a
	// tenant on every run (StartOpts.Tenant), first all of one tenant with
	// no limit, then spread over KeyedTenants tenants under a tenant limit
	// (KeyedLimit) that none reaches; and their ratios to the same
	// workflows without a tenant, from the same rounds.
	Keyed bool

	// Starts adds four cases after the others: the four cases of Run with
	// their items inserted (River) or started (workflows) while the clock
	// runs, one a call from Callers callers at once, and the ratios of the
	// workflow cases to the River cases among them. The time then includes
	// every start, as it does in an application whose runs are started by
	// its requests.
	Starts bool

	// Callers is how many goroutines insert or start the items of the
	// Starts cases at once.
	//
	// Defaults to DefaultCallers (20).
	Callers int
}

// withDefaults returns a copy of c with defaults filled in, or an error when
// a field is negative.
func (c *Config) withDefaults() (*Config, error) {
	if c == nil {
		c = &Config{}
	}
	out := *c
	if err := countDefaults("Config", []countField{
		{"Items", &out.Items, DefaultItems},
		{"Rounds", &out.Rounds, DefaultRounds},
		{"Workers", &out.Workers, DefaultWorkers},
		{"Callers", &out.Callers, DefaultCallers},
	}); err != nil {
		return nil, err
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	return &out, nil
}

// countField is a count of a config struct, with its default.
type countField struct {
	name  string
	value *int
	def   int
}

// countDefaults sets each zero field to its default, and refuses a negative
// one, naming it in the config struct named config.
func countDefaults(config string, fields []countField) error {
	for _, f := range fields {
		if *f.value < 0 {
			return fmt.Errorf("bench: %s.%s is %d; it must be at least 1, or 0 for the default %d", config, f.name, *f.value, f.def)
		}
		*f.value = cmp.Or(*f.value, f.def)
	}
	return nil
}

// durationField is a duration of a config struct, with its default.
type durationField struct {
	name  string
	value *time.Duration
	def   time.Duration
}

// durationDefaults sets each zero field to its default, and refuses a
// negative one, naming it in the config struct named config.
func durationDefaults(config string, fields []durationField) error {
	for _, f := range fields {
		if *f.value < 0 {
			return fmt.Errorf("bench: %s.%s is %s; it must be positive, or 0 for the default %s", config, f.name, *f.value, f.def)
		}
		*f.value = cmp.Or(*f.value, f.def)
	}
	return nil
}

// Result is what Run measured. Its JSON form is the output of
// `tributary bench --json`; rates are items per second.
type Result struct {
	// Cases are the four cases, in the order they ran.
	Cases []*CaseResult `json:"cases"`

	// Items, Rounds and Workers are the configuration the cases ran with.
	Items   int `json:"items"`
	Rounds  int `json:"rounds"`
	Workers int `json:"workers"`

	// Ratios compare each workflow case with the River case that does the
	// same work without Tributary: workflow 0 steps / River, and workflow 3
	// steps / River with 3 checkpoints.
	Ratios []*Ratio `json:"ratios"`

	// Server is the Postgres server's server_version, such as "16.4" or
	// "15.20 (Debian 15.20-0+deb12u1)".
	Server string `json:"server"`
}

// CaseResult is one case's throughput over all rounds.
type CaseResult struct {
	// Key names the case in machine-readable output: river_0_steps,
	// workflow_0_steps, river_3_checkpoints or workflow_3_steps.
	Key string `json:"case"`

	// Name names the case for people: "River jobs, 0 steps".
	Name string `json:"name"`

	// Steps is the number of steps (or checkpoints) of each item.
	Steps int `json:"steps"`

	// Rounds are the case's measurements, one a round, in order.
	Rounds []*Round `json:"rounds"`

	// Mean, Min and Max are the items per second of the rounds: their
	// arithmetic mean, lowest and highest.
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// Round is one measurement of a case.
type Round struct {
	// Completed is the number of items the database holds as completed
	// after the case (jobs for River cases, runs for workflow cases). Run
	// fails a case unless it is Items, and unless every step or checkpoint
	// of them is stored too.
	Completed int `json:"completed"`

	// Elapsed is the time from starting the client, with every item
	// already inserted, until River reported the last item's job completed.
	// It includes fetching, working and completing; not inserting (but in
	// the cases of Config.Starts, whose items are inserted while the clock
	// runs), creating the schema, or stopping the client. In JSON it is
	// elapsed_seconds.
	Elapsed time.Duration `json:"-"`

	// Rate is Completed divided by Elapsed, in items per second.
	Rate float64 `json:"rate"`

	// Schema is the schema the round of the case ran in, dropped before
	// Run returned.
	Schema string `json:"-"`
}

// MarshalJSON writes Elapsed as elapsed_seconds.
func (r *Round) MarshalJSON() ([]byte, error) {
	type round Round // without this method
	return json.Marshal(struct {
		*round
		ElapsedSeconds float64 `json:"elapsed_seconds"`
	}{(*round)(r), r.Elapsed.Seconds()})
}

// Ratio is the throughput of a workflow case divided by that of the River
// case that does the same work by hand: 0.5 means a workflow run costs
// twice the time of the job.
type Ratio struct {
	// Name names the ratio: "workflow 0 steps / River".
	Name string `json:"name"`

	// Of and To are the Keys of the cases divided: Of's rate over To's.
	Of string `json:"of"`
	To string `json:"to"`

	// Value is the ratio of the two cases' mean rates.
	Value float64 `json:"value"`

	// Min and Max are the lowest and highest ratio of one round's two
	// measurements, which ran close together in time.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// Run runs every case config.Rounds times on the database of pool and
// returns what it measured. It prints a line on progress as each case
// finishes ("River jobs, 0 steps: 5000 items… 6,512/s"); progress may be
// nil.
//
// pool only creates and drops schemas. Each case runs on a schema of its
// own, named SchemaPrefix and random hex, with River's and Tributary's
// tables, through a pool of its own with pool's connection settings and the
// schema as its search_path; the schema is dropped afterwards, also when the
// case fails or ctx is cancelled (a failed drop is part of the error). A
// case fails when one of its jobs ends in any state other than completed,
// when no item completes for a minute, or when the database does not hold
// every item and step as completed afterwards; Run then stops and returns
// the error.
func Run(ctx context.Context, pool *pgxpool.Pool, config *Config, progress io.Writer) (*Result, error) {
	config, err := config.withDefaults()
	if err != nil {
		return nil, err
	}
	if progress == nil {
		progress = io.Discard
	}

	res := &Result{Items: config.Items, Rounds: config.Rounds, Workers: config.Workers}
	if err := pool.QueryRow(ctx, "SHOW server_version").Scan(&res.Server); err != nil {
		return nil, fmt.Errorf("bench: reading the server version: %w", err)
	}
	run := slices.Clone(cases)
	if config.Keyed {
		run = append(run, keyedCases...)
	}
	if config.Starts {
		run = append(run, startedCases...)
	}
	for _, c := range run {
		res.Cases = append(res.Cases, &CaseResult{Key: c.key, Name: c.name, Steps: c.steps})
	}

	err = runRounds(progress, config, res, func(i int) (*Round, error) {
		return runCase(ctx, pool, run[i], config)
	})
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]*CaseResult, len(res.Cases))
	for _, c := range res.Cases {
		byKey[c.Key] = c
	}
	res.Ratios = []*Ratio{
		ratio("workflow 0 steps / River", byKey["workflow_0_steps"], byKey["river_0_steps"]),
		ratio("workflow 3 steps / River with 3 checkpoints", byKey["workflow_3_steps"], byKey["river_3_checkpoints"]),
	}
	if config.Keyed {
		res.Ratios = append(res.Ratios,
			ratio("workflow 0 steps, one tenant / no tenant", byKey["workflow_0_steps_keyed"], byKey["workflow_0_steps"]),
			ratio("workflow 0 steps, 1,000 tenants under a limit / no tenant", byKey["workflow_0_steps_limited"], byKey["workflow_0_steps"]),
			ratio("workflow 3 steps, one tenant / no tenant", byKey["workflow_3_steps_keyed"], byKey["workflow_3_steps"]),
			ratio("workflow 3 steps, 1,000 tenants under a limit / no tenant", byKey["workflow_3_steps_limited"], byKey["workflow_3_steps"]),
		)
	}
	if config.Starts {
		res.Ratios = append(res.Ratios,
			ratio("workflow 0 steps / River, starts included", byKey["workflow_0_steps_started"], byKey["river_0_steps_inserted"]),
			ratio("workflow 3 steps / River with 3 checkpoints, starts included", byKey["workflow_3_steps_started"], byKey["river_3_checkpoints_inserted"]),
		)
	}
	return res, nil
}

// runRounds runs the cases of res config.Rounds times, interleaved (all of
// them, then all again), each with run(its index); it prints a line on
// progress as each finishes, appends each round to its case and sets their
// Mean, Min and Max. The first failure stops it, named after its case.
//
// Every other round runs the cases in reverse order. Measured on a 2-core
// machine, where a case ran in its round moved its rate by more than the
// 10 % a ratio is judged on: the 0-step keyed cases, run after all the
// others, read 0.55 to 0.79 of the unkeyed ones, and 0.93 to 1.01 when
// run right after them; alternating the order puts that drift on both
// sides of every ratio instead of always on one.
func runRounds(progress io.Writer, config *Config, res *Result, run func(i int) (*Round, error)) error {
	for round := range config.Rounds {
		for k := range res.Cases {
			i := k
			if round%2 == 1 {
				i = len(res.Cases) - 1 - k
			}
			c := res.Cases[i]
			prefix := ""
			if config.Rounds > 1 {
				prefix = fmt.Sprintf("round %d/%d, ", round+1, config.Rounds)
			}
			fmt.Fprintf(progress, "%s%s: %d items… ", prefix, c.Name, config.Items)
			r, err := run(i)
			if err != nil {
				fmt.Fprintln(progress, "failed")
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			fmt.Fprintf(progress, "%s/s\n", FormatCount(r.Rate))
			c.Rounds = append(c.Rounds, r)
		}
	}
	for _, c := range res.Cases {
		c.summarize()
	}
	return nil
}

// summarize sets Mean, Min and Max from the rounds.
func (c *CaseResult) summarize() {
	rates := make([]float64, len(c.Rounds))
	sum := 0.0
	for i, r := range c.Rounds {
		rates[i] = r.Rate
		sum += r.Rate
	}
	c.Mean = sum / float64(len(rates))
	c.Min, c.Max = slices.Min(rates), slices.Max(rates)
}

// ratio divides of's rates by to's: the means, and each round's pair.
func ratio(name string, of, to *CaseResult) *Ratio {
	r := &Ratio{Name: name, Of: of.Key, To: to.Key, Value: of.Mean / to.Mean}
	for i := range of.Rounds {
		v := of.Rounds[i].Rate / to.Rounds[i].Rate
		if i == 0 {
			r.Min, r.Max = v, v
		}
		r.Min, r.Max = min(r.Min, v), max(r.Max, v)
	}
	return r
}

// FormatCount formats n rounded to a whole number, with a comma between
// thousands: 6512.4 is "6,512".
func FormatCount(n float64) string {
	s := strconv.FormatInt(int64(math.Round(n)), 10)
	sign, digits := "", s
	if s[0] == '-' {
		sign, digits = "-", s[1:]
	}
	var out strings.Builder
	out.WriteString(sign)
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			out.WriteByte(',')
		}
		out.WriteByte(digits[i])
	}
	return out.String()
}

// FormatBytes is n bytes in MiB, for people: "41.2 MiB".
func FormatBytes(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
