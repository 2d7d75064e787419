package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/riverpilot"
)

// Fair turns across tenants.
//
// River's producers fetch the ready jobs of a queue in one line: by
// priority, then oldest first. A tenant that starts 5,000 runs at once
// holds every worker until they are done, and a run another tenant starts
// a second later waits behind all of them. A keyed run (one with a tenant,
// StartOpts.Tenant or its schedule's) is fetched in turns instead: each
// fetch of a working client's producer gives every tenant with ready runs
// in the queue its oldest one before any tenant gets a second (round
// robin), and a tenant with one ready run is served within one turn
// whatever the others have waiting. It is on for every keyed run, with no
// setting, and costs a queue that has no keyed run ready, or one tenant's
// only, two index probes every fairQuietProbe. While a single tenant has
// ready jobs, its turns are River's order, and River's own fetch takes
// them (unless a kind has a limit or a rate, below).
//
// What the turns keep from River's order:
//
//   - Priority first: a job of a better priority goes before every job of
//     a worse one, whatever its tenant.
//   - Within a tenant, River's order (priority, then oldest first).
//   - Jobs without a tenant (unkeyed runs, River jobs of the application)
//     share one turn, as one more tenant would, in River's order among
//     themselves. Only those among the first fairPlainWindow per job to
//     fetch of River's order are seen, so that a fetch never walks a keyed
//     backlog: one queued behind a keyed backlog is reached once the older
//     part of that backlog is fetched, as in River's order.
//
// The turns rotate: each producer remembers where in the rotation its
// last fetch ended (tenants in text order, then the jobs without a tenant)
// and starts the next fetch after it, so that a fetch of a single job
// serves the tenants in turn, and with more tenants ready than a fetch
// takes, every tenant gets its turn within a few fetches. Producers on
// other clients rotate on their own.
//
// A fetch that asks for kinds (River's FetchOnlyKnownKinds, which every
// Tributary client sets) takes only jobs of those kinds; a tenant whose
// ready jobs are all of other kinds takes a place in the rotation and
// offers nothing.
//
// Tenant rates (workflow.DefineOpts.TenantRate, given by SetTenantRates)
// ride on the same fetch: a job kind with a rate takes at most its
// tenant's tokens' worth of that tenant's candidates. The fetch then runs
// in a transaction that creates or locks the buckets of the rated
// (kind, tenant) pairs among the candidates (tributary_tenant_rates,
// migration 017), so that racing producers on any client take turns on a
// bucket, and takes the tokens of the attempts it started before it
// commits. A fetch that started fewer jobs than it was asked for arms a
// notification of the queue for when the fastest rate's next token comes,
// since River's producers would otherwise only poll again.
//
// The tenants are found by skipping through the index
// river_job_tributary_tenant_ready (migration 015), one probe per tenant,
// at most one fetch's worth of tenants per fetch; each tenant's runs come
// from the same index. The jobs are locked with SKIP LOCKED and moved to
// running as River's own fetch does (the same columns, the same
// attempted_by trimming); River then reads them by id. A producer that
// fetches often starts its next fetch's jobs too, and keeps them in its
// reserve (fair_reserve.go).

// fairPlainWindow is how many of River's first ready jobs per job to fetch
// a fair fetch looks through for jobs without a tenant.
const fairPlainWindow = 4

// fairFetchTimeout bounds a fair fetch, as River bounds its own
// (rivercommon.HotOperationTimeout).
const fairFetchTimeout = 10 * time.Second

// fairState is a producer's state: River's, and where its turns rotate
// from.
type fairState struct {
	riverpilot.ProducerState

	mu         sync.Mutex
	cursor     string    // the tenant the last fetch's turns ended on; "" from the first
	quietUntil time.Time // until when the producer's fetches skip the probe (fairQuietProbe)
	// turns is set while the producer's last fair fetch found two tenants
	// or more with ready jobs: its next fetch is a fair one with no probe.
	turns bool

	producer   producerOf    // whose reserve it is (fair_reserve.go)
	lastFetch  time.Time     // when the producer's last fetch began
	reserve    []startedJob  // jobs started ahead for the producer's next fetches
	reserveGen uint64        // counts the reserves kept, for their put-back
	peak       int           // the most jobs the producer asked for in one fetch
	refilling  chan struct{} // while a refill is in flight; closed when it ends
	stopped    bool          // the producer stopped: no more refills
}

// A producer fetches in turns without probing again while its last fair
// fetch found two tenants or more with jobs ready (in the places of its
// rotation): the probe would only say so again, at a round trip and a
// statement a fetch (616 to 868 probes in a burst of 10,000 slots over
// 1,000 owners, against 12 to 14 since). A fair
// fetch serves any number of tenants rightly, so the only cost of a stale
// "turns" is one fair fetch where River's would have done; the first one
// that finds fewer than two tenants sends the next fetch back to the probe.

// fairQuietProbe is how long a producer whose probe found fewer than two
// tenants with jobs ready (none, or one) fetches with River's own fetch
// without probing again: a queue that never sees a tenant, or sees one,
// pays one probe per this time instead of one per fetch (River fetches up
// to every FetchCooldown, 2 ms by default). A second tenant's runs that
// arrive meanwhile are fetched in River's order for at most this long, so
// they may wait behind the first tenant's backlog for up to this time
// before turns begin at the next probe.
const fairQuietProbe = 250 * time.Millisecond

// ProducerInit gives each producer the state its turns rotate with.
func (p *pilot) ProducerInit(ctx context.Context, exec riverdriver.Executor, params *riverpilot.ProducerInitParams) (int64, riverpilot.ProducerState, error) {
	id, state, err := p.StandardPilot.ProducerInit(ctx, exec, params)
	if err != nil {
		return 0, nil, err
	}
	fs := &fairState{ProducerState: state, producer: producerOf{clientID: params.ClientID, queue: params.Queue, schema: params.Schema}}
	p.producersMu.Lock()
	defer p.producersMu.Unlock()
	if p.producers == nil {
		p.producers = map[int64]*fairState{}
	}
	p.producers[id] = fs
	return id, fs, nil
}

// JobGetAvailable is River's fetch: the producer's reserve first
// (fair_reserve.go), then the fair fetch when jobs of two tenants or more
// are ready in the queue (as the probe, or the producer's last fair fetch,
// found), or when some kind has a tenant limit or rate; River's own
// otherwise. A producer that fetches often in turns then has its reserve
// topped up off its path.
func (p *pilot) JobGetAvailable(ctx context.Context, exec riverdriver.Executor, state riverpilot.ProducerState, params *riverdriver.JobGetAvailableParams) (*riverdriver.JobGetAvailableResult, error) {
	fs, ok := state.(*fairState)
	if !ok || p.pool == nil || params.MaxToLock <= 0 {
		return p.StandardPilot.JobGetAvailable(ctx, exec, state, params)
	}
	if err := fs.awaitRefill(ctx); err != nil {
		return nil, err
	}
	taken, frequent := fs.takeReserve(params.MaxToLock)
	res := &riverdriver.JobGetAvailableResult{Jobs: rowsOf(taken)}
	if len(taken) < params.MaxToLock {
		rest := *params
		rest.MaxToLock -= len(taken)
		got, err := p.fetch(ctx, exec, fs, &rest)
		if err != nil {
			p.untake(fs, taken)
			return nil, err
		}
		// River's own fetch's jobs are not copied behind an empty reserve.
		if len(taken) > 0 {
			got.Jobs = append(res.Jobs, got.Jobs...)
		}
		res = got
	}
	// Not with rates, whose tokens go to attempts as they start.
	if frequent && len(p.rates.kinds) == 0 {
		p.refill(fs, params)
	}
	return res, nil
}

// fetch is JobGetAvailable after the reserve.
func (p *pilot) fetch(ctx context.Context, exec riverdriver.Executor, fs *fairState, params *riverdriver.JobGetAvailableParams) (*riverdriver.JobGetAvailableResult, error) {
	ctx, cancel := context.WithTimeout(ctx, fairFetchTimeout)
	defer cancel()

	texts := p.fairTexts(params.Schema)
	// A client with tenant limits or rates always fetches here: River's
	// own fetch knows neither, and a keyed job inserted after a probe that
	// found none would be taken past them.
	fs.mu.Lock()
	quiet, turns := time.Now().Before(fs.quietUntil), fs.turns
	fs.mu.Unlock()
	if !p.controlled() && !turns {
		if quiet {
			return p.StandardPilot.JobGetAvailable(ctx, exec, fs, params)
		}
		first, last, err := p.probe(ctx, texts, params.Queue)
		if err != nil {
			return nil, fmt.Errorf("tributary: look for ready keyed runs in queue %q: %w", params.Queue, err)
		}
		if first == nil || *first == *last {
			fs.mu.Lock()
			fs.quietUntil = time.Now().Add(fairQuietProbe)
			fs.mu.Unlock()
			return p.StandardPilot.JobGetAvailable(ctx, exec, fs, params)
		}
	}

	got, err := p.fetchTurns(ctx, texts, fs, params)
	if err != nil {
		return nil, err
	}
	// The jobs are running and this producer's from here on, as after
	// River's own fetch, which returns them as it updated them too.
	return &riverdriver.JobGetAvailableResult{Jobs: rowsOf(got)}, nil
}

// fetchTurns is a fair fetch of the producer's from where its turns
// ended; it records where they end now.
func (p *pilot) fetchTurns(ctx context.Context, texts fairTexts, fs *fairState, params *riverdriver.JobGetAvailableParams) ([]startedJob, error) {
	fs.mu.Lock()
	cursor := fs.cursor
	fs.mu.Unlock()
	got, err := p.fetchFair(ctx, texts, params, cursor)
	if err != nil {
		return nil, fmt.Errorf("tributary: fetch jobs of queue %q in fair turns: %w", params.Queue, err)
	}
	fs.mu.Lock()
	fs.cursor, fs.turns = got.served, got.tenants >= 2
	fs.mu.Unlock()
	return got.jobs, nil
}

// probe returns the first and the last tenant (in text order) with jobs
// ready in queue, nil for none: fairProbeSQL under the fair fetch's
// planner settings, which keep it on the tenant index, in one round trip.
func (p *pilot) probe(ctx context.Context, texts fairTexts, queue string) (first, last *string, err error) {
	batch := &pgx.Batch{}
	batch.Queue(fairPlanSQL)
	batch.Queue(texts.probe, queue)
	results := p.pool.SendBatch(ctx, batch)
	defer results.Close()
	if _, err := results.Exec(); err != nil {
		return nil, nil, err
	}
	if err := results.QueryRow().Scan(&first, &last); err != nil {
		return nil, nil, err
	}
	return first, last, results.Close()
}

// fetchFair runs the fair fetch from cursor and returns what it fetched:
// the jobs it started and the tenant its turns ended on. It is
// one batch, sent in one round trip: the transaction's planner settings
// (fairPlanSQL; with tenant limits for some of the client's kinds,
// fairPlanLockSQL, which also takes the advisory locks of the limited
// kinds it may fetch, so that racing producers on any client count each
// other's starts), then the fetch with its limits and rates. Without
// rates the batch is one implicit transaction (one Sync), which holds the
// locks until the fetch is committed; with rates it runs in
// a transaction that then takes the tokens of the rated attempts started.
// When it started fewer jobs than it was asked for, it arms a fetch for
// when the next token comes (rates), and marks the queue for a fetch when
// a limited attempt ends (limits).
func (p *pilot) fetchFair(ctx context.Context, texts fairTexts, params *riverdriver.JobGetAvailableParams, cursor string) (*fetched, error) {
	args := []any{params.Queue, cursor, params.MaxToLock, params.Now,
		params.ClientID, params.MaxAttemptedBy, params.MaxToLock * fairPlainWindow, params.Kind}
	rated, limited := len(p.rates.kinds) > 0, len(p.limits.kinds) > 0

	batch := &pgx.Batch{}
	// The locks come first, in a statement of their own (the settings'):
	// the fetch's snapshot is then taken after the last racing fetch
	// committed.
	if lockKeys := p.limits.lockKeys(params.Schema, params.Kind); len(lockKeys) > 0 {
		batch.Queue(fairPlanLockSQL, lockKeys)
	} else {
		batch.Queue(fairPlanSQL)
	}
	switch {
	case rated:
		batch.Queue(texts.fetchRated, append(args, p.rates.kinds, p.rates.perSecond, p.rates.burst,
			p.limits.kinds, p.limits.types, p.limits.max)...)
	case limited:
		batch.Queue(texts.fetchLimited, append(args, p.limits.kinds, p.limits.types, p.limits.max)...)
	default:
		batch.Queue(texts.fetch, args...)
	}

	var db interface {
		SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	} = p.pool
	var tx pgx.Tx
	if rated {
		var err error
		if tx, err = p.pool.Begin(ctx); err != nil {
			return nil, err
		}
		defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit, a no-op
		db = tx
	}
	got, err := p.readFetch(db.SendBatch(ctx, batch), batch.Len()-1)
	if err != nil {
		return nil, err
	}

	if rated {
		if err := p.takeTokensTx(ctx, tx, texts, got.taken); err != nil {
			return nil, err
		}
		if err := tx.Commit(ctx); err != nil {
			return nil, err
		}
	}
	if len(got.jobs) < params.MaxToLock {
		if got.nextToken != nil {
			p.armFetch(params.Queue, params.Schema, max(*got.nextToken, minRateFetchWait))
		}
		if limited {
			p.limits.markShort(params.Queue)
		}
	}
	return got, nil
}

// fetched is what a fair fetch returned.
type fetched struct {
	// jobs are the jobs started, as the fetch left them, in the order it
	// took them (priority, then rank within their tenant, then place in
	// the rotation), which the rows of an UPDATE's RETURNING do not keep:
	// a refill's are handed out from the producer's reserve in that order.
	jobs   []startedJob
	served string // the tenant at the furthest place in the rotation served (or looked at, by a short fetch)
	// tenants is how many tenants the rotation's places held.
	tenants int64
	// taken counts the attempts started of each rated (kind, tenant) pair.
	taken map[[2]string]float64
	// nextToken is how long until the soonest next token of the rated
	// pairs a short fetch left candidates of out for want of tokens; nil
	// when it left none out so.
	nextToken *time.Duration
}

// readFetch reads the results of a fair fetch's batch: settings statements
// before the fetch, then the fetch's rows (scanFetched), and closes them.
func (p *pilot) readFetch(results pgx.BatchResults, settings int) (*fetched, error) {
	defer results.Close()
	for range settings {
		if _, err := results.Exec(); err != nil {
			return nil, fmt.Errorf("prepare the fetch (planner settings, tenant limits' locks): %w", err)
		}
	}
	rows, err := results.Query()
	if err != nil {
		return nil, err
	}
	got, err := scanFetched(rows, p.rates.byKind)
	if err != nil {
		return nil, err
	}
	return got, results.Close()
}

// scanFetched reads the fair fetch's rows: a row per job started, and for
// a fetch that started fewer than it was asked for one more, with a NULL
// id, for the last place its rotation looked at and the next token.
func scanFetched(rows pgx.Rows, rated map[string]TenantRate) (*fetched, error) {
	defer rows.Close()
	var last int64 // the furthest place in the rotation served
	got := &fetched{taken: map[[2]string]float64{}}
	// started are the jobs, each with the order the fetch took it in: its
	// priority, rank and place.
	type inOrder struct {
		startedJob
		order [3]int64
	}
	var started []inOrder
	for rows.Next() {
		var (
			id        *int64 // NULL for the last place of a short fetch's rotation
			tenant    *string
			pos       int64
			kind      string
			nextToken *float64
			job       fetchedJob
		)
		if err := rows.Scan(append([]any{&id, &tenant, &pos, &kind, &nextToken, &got.tenants}, job.dest()...)...); err != nil {
			return nil, err
		}
		if id != nil {
			started = append(started, inOrder{startedJob{job.row(*id, kind), job.priorAttemptedAt},
				[3]int64{int64(*job.priority), *job.rank, pos}})
		}
		if pos > last {
			last, got.served = pos, ""
			if tenant != nil {
				got.served = *tenant
			}
		}
		if _, ok := rated[kind]; ok && tenant != nil && id != nil {
			got.taken[[2]string{kind, *tenant}]++
		}
		if nextToken != nil {
			wait := time.Duration(*nextToken * float64(time.Second))
			got.nextToken = &wait
		}
	}
	slices.SortFunc(started, func(a, b inOrder) int { return slices.Compare(a.order[:], b.order[:]) })
	for _, s := range started {
		got.jobs = append(got.jobs, s.startedJob)
	}
	return got, rows.Err()
}

// controlled reports whether some kind of the client has a tenant limit or
// rate: its fetches then always go through fetchFair's transaction.
func (p *pilot) controlled() bool { return len(p.rates.kinds) > 0 || len(p.limits.kinds) > 0 }

// armFetch makes the producers of queue fetch again after the given time,
// by River's insert notification: a fetch that left rated runs for want of
// tokens, or limited runs for want of a slot, is otherwise repeated only
// at River's next poll. One is armed per queue at a time.
func (p *pilot) armFetch(queue, schema string, after time.Duration) {
	p.armMu.Lock()
	defer p.armMu.Unlock()
	if p.armed[queue] {
		return
	}
	if p.armed == nil {
		p.armed = map[string]bool{}
	}
	p.armed[queue] = true
	time.AfterFunc(after, func() {
		p.armMu.Lock()
		delete(p.armed, queue)
		p.armMu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), fairFetchTimeout)
		defer cancel()
		// A lost notification costs a poll interval; nothing to report.
		_ = p.driver.GetExecutor().NotifyMany(ctx, insertNotification(schema, queue))
	})
}

// fairTexts are the fair fetch's statements for one schema.
type fairTexts struct {
	schema                                             string
	probe, fetch, fetchLimited, fetchRated, takeTokens string
	putBack                                            string
}

// fairTexts returns the statements for schema; a pilot serves one schema,
// so they are made once.
func (p *pilot) fairTexts(schema string) fairTexts {
	p.fairMu.Lock()
	defer p.fairMu.Unlock()
	if p.fair.probe == "" || p.fair.schema != schema {
		prefix := schemaPrefix(schema)
		p.fair = fairTexts{
			schema:       schema,
			probe:        strings.ReplaceAll(fairProbeSQL, "{s}", prefix),
			fetch:        strings.ReplaceAll(fairFetchSQL, "{s}", prefix),
			fetchLimited: strings.ReplaceAll(fairFetchLimitedSQL, "{s}", prefix),
			fetchRated:   strings.ReplaceAll(fairFetchRatedSQL, "{s}", prefix),
			takeTokens:   strings.ReplaceAll(takeTokensSQL, "{s}", prefix),
			putBack:      strings.ReplaceAll(putBackSQL, "{s}", prefix),
		}
	}
	return p.fair
}
