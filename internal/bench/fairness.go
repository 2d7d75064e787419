package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/workflow"
)

// Defaults of FairnessConfig: the shape of issue 25.
const (
	DefaultFairnessBig   = 5000
	DefaultFairnessSmall = 10
	DefaultFairnessDelay = time.Second
	DefaultFairnessStep  = 100 * time.Millisecond
)

// The fairness targets of issue 25: the small key's runs each finish
// within FairnessSmallTarget of their start, and the big key's runs take at
// most FairnessSlowdownTarget times as long as without keys.
const (
	FairnessSmallTarget    = 2 * time.Second
	FairnessSlowdownTarget = 1.10
)

// Case keys of RunFairness (FairnessCase.Key).
const (
	KeyFairnessUnkeyed = "unkeyed"
	KeyFairnessKeyed   = "keyed"
	KeyFairnessLimited = "keyed_limited"
)

// The tenants of the big and the small key, in the keyed cases.
const (
	fairnessBigTenant   = "A"
	fairnessSmallTenant = "B"
)

// The big key's runs are started in transactions of fairnessChunk runs,
// fairnessStarters at once, each visible as it commits: the backlog is
// queued as fast as the database takes it while the client works the
// first.
const (
	fairnessChunk    = 100
	fairnessStarters = 4
)

// FairnessConfig configures RunFairness.
type FairnessConfig struct {
	// Big is how many runs key A starts at once. Defaults to
	// DefaultFairnessBig (5000).
	Big int
	// Small is how many runs key B starts Delay later. Defaults to
	// DefaultFairnessSmall (10).
	Small int
	// Delay is how long after A began starting its runs B starts its own
	// (later, if A's starts took longer). Defaults to DefaultFairnessDelay
	// (1 s).
	Delay time.Duration
	// Step is how long the one step of every run sleeps, as I/O would.
	// Defaults to DefaultFairnessStep (100 ms).
	Step time.Duration
	// Workers is the MaxWorkers of the default queue of the one working
	// client. Defaults to DefaultWorkers (20).
	Workers int
	// Limit, when above 0, adds a third case, keyed_limited: the keyed
	// case with DefineOpts.TenantLimit Limit, in which the bench counts
	// the moments more than Limit runs of one key were inside their step.
	// Defaults to 0: no such case.
	Limit int
	// Rounds is how many times the cases run, interleaved (each case once,
	// then each again). Defaults to DefaultRounds (1).
	Rounds int
	// Logger receives River's, the engine's and the migrator's logs.
	// Defaults to none.
	Logger *slog.Logger
}

// withDefaults returns a copy of c with defaults filled in, or an error when
// a field is negative.
func (c *FairnessConfig) withDefaults() (*FairnessConfig, error) {
	if c == nil {
		c = &FairnessConfig{}
	}
	out := *c
	if err := countDefaults("FairnessConfig", []countField{
		{"Big", &out.Big, DefaultFairnessBig},
		{"Small", &out.Small, DefaultFairnessSmall},
		{"Workers", &out.Workers, DefaultWorkers},
		{"Rounds", &out.Rounds, DefaultRounds},
	}); err != nil {
		return nil, err
	}
	if out.Limit < 0 {
		return nil, fmt.Errorf("bench: FairnessConfig.Limit is %d; it must be at least 1, or 0 for no limit", out.Limit)
	}
	if err := durationDefaults("FairnessConfig", []durationField{
		{"Delay", &out.Delay, DefaultFairnessDelay},
		{"Step", &out.Step, DefaultFairnessStep},
	}); err != nil {
		return nil, err
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	return &out, nil
}

// FairnessResult is what RunFairness measured. Its JSON form is the output
// of `tributary bench fairness --json`; times are in seconds. With several
// rounds, each figure is the worst round's: the highest p99 and slowdown,
// the violations of every round added up.
type FairnessResult struct {
	// SmallKeyP99 is the 99th percentile of the small key's run latencies
	// (finished_at - created_at) in the keyed case; SmallKeyP99Unkeyed the
	// same in the unkeyed case.
	SmallKeyP99        float64 `json:"small_key_p99_s"`
	SmallKeyP99Unkeyed float64 `json:"small_key_p99_s_unkeyed"`

	// BigKeyMakespan is the time from the big key's first start to its
	// last run's finish in the keyed case; BigKeyMakespanUnkeyed in the
	// unkeyed case of the same round; BigKeySlowdown the first over the
	// second.
	BigKeyMakespan        float64 `json:"big_key_makespan_s"`
	BigKeyMakespanUnkeyed float64 `json:"big_key_makespan_s_unkeyed"`
	BigKeySlowdown        float64 `json:"big_key_slowdown"`

	// SmallKeyP99s and BigKeySlowdowns are SmallKeyP99 and BigKeySlowdown
	// of each round, in order.
	SmallKeyP99s    []float64 `json:"small_key_p99s_s"`
	BigKeySlowdowns []float64 `json:"big_key_slowdowns"`

	// LimitViolations counts the moments more than Limit runs of one key
	// were inside their step at once in the keyed_limited case; 0, as
	// Limit, when no limit was checked.
	LimitViolations int `json:"limit_violations"`
	Limit           int `json:"limit"`

	// SmallKeyOK and BigKeyOK say whether the targets were met: the small
	// key's p99 within FairnessSmallTarget, the slowdown within
	// FairnessSlowdownTarget.
	SmallKeyOK bool `json:"small_key_ok"`
	BigKeyOK   bool `json:"big_key_ok"`

	// The configuration the cases ran with.
	Big     int     `json:"big"`
	Small   int     `json:"small"`
	Delay   float64 `json:"delay_s"`
	Step    float64 `json:"step_s"`
	Workers int     `json:"workers"`
	Rounds  int     `json:"rounds"`

	// Cases are the cases, in the order they ran: unkeyed, keyed, and
	// keyed_limited with a Limit, then again for each further round.
	Cases []*FairnessCase `json:"cases"`

	// Server is the Postgres server's server_version.
	Server string `json:"server"`
}

// FairnessCase is one case's figures.
type FairnessCase struct {
	// Key names the case in machine-readable output; Name for people.
	Key  string `json:"case"`
	Name string `json:"name"`
	// Round is the round the case ran in, from 1.
	Round int `json:"round"`

	// Completed counts the runs completed: always Big + Small, or the case
	// fails.
	Completed int `json:"completed"`

	// SmallKey summarizes the small key's run latencies.
	SmallKey *Latency `json:"small_key"`

	// BigKeyMakespan is the time from the big key's first start to its
	// last run's finish.
	BigKeyMakespan float64 `json:"big_key_makespan_s"`

	// SmallKeyStart is how long after the big key's first start the small
	// key's first run started (about Delay); BigKeyBefore how many of the
	// big key's runs were started before it.
	SmallKeyStart float64 `json:"small_key_start_s"`
	BigKeyBefore  int     `json:"big_key_started_before_small"`

	// BigKeyMaxInStep is the most runs of the big key inside their step at
	// once; LimitViolations the moments it was more than the limit (0
	// without one).
	BigKeyMaxInStep int `json:"big_key_max_in_step"`
	LimitViolations int `json:"limit_violations"`
}

// Latency summarizes run latencies, in seconds: nearest-rank percentiles
// and the maximum.
type Latency struct {
	P50 float64 `json:"p50_s"`
	P99 float64 `json:"p99_s"`
	Max float64 `json:"max_s"`
}

// fairnessCase is a case of RunFairness: its key, its name, its tenants
// ("" for none) and its tenant limit.
type fairnessCase struct {
	key, name  string
	big, small string
	limit      int
}

// RunFairness measures fair turns across tenants (the engine's fair fetch)
// beside River's FIFO order, on the database of pool. It prints a line on
// progress as each case finishes; progress may be nil.
//
// Each case runs on a schema of its own, created, migrated and dropped as
// Run's are, with one working client whose default queue has Workers
// workers. Every run is of one workflow whose one step sleeps Step. Big
// runs of key A are started, in transactions of fairnessChunk runs,
// fairnessStarters at once, and Delay after they began Small runs of key B
// are started, each with Start, whether or not all of A's are started by
// then (FairnessCase.BigKeyBefore says how many were); the case waits
// until every run finished and checks that each completed. The cases:
//
//   - unkeyed: neither group has a tenant: River's order, oldest first,
//     so each of B's runs waits behind the A runs started before it.
//   - keyed: A's runs have the tenant "A", B's "B".
//   - keyed_limited, with Limit above 0: keyed, with DefineOpts.TenantLimit
//     Limit.
//
// A run's latency is finished_at - created_at of its workflow_runs row
// (created_at is the start of the transaction that started it); the big
// key's makespan is its last finished_at minus its first created_at; both
// read from the database, on its clock. The steps record when they began
// and ended, in memory, from which the bench counts how many runs of each
// key were inside their step at once.
func RunFairness(ctx context.Context, pool *pgxpool.Pool, config *FairnessConfig, progress io.Writer) (*FairnessResult, error) {
	config, err := config.withDefaults()
	if err != nil {
		return nil, err
	}
	if progress == nil {
		progress = io.Discard
	}
	res := &FairnessResult{Limit: config.Limit, Big: config.Big, Small: config.Small, Delay: config.Delay.Seconds(),
		Step: config.Step.Seconds(), Workers: config.Workers, Rounds: config.Rounds}
	if err := pool.QueryRow(ctx, "SHOW server_version").Scan(&res.Server); err != nil {
		return nil, fmt.Errorf("bench: reading the server version: %w", err)
	}

	cases := []fairnessCase{
		{key: KeyFairnessUnkeyed, name: "No keys (River's order)"},
		{key: KeyFairnessKeyed, name: "Keys A and B (fair turns)", big: fairnessBigTenant, small: fairnessSmallTenant},
	}
	if config.Limit > 0 {
		cases = append(cases, fairnessCase{key: KeyFairnessLimited, name: fmt.Sprintf("Keys A and B, limit %d", config.Limit),
			big: fairnessBigTenant, small: fairnessSmallTenant, limit: config.Limit})
	}
	for round := 1; round <= config.Rounds; round++ {
		byKey := map[string]*FairnessCase{}
		for _, c := range cases {
			name := c.name
			if config.Rounds > 1 {
				name = fmt.Sprintf("%s, round %d", c.name, round)
			}
			fmt.Fprintf(progress, "%s: %s runs of A, %s of B %s later… ", name, FormatCount(float64(config.Big)),
				FormatCount(float64(config.Small)), config.Delay)
			r, err := runFairnessCase(ctx, pool, c, config)
			if err != nil {
				fmt.Fprintln(progress, "failed")
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			r.Round = round
			fmt.Fprintf(progress, "B p99 %.2f s, A makespan %.1f s\n", r.SmallKey.P99, r.BigKeyMakespan)
			res.Cases = append(res.Cases, r)
			byKey[c.key] = r
		}
		res.addRound(byKey)
	}
	res.SmallKeyOK = res.SmallKeyP99 <= FairnessSmallTarget.Seconds()
	res.BigKeyOK = res.BigKeySlowdown <= FairnessSlowdownTarget
	return res, nil
}

// addRound adds the figures of one round's cases, by key: the headline
// figures keep the worst round's.
func (res *FairnessResult) addRound(byKey map[string]*FairnessCase) {
	unkeyed, keyed := byKey[KeyFairnessUnkeyed], byKey[KeyFairnessKeyed]
	slowdown := divide(keyed.BigKeyMakespan, unkeyed.BigKeyMakespan)
	res.SmallKeyP99s = append(res.SmallKeyP99s, keyed.SmallKey.P99)
	res.BigKeySlowdowns = append(res.BigKeySlowdowns, slowdown)
	first := len(res.BigKeySlowdowns) == 1
	if first || keyed.SmallKey.P99 > res.SmallKeyP99 {
		res.SmallKeyP99 = keyed.SmallKey.P99
	}
	if first || unkeyed.SmallKey.P99 > res.SmallKeyP99Unkeyed {
		res.SmallKeyP99Unkeyed = unkeyed.SmallKey.P99
	}
	if first || slowdown > res.BigKeySlowdown {
		res.BigKeySlowdown = slowdown
		res.BigKeyMakespan, res.BigKeyMakespanUnkeyed = keyed.BigKeyMakespan, unkeyed.BigKeyMakespan
	}
	if limited, ok := byKey[KeyFairnessLimited]; ok {
		res.LimitViolations += limited.LimitViolations
	}
}

// runFairnessCase runs c once on a schema of its own. The schema is dropped
// before it returns, also when the case fails.
func runFairnessCase(ctx context.Context, admin *pgxpool.Pool, c fairnessCase, config *FairnessConfig) (_ *FairnessCase, err error) {
	s, err := newScratch(ctx, admin, &Config{Logger: config.Logger, Workers: config.Workers})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, s.drop(ctx, admin)) }()

	steps := &stepLog{}
	// A run's input is its number: A's are 0 to Big-1, B's the next ones.
	flow := workflow.Define("bench_fairness", func(ctx workflow.Context, i int) (int, error) {
		key := fairnessBigTenant
		if i >= config.Big {
			key = fairnessSmallTenant
		}
		return workflow.Step(ctx, "work", func(ctx context.Context) (int, error) {
			began := time.Now()
			if err := sleepUntil(ctx, began.Add(config.Step)); err != nil {
				return 0, err
			}
			steps.add(key, began, time.Now())
			return i, nil
		})
	}, &workflow.DefineOpts{TenantLimit: c.limit})
	client, err := workflow.NewClient(s.pool, &workflow.Config{
		CompletedRunRetention: -1, FailedRunRetention: -1, // no retention pass: it is not measured here
		Logger: config.Logger, Schema: s.schema, Workflows: []workflow.Registrable{flow},
		River: &river.Config{Logger: config.Logger, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: config.Workers}}},
	})
	if err != nil {
		return nil, fmt.Errorf("building the workflow client: %w", err)
	}
	// The client works until stop: cancelling ctx would stop River hard,
	// cancelling jobs in progress.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("starting the client: %w", err)
	}
	defer func() { err = errors.Join(err, stopWithin(ctx, client.Stop)) }()

	// A's runs are started by fairnessStarters goroutines while B's wait
	// for their moment, Delay after A's began, whether or not all of A's
	// are started by then.
	began := time.Now()
	bigCtx, stopBig := context.WithCancel(ctx)
	defer stopBig()
	var (
		bigErr   error
		starting sync.WaitGroup
	)
	starting.Go(func() { bigErr = startFairnessRuns(bigCtx, s, client, flow, config.Big, startOpts(c.big)) })
	small := make([]uuid.UUID, config.Small)
	smallErr := sleepUntil(ctx, began.Add(config.Delay))
	for i := 0; i < len(small) && smallErr == nil; i++ {
		var h *workflow.Handle[int]
		if h, smallErr = flow.Start(ctx, client, config.Big+i, startOpts(c.small)); smallErr == nil {
			small[i] = h.ID
		}
	}
	if smallErr != nil {
		stopBig()
	}
	starting.Wait()
	if err := errors.Join(bigErr, smallErr); err != nil {
		return nil, fmt.Errorf("starting the runs: %w", err)
	}

	n := config.Big + config.Small
	if err := waitFinished(ctx, s, `SELECT count(*) FROM workflow_runs WHERE finished_at IS NOT NULL`, nil, began, n, "runs"); err != nil {
		return nil, err
	}
	r := &FairnessCase{Key: c.key, Name: c.name}
	var others string
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'completed'),
			coalesce(string_agg(DISTINCT status, ', ') FILTER (WHERE status <> 'completed'), '')
		FROM workflow_runs`).Scan(&r.Completed, &others); err != nil {
		return nil, fmt.Errorf("reading what the runs did: %w", err)
	}
	if r.Completed != n {
		return nil, fmt.Errorf("%d of %d runs completed; the others are %s", r.Completed, n, others)
	}

	// The small key's runs are those started with Start, by id; the big
	// key's the others.
	rows, err := s.pool.Query(ctx, `SELECT extract(epoch FROM finished_at - created_at)::float8 FROM workflow_runs
		WHERE id = ANY($1::uuid[]) ORDER BY 1`, small)
	if err != nil {
		return nil, fmt.Errorf("reading B's latencies: %w", err)
	}
	latencies, err := pgx.CollectRows(rows, pgx.RowTo[float64])
	if err != nil {
		return nil, fmt.Errorf("reading B's latencies: %w", err)
	}
	if len(latencies) != config.Small {
		return nil, fmt.Errorf("read %d of B's latencies, want %d", len(latencies), config.Small)
	}
	r.SmallKey = &Latency{P50: percentile(latencies, 0.50), P99: percentile(latencies, 0.99), Max: latencies[len(latencies)-1]}
	if err := s.pool.QueryRow(ctx, `WITH b AS (SELECT min(created_at) AS first FROM workflow_runs WHERE id = ANY($1::uuid[]))
		SELECT extract(epoch FROM max(finished_at) FILTER (WHERE id <> ALL($1::uuid[])) - min(created_at))::float8,
			extract(epoch FROM (SELECT first FROM b) - min(created_at))::float8,
			count(*) FILTER (WHERE id <> ALL($1::uuid[]) AND created_at < (SELECT first FROM b))
		FROM workflow_runs`, small).Scan(&r.BigKeyMakespan, &r.SmallKeyStart, &r.BigKeyBefore); err != nil {
		return nil, fmt.Errorf("reading A's makespan: %w", err)
	}
	var smallViolations int
	r.BigKeyMaxInStep, r.LimitViolations = steps.concurrency(fairnessBigTenant, c.limit)
	_, smallViolations = steps.concurrency(fairnessSmallTenant, c.limit)
	r.LimitViolations += smallViolations
	return r, nil
}

// startFairnessRuns starts n runs of flow (inputs 0 to n-1) with opts, in
// transactions of fairnessChunk runs, fairnessStarters at once.
func startFairnessRuns(ctx context.Context, s *scratch, client *workflow.Client, flow *workflow.Definition[int, int], n int, opts *workflow.StartOpts) error {
	var (
		next     atomic.Int64 // the first run of the next chunk
		starters sync.WaitGroup
		errs     = make([]error, fairnessStarters)
	)
	for g := range fairnessStarters {
		starters.Go(func() {
			for errs[g] == nil {
				from := int(next.Add(fairnessChunk)) - fairnessChunk
				if from >= n {
					return
				}
				errs[g] = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
					for i := from; i < min(from+fairnessChunk, n); i++ {
						if _, err := flow.StartTx(ctx, client, tx, i, opts); err != nil {
							return err
						}
					}
					return nil
				})
			}
		})
	}
	starters.Wait()
	return errors.Join(errs...)
}

// startOpts are the StartOpts of a run of tenant, nil for none.
func startOpts(tenant string) *workflow.StartOpts {
	if tenant == "" {
		return nil
	}
	return &workflow.StartOpts{Tenant: tenant}
}

// stepLog records when the steps of each key (A or B, with a tenant or
// not) began and ended.
type stepLog struct {
	mu    sync.Mutex
	spans map[string][][2]time.Time
}

func (l *stepLog) add(key string, began, ended time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.spans == nil {
		l.spans = map[string][][2]time.Time{}
	}
	l.spans[key] = append(l.spans[key], [2]time.Time{began, ended})
}

// concurrency returns the most steps of key that were running at once,
// and how many times a step began with limit or more already running (0
// when limit is 0). A step that ended at the moment another began did not
// overlap it.
func (l *stepLog) concurrency(key string, limit int) (most, violations int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	type event struct {
		at    time.Time
		delta int
	}
	var events []event
	for _, s := range l.spans[key] {
		events = append(events, event{s[0], 1}, event{s[1], -1})
	}
	slices.SortFunc(events, func(a, b event) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta // ends first
	})
	running := 0
	for _, e := range events {
		running += e.delta
		most = max(most, running)
		if e.delta > 0 && limit > 0 && running > limit {
			violations++
		}
	}
	return most, violations
}
