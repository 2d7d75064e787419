package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/workflow"
)

// Defaults of RateConfig: the shape of issue 25.
const (
	DefaultRate     = 50
	DefaultDuration = 30 * time.Second
	DefaultClients  = 3
)

// RateTolerance is the rate target of issue 25, in percent: starts per
// second within this share of the rate, and never more than RateCeiling in
// any one-second window.
const RateTolerance = 10

// RateCeiling is the most starts a one-second window may hold at a rate of
// rate a second: the rate plus RateTolerance percent (55 at 50), computed
// in integers so that it is exact.
func RateCeiling(rate int) float64 { return float64(rate*(100+RateTolerance)) / 100 }

// rateBacklog is how many times Rate x Duration runs the bench starts up
// front, so that the rate has work for the whole duration.
const rateBacklog = 1.2

// RateConfig configures RunRate.
type RateConfig struct {
	// Rate is the tenant rate, in attempts a second
	// (DefineOpts.TenantRate{Limit: Rate, Per: time.Second}). Defaults to
	// DefaultRate (50).
	Rate int
	// Duration is how long the clients work, from the first start.
	// Defaults to DefaultDuration (30 s); at least a second.
	Duration time.Duration
	// Clients is how many working clients share the rate, each with a pool
	// of its own. Defaults to DefaultClients (3).
	Clients int
	// Workers is the MaxWorkers of the default queue of each client.
	// Defaults to DefaultWorkers (20).
	Workers int
	// Logger receives River's, the engine's and the migrator's logs.
	// Defaults to none.
	Logger *slog.Logger
}

// withDefaults returns a copy of c with defaults filled in, or an error when
// a field is negative or Duration under a second.
func (c *RateConfig) withDefaults() (*RateConfig, error) {
	if c == nil {
		c = &RateConfig{}
	}
	out := *c
	if err := countDefaults("RateConfig", []countField{
		{"Rate", &out.Rate, DefaultRate},
		{"Clients", &out.Clients, DefaultClients},
		{"Workers", &out.Workers, DefaultWorkers},
	}); err != nil {
		return nil, err
	}
	if err := durationDefaults("RateConfig", []durationField{{"Duration", &out.Duration, DefaultDuration}}); err != nil {
		return nil, err
	}
	if out.Duration < time.Second {
		return nil, fmt.Errorf("bench: RateConfig.Duration is %s; it must be at least 1s, or 0 for the default %s", out.Duration, DefaultDuration)
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	return &out, nil
}

// RateResult is what RunRate measured. Its JSON form is the output of
// `tributary bench rate --json`; times are in seconds.
type RateResult struct {
	// The configuration it ran with: the rate a second, the duration, the
	// clients and the workers of each; Backlog is how many runs were
	// started up front.
	Rate     int     `json:"rate"`
	Duration float64 `json:"duration_s"`
	Clients  int     `json:"clients"`
	Workers  int     `json:"workers"`
	Backlog  int     `json:"backlog"`

	// Starts counts the steps that began in the window, from the first
	// start to the first start plus Duration; StartsPerSecond is Starts
	// over Duration.
	Starts          int     `json:"starts"`
	StartsPerSecond float64 `json:"starts_per_second"`

	// MaxInAnySecond and MinInAnySecond are the most and the fewest starts
	// in the one-second windows that begin at a start and end inside the
	// window.
	MaxInAnySecond int `json:"max_in_any_second"`
	MinInAnySecond int `json:"min_in_any_second"`

	// PerSecond counts the starts of each whole second of the window (the
	// first from the first start); SecondsOverLimit counts those of them
	// above RateCeiling(Rate).
	PerSecond        []int `json:"per_second"`
	SecondsOverLimit int   `json:"seconds_over_limit"`

	// PerClient counts the starts in the window of each client.
	PerClient []int `json:"per_client"`

	// StartsPerSecondOK and MaxOK say whether the targets were met: starts
	// per second within RateTolerance of Rate, MaxInAnySecond not above
	// RateCeiling(Rate).
	StartsPerSecondOK bool `json:"starts_per_second_ok"`
	MaxOK             bool `json:"max_ok"`

	// Server is the Postgres server's server_version.
	Server string `json:"server"`
}

// rateTenant is the one tenant of RunRate's runs.
const rateTenant = "A"

// rateStart is when a step began, and on which client.
type rateStart struct {
	at     time.Time
	client int
}

// RunRate measures a tenant rate (DefineOpts.TenantRate) shared by several
// working clients, on the database of pool. It prints a line on progress;
// progress may be nil.
//
// It creates and migrates a schema as Run does, and starts Rate x Duration
// x 1.2 runs of tenant A up front, in transactions of fairnessChunk runs,
// fairnessStarters at once, of a workflow whose one step records when it
// began, in memory. Then it starts Clients working clients on the schema,
// each with a pool of its own and a default queue of Workers workers, lets
// them work for Duration from the first step's start, and stops them: the
// runs left stay queued, and the schema is dropped. The figures come from
// the steps' start times in the window from the first start to the first
// start plus Duration.
func RunRate(ctx context.Context, pool *pgxpool.Pool, config *RateConfig, progress io.Writer) (_ *RateResult, err error) {
	config, err = config.withDefaults()
	if err != nil {
		return nil, err
	}
	if progress == nil {
		progress = io.Discard
	}
	res := &RateResult{Rate: config.Rate, Duration: config.Duration.Seconds(), Clients: config.Clients, Workers: config.Workers,
		Backlog: int(math.Ceil(float64(config.Rate) * config.Duration.Seconds() * rateBacklog))}
	if err := pool.QueryRow(ctx, "SHOW server_version").Scan(&res.Server); err != nil {
		return nil, fmt.Errorf("bench: reading the server version: %w", err)
	}
	fmt.Fprintf(progress, "Rate %d a second for one tenant, %d clients of %d workers: %s runs… ", config.Rate, config.Clients,
		config.Workers, FormatCount(float64(res.Backlog)))
	defer func() {
		if err != nil {
			fmt.Fprintln(progress, "failed")
		}
	}()

	// The scratch pool only starts the backlog: a connection a starter.
	s, err := newScratch(ctx, pool, &Config{Logger: config.Logger, Workers: fairnessStarters})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, s.drop(ctx, pool)) }()

	var (
		mu     sync.Mutex
		starts []rateStart
		first  = make(chan struct{})
	)
	// A definition a client, all of one workflow type, so that each step
	// knows its client.
	flows := make([]*workflow.Definition[int, int], config.Clients)
	for c := range flows {
		flows[c] = workflow.Define("bench_rate", func(ctx workflow.Context, i int) (int, error) {
			return workflow.Step(ctx, "start", func(context.Context) (int, error) {
				at := time.Now()
				mu.Lock()
				if len(starts) == 0 {
					close(first)
				}
				starts = append(starts, rateStart{at, c})
				mu.Unlock()
				return i, nil
			})
		}, &workflow.DefineOpts{TenantRate: workflow.Rate{Limit: config.Rate, Per: time.Second}})
	}
	clients := make([]*workflow.Client, config.Clients)
	for c := range clients {
		cpool, err := s.clientPool(ctx, rateClientConns(config.Workers))
		if err != nil {
			return nil, err
		}
		defer cpool.Close()
		if clients[c], err = workflow.NewClient(cpool, &workflow.Config{
			CompletedRunRetention: -1, FailedRunRetention: -1, // no retention pass: it is not measured here
			Logger: config.Logger, Schema: s.schema, Workflows: []workflow.Registrable{flows[c]},
			River: &river.Config{Logger: config.Logger, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: config.Workers}}},
		}); err != nil {
			return nil, fmt.Errorf("building workflow client %d: %w", c+1, err)
		}
	}

	if err := startFairnessRuns(ctx, s, clients[0], flows[0], res.Backlog, startOpts(rateTenant)); err != nil {
		return nil, fmt.Errorf("starting the runs: %w", err)
	}
	fmt.Fprintf(progress, "started; working %s… ", config.Duration)

	// The clients work until stopped: cancelling ctx would stop River hard,
	// cancelling jobs in progress.
	var started []*workflow.Client
	defer func() { err = errors.Join(err, stopAll(ctx, started)) }()
	for c, client := range clients {
		if err := client.Start(context.WithoutCancel(ctx)); err != nil {
			return nil, fmt.Errorf("starting client %d: %w", c+1, err)
		}
		started = append(started, client)
	}
	select {
	case <-first:
	case <-time.After(stallTimeout):
		return nil, fmt.Errorf("no run started within %s", stallTimeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	mu.Lock()
	from := starts[0].at
	mu.Unlock()
	if err := sleepUntil(ctx, from.Add(config.Duration)); err != nil {
		return nil, err
	}
	err = stopAll(ctx, started)
	started = nil
	if err != nil {
		return nil, err
	}

	mu.Lock()
	defer mu.Unlock()
	res.measure(starts, from, config.Duration)
	fmt.Fprintf(progress, "%d starts, %.1f a second, at most %d in a second\n", res.Starts, res.StartsPerSecond, res.MaxInAnySecond)
	return res, nil
}

// rateClientConns is the size of each client's pool in RunRate: a
// connection a worker (each holds one only for its step's short write), at
// least 10 for River's fetches, completions and notifications; smaller than
// poolConns, so that three clients of 20 workers fit under Postgres's
// default max_connections of 100.
func rateClientConns(workers int) int32 {
	return int32(max(workers, 10))
}

// stopAll stops clients at once, each within stopTimeout.
func stopAll(ctx context.Context, clients []*workflow.Client) error {
	errs := make([]error, len(clients))
	var stopping sync.WaitGroup
	for i, c := range clients {
		stopping.Go(func() { errs[i] = stopWithin(ctx, c.Stop) })
	}
	stopping.Wait()
	return errors.Join(errs...)
}

// measure fills in the figures of r from starts, in the window from from to
// from + d.
func (r *RateResult) measure(starts []rateStart, from time.Time, d time.Duration) {
	to := from.Add(d)
	r.PerClient = make([]int, r.Clients)
	r.PerSecond = make([]int, int(d/time.Second))
	var times []time.Time
	for _, s := range starts {
		if s.at.Before(from) || !s.at.Before(to) {
			continue
		}
		times = append(times, s.at)
		r.PerClient[s.client]++
		if k := int(s.at.Sub(from) / time.Second); k < len(r.PerSecond) {
			r.PerSecond[k]++
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	r.Starts = len(times)
	r.StartsPerSecond = float64(r.Starts) / d.Seconds()

	// The windows [t, t+1s) of each start t that end inside the window.
	r.MaxInAnySecond, r.MinInAnySecond = 0, math.MaxInt
	j := 0
	for i, t := range times {
		if t.Add(time.Second).After(to) {
			break
		}
		for j < len(times) && times[j].Before(t.Add(time.Second)) {
			j++
		}
		r.MaxInAnySecond = max(r.MaxInAnySecond, j-i)
		r.MinInAnySecond = min(r.MinInAnySecond, j-i)
	}
	if r.MinInAnySecond == math.MaxInt {
		r.MinInAnySecond = 0
	}

	limit := RateCeiling(r.Rate)
	r.SecondsOverLimit = 0
	for _, n := range r.PerSecond {
		if float64(n) > limit {
			r.SecondsOverLimit++
		}
	}
	r.StartsPerSecondOK = math.Abs(r.StartsPerSecond-float64(r.Rate)) <= float64(r.Rate*RateTolerance)/100
	r.MaxOK = float64(r.MaxInAnySecond) <= limit
}
