package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultDue is the default of SchedulesConfig.Due.
const DefaultDue = 10000

// Case keys of RunSchedules (SlotCase.Key).
const (
	KeyTributaryWarm = "tributary_warm"
	KeyTributaryCold = "tributary_cold"
	KeyRiverPeriodic = "river_periodic"
)

// SchedulesConfig configures RunSchedules.
type SchedulesConfig struct {
	// Cold adds a second Tributary case, after the warm one, whose working
	// client starts only once the slot has passed: the lag of the first
	// slot after a start-up.
	//
	// Defaults to false: the warm case and River's only.
	Cold bool

	// Due is how many schedules (and River periodic jobs) fall due in the
	// same second.
	//
	// Defaults to DefaultDue (10000).
	Due int

	// Owners is how many owners the schedules are spread over, in turn
	// ("bench-0", "bench-1", …). Each schedule's runs carry its owner as
	// their tenant, so this many tenants take turns for the workers
	// (internal/engine/fair_fetch.go).
	//
	// Defaults to 1: every schedule of one owner.
	Owners int

	// RanBefore gives every schedule the status of a run that completed
	// before (last_run_status "completed"), as a day's schedules have after
	// their first day: the runs' status trigger then leaves their rows as
	// they are (migration 027), where it writes the first status of new
	// ones.
	//
	// Defaults to false: new schedules, as Create leaves them.
	RanBefore bool

	// Logger receives River's, the workflow engine's, the schedule
	// client's and the migrator's logs.
	//
	// Defaults to a logger that discards everything.
	Logger *slog.Logger

	// Rounds is how many times the cases run, interleaved (every case,
	// then every case again). A case's lags are pooled over its rounds.
	//
	// Defaults to DefaultRounds (1).
	Rounds int

	// Workers is the MaxWorkers of the default queue of every case's
	// working client, which works the runs (or River jobs) the slots start.
	//
	// Defaults to DefaultWorkers (20).
	Workers int
}

// withDefaults returns a copy of c with defaults filled in, or an error when
// a field is negative.
func (c *SchedulesConfig) withDefaults() (*SchedulesConfig, error) {
	if c == nil {
		c = &SchedulesConfig{}
	}
	out := *c
	if err := countDefaults("SchedulesConfig", []countField{
		{"Due", &out.Due, DefaultDue},
		{"Owners", &out.Owners, 1},
		{"Rounds", &out.Rounds, DefaultRounds},
		{"Workers", &out.Workers, DefaultWorkers},
	}); err != nil {
		return nil, err
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	return &out, nil
}

// SchedulesResult is what RunSchedules measured. Its JSON form is the output
// of `tributary bench schedules --json`.
type SchedulesResult struct {
	// Cases are the cases, in the order of the rounds that run them first to
	// last (every other round runs them in reverse): tributary_warm,
	// tributary_cold (with SchedulesConfig.Cold), river_periodic.
	Cases []*SlotCase `json:"cases"`

	// Due, Rounds and Workers are the configuration the cases ran with.
	Due       int  `json:"due"`
	Owners    int  `json:"owners"`
	RanBefore bool `json:"ran_before,omitempty"`
	Rounds    int  `json:"rounds"`
	Workers   int  `json:"workers"`

	// Ratios divide each Tributary case's p99 lag by River's: 2 means
	// Tributary's 99th percentile slot started twice as late.
	Ratios []*LagRatio `json:"ratios"`

	// Server is the Postgres server's server_version.
	Server string `json:"server"`
}

// SlotCase is one case's lags over all rounds.
type SlotCase struct {
	// Key names the case in machine-readable output: tributary_warm,
	// tributary_cold or river_periodic.
	Key string `json:"case"`

	// Name names the case for people: "Tributary schedules, warm".
	Name string `json:"name"`

	// Lag summarizes the lags of every slot of every round.
	Lag *Lag `json:"lag"`

	// Rate is the mean of the rounds' Rate, in slots per second.
	Rate float64 `json:"slots_per_second"`

	// Rounds are the case's measurements, one a round, in order.
	Rounds []*SlotRound `json:"rounds"`
}

// SlotRound is one measurement of a case: Due slots falling due in the same
// second, the slot.
type SlotRound struct {
	// Slots is the number of slots whose run (or River job) started and
	// completed: always SchedulesConfig.Due, or the round fails.
	Slots int `json:"slots"`

	// Lag summarizes the slots' lags: each run's start (the attempted_at
	// of the River job that runs it) after the slot.
	Lag *Lag `json:"lag"`

	// Rate is Slots divided by the time from the slot until the last slot's
	// run started (Lag.Max), in slots per second.
	Rate float64 `json:"slots_per_second"`

	// LastInsert is the time from the slot until the transaction that
	// inserted the last run (or job) began: max(created_at), which is the
	// start of that transaction. It is negative when the last one was
	// inserted before the slot, as River does: its periodic job enqueuer
	// inserts jobs up to 100 ms early, scheduled at the slot. In JSON it
	// is last_insert_ms.
	LastInsert time.Duration `json:"-"`

	// Lead is how long before the slot the working client had started (its
	// Start returned); negative when it started after the slot, as in the
	// cold case. In JSON it is lead_ms.
	Lead time.Duration `json:"-"`

	// Schema is the schema the round ran in, dropped before RunSchedules
	// returned.
	Schema string `json:"-"`

	// lags are the slots' lags in milliseconds, sorted, which the case's
	// Lag pools.
	lags []float64
}

// MarshalJSON writes LastInsert and Lead in milliseconds.
func (r *SlotRound) MarshalJSON() ([]byte, error) {
	type round SlotRound // without this method
	return json.Marshal(struct {
		*round
		LastInsertMs float64 `json:"last_insert_ms"`
		LeadMs       float64 `json:"lead_ms"`
	}{(*round)(r), millis(r.LastInsert), millis(r.Lead)})
}

// Lag summarizes how late slots started, in milliseconds: nearest-rank
// percentiles and the maximum.
type Lag struct {
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// newLag summarizes sorted, a non-empty sorted list of milliseconds.
func newLag(sorted []float64) *Lag {
	return &Lag{
		P50: percentile(sorted, 0.50),
		P95: percentile(sorted, 0.95),
		P99: percentile(sorted, 0.99),
		Max: sorted[len(sorted)-1],
	}
}

// percentile is the nearest-rank percentile q of sorted.
func percentile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// LagRatio is the p99 lag of a Tributary case divided by River's.
type LagRatio struct {
	// Name names the ratio: "Tributary warm p99 / River p99".
	Name string `json:"name"`

	// Of and To are the Keys of the cases divided: Of's p99 over To's.
	Of string `json:"of"`
	To string `json:"to"`

	// Value is the ratio of the two cases' pooled p99 lags.
	Value float64 `json:"value"`

	// Min and Max are the lowest and highest ratio of one round's two p99
	// lags.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// RunSchedules measures how late runs start when config.Due schedule slots
// fall due in the same second, beside River's periodic jobs doing the same,
// on the database of pool, config.Rounds times. It prints a line on progress
// as each case finishes ("Tributary schedules, warm: 10,000 slots… p50 …");
// progress may be nil.
//
// The cases, each on a schema of its own created, migrated and dropped as
// Run's are (pool only creates and drops them):
//
//   - tributary_warm: an insert-only client creates Due schedules with
//     schedule.Client.CreateMany, their first slot the same second, a few
//     seconds ahead (3 s, plus 0.1 ms a schedule for creating them); then
//     one working client starts, before the slot, with a default queue of
//     Workers workers and the schedule client as its extension. Each slot
//     starts a run of a workflow that does nothing. The case fails when
//     creating the schedules took past the slot.
//   - tributary_cold, with config.Cold: the same, but the working client
//     starts only once the slot has passed.
//   - river_periodic: one River client with Due periodic jobs due at the
//     same second, about 4 s ahead, each inserting a job of a worker that
//     does nothing, and a default queue of Workers workers; started at
//     once, so that it is elected leader (only the leader enqueues periodic
//     jobs) well before the slot. It fetches with Tributary's defaults
//     (cooldown 2 ms, poll interval 1 s), so that the cases differ in how
//     slots fire, not in fetch tuning.
//
// A slot's lag is its run's start after the slot: for Tributary
// workflow_runs.started_at - fire_at, where started_at is the attempted_at
// of the River job that ran the workflow function; for River the
// attempted_at of the job minus the slot. Both are read from the database,
// so that both are on the database's clock. A case waits for every slot's
// run to finish, polling the database, and fails when a slot is skipped,
// when a run or job ends other than completed, or when nothing finishes for
// a minute.
func RunSchedules(ctx context.Context, pool *pgxpool.Pool, config *SchedulesConfig, progress io.Writer) (*SchedulesResult, error) {
	config, err := config.withDefaults()
	if err != nil {
		return nil, err
	}
	if progress == nil {
		progress = io.Discard
	}

	res := &SchedulesResult{Due: config.Due, Owners: config.Owners, RanBefore: config.RanBefore, Rounds: config.Rounds, Workers: config.Workers}
	if err := pool.QueryRow(ctx, "SHOW server_version").Scan(&res.Server); err != nil {
		return nil, fmt.Errorf("bench: reading the server version: %w", err)
	}
	cases := []slotCase{tributaryWarm}
	if config.Cold {
		cases = append(cases, tributaryCold)
	}
	cases = append(cases, riverPeriodic)
	for _, c := range cases {
		res.Cases = append(res.Cases, &SlotCase{Key: c.key, Name: c.name})
	}

	for round := range config.Rounds {
		for k := range cases {
			// Every other round in reverse order, as runRounds does, so
			// that what one case leaves behind (dead rows, dirty pages, a
			// checkpoint due) falls on River's case as often as on
			// Tributary's.
			i := k
			if round%2 == 1 {
				i = len(cases) - 1 - k
			}
			c := cases[i]
			prefix := ""
			if config.Rounds > 1 {
				prefix = fmt.Sprintf("round %d/%d, ", round+1, config.Rounds)
			}
			fmt.Fprintf(progress, "%s%s: %s slots… ", prefix, c.name, FormatCount(float64(config.Due)))
			r, err := runSlotCase(ctx, pool, c, config)
			if err != nil {
				fmt.Fprintln(progress, "failed")
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
			fmt.Fprintf(progress, "p50 %s, p99 %s\n", FormatMillis(r.Lag.P50), FormatMillis(r.Lag.P99))
			res.Cases[i].Rounds = append(res.Cases[i].Rounds, r)
		}
	}

	for _, c := range res.Cases {
		c.summarize()
	}
	river := res.Cases[len(res.Cases)-1]
	for _, c := range res.Cases[:len(res.Cases)-1] {
		res.Ratios = append(res.Ratios, lagRatio(c, river))
	}
	return res, nil
}

// summarize sets Lag from every round's lags and Rate from the rounds'.
func (c *SlotCase) summarize() {
	var all []float64
	rate := 0.0
	for _, r := range c.Rounds {
		all = append(all, r.lags...)
		rate += r.Rate
	}
	slices.Sort(all)
	c.Lag = newLag(all)
	c.Rate = rate / float64(len(c.Rounds))
}

// lagRatio divides of's p99 lags by to's: the pooled ones, and each round's
// pair.
func lagRatio(of, to *SlotCase) *LagRatio {
	r := &LagRatio{
		Name: fmt.Sprintf("%s p99 / River p99", shortNames[of.Key]),
		Of:   of.Key, To: to.Key,
		Value: divide(of.Lag.P99, to.Lag.P99),
	}
	for i := range of.Rounds {
		v := divide(of.Rounds[i].Lag.P99, to.Rounds[i].Lag.P99)
		if i == 0 {
			r.Min, r.Max = v, v
		}
		r.Min, r.Max = min(r.Min, v), max(r.Max, v)
	}
	return r
}

// shortNames name the Tributary cases in ratios.
var shortNames = map[string]string{KeyTributaryWarm: "Tributary warm", KeyTributaryCold: "Tributary cold"}

// divide is a / b, or 0 when b is 0 (JSON has no infinity).
func divide(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// FormatMillis formats a number of milliseconds for people: "0.8 ms",
// "12.3 ms", "245 ms", "12,034 ms".
func FormatMillis(ms float64) string {
	if math.Abs(ms) < 100 {
		return fmt.Sprintf("%.1f ms", ms)
	}
	return FormatCount(ms) + " ms"
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// runSlotCase runs c once on a schema of its own and returns its
// measurement. The schema is dropped before runSlotCase returns, also when
// the case fails.
func runSlotCase(ctx context.Context, admin *pgxpool.Pool, c slotCase, config *SchedulesConfig) (_ *SlotRound, err error) {
	s, err := newScratch(ctx, admin, &Config{Logger: config.Logger, Workers: config.Workers})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, s.drop(ctx, admin)) }()

	r, err := c.run(ctx, s, config)
	if err != nil {
		return nil, err
	}
	r.Schema = s.schema
	return r, nil
}
