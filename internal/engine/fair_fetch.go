package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivershared/uniquestates"
	"github.com/riverqueue/river/rivertype"
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
// attempted_by trimming); River then reads them by id.

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
}

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
	return id, &fairState{ProducerState: state}, nil
}

// JobGetAvailable is River's fetch: the fair fetch when jobs of two
// tenants or more are ready in the queue (or of one, when some kind has a
// tenant rate), River's own otherwise.
func (p *pilot) JobGetAvailable(ctx context.Context, exec riverdriver.Executor, state riverpilot.ProducerState, params *riverdriver.JobGetAvailableParams) (*riverdriver.JobGetAvailableResult, error) {
	fs, ok := state.(*fairState)
	if !ok || p.pool == nil || params.MaxToLock <= 0 {
		return p.StandardPilot.JobGetAvailable(ctx, exec, state, params)
	}
	ctx, cancel := context.WithTimeout(ctx, fairFetchTimeout)
	defer cancel()

	texts := p.fairTexts(params.Schema)
	// A client with tenant limits or rates always fetches here: River's
	// own fetch knows neither, and a keyed job inserted after a probe that
	// found none would be taken past them.
	if !p.controlled() {
		fs.mu.Lock()
		quiet := time.Now().Before(fs.quietUntil)
		fs.mu.Unlock()
		if quiet {
			return p.StandardPilot.JobGetAvailable(ctx, exec, state, params)
		}
		var first, last *string // the first and the last tenant with ready jobs
		if err := queryRow(ctx, p.pool, texts.probe, params.Queue).Scan(&first, &last); err != nil {
			return nil, fmt.Errorf("tributary: look for ready keyed runs in queue %q: %w", params.Queue, err)
		}
		if first == nil || *first == *last {
			fs.mu.Lock()
			fs.quietUntil = time.Now().Add(fairQuietProbe)
			fs.mu.Unlock()
			return p.StandardPilot.JobGetAvailable(ctx, exec, state, params)
		}
	}

	fs.mu.Lock()
	cursor := fs.cursor
	fs.mu.Unlock()

	got, err := p.fetchFair(ctx, texts, params, cursor)
	if err != nil {
		return nil, fmt.Errorf("tributary: fetch jobs of queue %q in fair turns: %w", params.Queue, err)
	}

	fs.mu.Lock()
	fs.cursor = got.served
	fs.mu.Unlock()

	// The jobs are running and this producer's from here on, as after
	// River's own fetch, which returns them as it updated them too.
	return &riverdriver.JobGetAvailableResult{Jobs: got.jobs}, nil
}

// fetchFair runs the fair fetch from cursor and returns what it fetched:
// the jobs it started and the tenant its turns ended on. It is
// one batch, sent in one round trip: the transaction's planner settings (fairPlanSQL),
// then, with tenant limits for some of the client's kinds, the advisory
// locks of the limited kinds it may fetch (so that racing producers on any
// client count each other's starts), then the fetch with its limits and
// rates. Without rates the batch is one implicit transaction (one Sync),
// which holds the locks until the fetch is committed; with rates it runs in
// a transaction that then takes the tokens of the rated attempts started.
// When it started fewer jobs than it was asked for, it arms a fetch for
// when the next token comes (rates), and marks the queue for a fetch when
// a limited attempt ends (limits).
func (p *pilot) fetchFair(ctx context.Context, texts fairTexts, params *riverdriver.JobGetAvailableParams, cursor string) (*fetched, error) {
	args := []any{params.Queue, cursor, params.MaxToLock, params.Now,
		params.ClientID, params.MaxAttemptedBy, params.MaxToLock * fairPlainWindow, params.Kind}
	rated, limited := len(p.rates.kinds) > 0, len(p.limits.kinds) > 0

	batch := &pgx.Batch{}
	batch.Queue(fairPlanSQL)
	// The locks come first, in a statement of their own: the fetch's
	// snapshot is then taken after the last racing fetch committed.
	if lockKeys := p.limits.lockKeys(params.Schema, params.Kind); len(lockKeys) > 0 {
		batch.Queue(texts.lockKinds, lockKeys)
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
	jobs   []*rivertype.JobRow // the jobs started, as the fetch left them
	served string              // the tenant at the furthest place in the rotation served (or looked at, by a short fetch)
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
	for rows.Next() {
		var (
			id        *int64 // NULL for the last place of a short fetch's rotation
			tenant    *string
			pos       int64
			kind      string
			nextToken *float64
			job       fetchedJob
		)
		if err := rows.Scan(append([]any{&id, &tenant, &pos, &kind, &nextToken}, job.dest()...)...); err != nil {
			return nil, err
		}
		if id != nil {
			got.jobs = append(got.jobs, job.row(*id, kind))
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
	schema                                                        string
	probe, fetch, fetchLimited, fetchRated, takeTokens, lockKinds string
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
			lockKinds:    lockLimitedKindsSQL,
		}
	}
	return p.fair
}

// fairFetchSQL is the fair fetch without tenant limits or rates;
// fairFetchLimitedSQL is it with the limits of $9 (job kinds), $10 (their
// workflow types) and $11 (the types' limits); fairFetchRatedSQL is it
// with the rates of $9 (job kinds), $10 (tokens a second) and $11 (bucket
// sizes) and the limits as $12 to $14, which may be empty.
//
// For rates (fairRatesCTEs, fair_rates.go), buckets creates, or locks and
// refills to now, the bucket of each rated (kind, tenant) pair among the
// candidates, allowance is each pair's whole tokens, and a candidate of a
// pair beyond them is left out. The caller takes the tokens of what was
// started (takeTokensSQL) in the same transaction. A fetch that started
// fewer than $3 returns, in its last row's next_token_s, how long until
// the first of the pairs it left out for want of tokens has one
// (fairNextToken), NULL when it left none out so.
//
// For limits, headroom is, for each limited (kind, tenant) pair among the
// candidates (pair_limits, materialized: inlined, its two subqueries ran
// twice per pair), its limit (the tenant's own, tributary_tenant_limits, else
// the type's) less its jobs running now (through the partial index
// river_job_tributary_tenant_running), and a candidate of a pair beyond it
// is left out. The caller holds the kinds' locks (lockLimitedKindsSQL)
// from before the statement began, so that what it counts as running
// includes every start of a racing fetch. held marks the candidates left
// out, for River UI: their job's metadata gets tributary_held, {"reason":
// "tenant_limit", "tenant": …, "limit": …}, written once per job (again
// only when the limit changed), and removed when the job is fetched.
var (
	fairFetchSQL = strings.NewReplacer("{controls}", "", "{allowed}", "", "{unmark}", "",
		"{nextToken}", "NULL").Replace(fairFetchTemplate)
	fairFetchLimitedSQL = strings.NewReplacer("{controls}", limitsCTEs(9), "{allowed}", "\n        WHERE"+fairWithinLimit,
		"{unmark}", fairUnmark, "{nextToken}", "NULL").Replace(fairFetchTemplate)
	fairFetchRatedSQL = strings.NewReplacer("{controls}", fairRatesCTEs+limitsCTEs(12), "{allowed}", fairAllowedFilter,
		"{unmark}", fairUnmark, "{nextToken}", fairNextToken).Replace(fairFetchTemplate)
)

// limitsCTEs are fairLimitsCTEs with the limits' parameters numbered
// from first.
func limitsCTEs(first int) string {
	return strings.NewReplacer("$K", fmt.Sprintf("$%d", first), "$T", fmt.Sprintf("$%d", first+1),
		"$M", fmt.Sprintf("$%d", first+2)).Replace(fairLimitsCTEs)
}

const fairLimitsCTEs = `limits AS (
    SELECT * FROM unnest($K::text[], $T::text[], $M::int[]) AS l(kind, workflow_type, max_running)
),
pair_limits AS MATERIALIZED (
    SELECT p.kind, p.tenant,
        coalesce((SELECT t.max_running FROM {s}tributary_tenant_limits t
                  WHERE t.workflow_type = l.workflow_type AND t.tenant = p.tenant), l.max_running) AS max_running,
        (SELECT count(*) FROM {s}river_job x
         WHERE x.state = 'running' AND x.args ? 'tenant' AND x.kind = p.kind AND x.args->>'tenant' = p.tenant) AS running
    FROM (SELECT DISTINCT kind, tenant FROM keyed) p JOIN limits l ON l.kind = p.kind
),
headroom AS (
    SELECT kind, tenant, max_running, running, max_running - running AS n FROM pair_limits
),
held AS (
    UPDATE {s}river_job j
    SET metadata = j.metadata || jsonb_build_object('tributary_held', jsonb_build_object(
        'reason', 'tenant_limit', 'tenant', h.tenant, 'limit', h.max_running))
    FROM keyed k JOIN headroom h ON h.kind = k.kind AND h.tenant = k.tenant
    WHERE j.id = k.id AND k.kind_rank > h.n AND j.state = 'available'
        AND (j.metadata->'tributary_held'->>'limit') IS DISTINCT FROM h.max_running::text
),
`

// fairUnmark removes a job's tributary_held mark (fairLimitsCTEs's held)
// as it is fetched.
const fairUnmark = `,
    metadata = CASE WHEN river_job.metadata ? 'tributary_held' THEN river_job.metadata - 'tributary_held' ELSE river_job.metadata END`

// fairPlanSQL sets the planner settings of a fair fetch's transaction: a
// generic plan, made once per connection, since planning the fair fetch
// costs more than running it (1.1 to 2.3 ms against 0.6 to 1 ms, measured
// with EXPLAIN ANALYZE over 1,000 tenants) and Postgres kept making custom
// plans for it; and no sequential scan, so that a plan made while the
// tables were small (a new schema, a quiet queue) does not scan them whole
// once they are large, as the batch pool's connections do (workflow's
// newBatchPool). The settings end with the transaction.
const fairPlanSQL = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true)`

// lockLimitedKindsSQL takes the transaction advisory locks of the limited
// kinds $1 (each a schema-qualified key, see pilotLimits.lockKeys), in
// order, so that two fetches locking some of the same kinds never wait for
// each other in a circle.
const lockLimitedKindsSQL = `SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))
FROM (SELECT DISTINCT unnest($1::text[]) AS k ORDER BY 1) x`

const fairAllowedFilter = `
        WHERE NOT EXISTS (SELECT 1 FROM allowance a WHERE a.kind = k.kind AND a.tenant = k.tenant AND k.kind_rank > a.n)
            AND` + fairWithinLimit

const fairWithinLimit = ` NOT EXISTS (SELECT 1 FROM headroom h WHERE h.kind = k.kind AND h.tenant = k.tenant AND k.kind_rank > h.n)`

// fairProbeSQL: the first and the last tenant (in text order) with ready
// jobs in the queue, NULL for none; two probes of the index, one at each
// end.
const fairProbeSQL = `SELECT
    (SELECT args->>'tenant' FROM {s}river_job
     WHERE state = 'available' AND args ? 'tenant' AND queue = $1
     ORDER BY args->>'tenant' LIMIT 1),
    (SELECT args->>'tenant' FROM {s}river_job
     WHERE state = 'available' AND args ? 'tenant' AND queue = $1
     ORDER BY args->>'tenant' DESC LIMIT 1)`

// fairFetchSQL locks and starts up to $3 jobs of queue $1 in fair turns,
// the rotation starting after tenant $2, and returns their ids, tenants
// and places in the rotation. $4 is River's now (NULL for the database's),
// $5 the client id for attempted_by, $6 how many attempted_by keeps, $7
// how many of River's first ready jobs to look through for jobs without a
// tenant, $8 the kinds to take (NULL for any).
//
// rotation skips through the index from the cursor, then puts the jobs
// without a tenant (NULL), then skips from the first tenant up to the
// cursor, and stops at $3 + 1 places (the recursion is pulled only as far
// as the LIMIT needs). Each skip lands on the tenant's first entry in the
// index, which is its oldest ready job in River's order, so the rotation
// carries that job along. A full rotation (more places than the fetch
// takes, the common case with many tenants) shares the fetch one job per
// tenant: each tenant offers the job its skip found, with no second look
// at the index, unless that job is not to be taken now (another kind than
// $8, or scheduled later), when the tenant's line is searched for its
// oldest that is. A rotation of fewer places shares the fetch about twice
// over: each tenant offers its oldest runs, ranked, from its line. The
// jobs without a tenant among River's first $7 are ranked the same way.
// The fetch takes them by priority, rank, place in the rotation, and
// locks them as River does, skipping those another producer holds.
//
// A fetch that started fewer than $3 jobs looked at every place of its
// rotation, and returns one more row, with a NULL id: the last place. Its
// turns end there, so that the next fetch begins after it even when those
// places offered nothing (tenants at their limit, or out of tokens):
// without it, a fetch that starts nothing would keep beginning at the same
// tenants, and those after them would wait until one of them had room.
const fairFetchTemplate = `WITH RECURSIVE after_cursor AS (
    (SELECT args->>'tenant' AS tenant, id, priority, scheduled_at, kind FROM {s}river_job
     WHERE state = 'available' AND args ? 'tenant' AND queue = $1 AND args->>'tenant' > $2
     ORDER BY args->>'tenant', priority, scheduled_at, id LIMIT 1)
    UNION ALL
    SELECT n.* FROM after_cursor a CROSS JOIN LATERAL (
        SELECT args->>'tenant' AS tenant, id, priority, scheduled_at, kind FROM {s}river_job
        WHERE state = 'available' AND args ? 'tenant' AND queue = $1 AND args->>'tenant' > a.tenant
        ORDER BY args->>'tenant', priority, scheduled_at, id LIMIT 1
    ) n
),
from_start AS (
    (SELECT args->>'tenant' AS tenant, id, priority, scheduled_at, kind FROM {s}river_job
     WHERE state = 'available' AND args ? 'tenant' AND queue = $1
     ORDER BY args->>'tenant', priority, scheduled_at, id LIMIT 1)
    UNION ALL
    SELECT n.* FROM from_start f CROSS JOIN LATERAL (
        SELECT args->>'tenant' AS tenant, id, priority, scheduled_at, kind FROM {s}river_job
        WHERE state = 'available' AND args ? 'tenant' AND queue = $1 AND args->>'tenant' > f.tenant
        ORDER BY args->>'tenant', priority, scheduled_at, id LIMIT 1
    ) n
    WHERE f.tenant <= $2
),
rotation AS MATERIALIZED (
    SELECT r.tenant, r.id, r.priority, r.scheduled_at, r.kind,
        r.scheduled_at <= coalesce($4::timestamptz, now()) AND ($8::text[] IS NULL OR r.kind = ANY($8::text[])) AS first_ok,
        row_number() OVER () AS pos
    FROM (
        SELECT * FROM (
            SELECT * FROM after_cursor
            UNION ALL
            SELECT NULL, NULL, NULL, NULL, NULL
            UNION ALL
            SELECT * FROM from_start WHERE tenant <= $2
        ) k
        LIMIT $3 + 1
    ) r
),
share AS (
    SELECT CASE WHEN count(*) > $3 THEN 1 ELSE $3 * 2 / count(*) + 1 END AS n FROM rotation
),
keyed AS (
    SELECT r.id, r.priority, r.scheduled_at, 1::bigint AS rank, r.pos, r.kind, r.tenant, 1::bigint AS kind_rank
    FROM rotation r
    WHERE r.tenant IS NOT NULL AND r.first_ok AND (SELECT n FROM share) = 1
    UNION ALL
    SELECT j.id, j.priority, j.scheduled_at, j.rank, r.pos, j.kind, r.tenant, j.kind_rank
    FROM rotation r CROSS JOIN LATERAL (
        SELECT x.id, x.priority, x.scheduled_at, x.kind,
            row_number() OVER (ORDER BY x.priority, x.scheduled_at, x.id) AS rank,
            row_number() OVER (PARTITION BY x.kind ORDER BY x.priority, x.scheduled_at, x.id) AS kind_rank
        FROM (
            SELECT id, priority, scheduled_at, kind FROM {s}river_job
            WHERE state = 'available' AND args ? 'tenant' AND queue = $1 AND args->>'tenant' = r.tenant
                AND scheduled_at <= coalesce($4::timestamptz, now())
                AND ($8::text[] IS NULL OR kind = ANY($8::text[]))
            ORDER BY priority, scheduled_at, id
            LIMIT (SELECT n FROM share)
        ) x
    ) j
    WHERE r.tenant IS NOT NULL AND (NOT r.first_ok OR (SELECT n FROM share) > 1)
),
plain AS (
    SELECT w.id, w.priority, w.scheduled_at,
        row_number() OVER (ORDER BY w.priority, w.scheduled_at, w.id) AS rank, r.pos
    FROM (
        SELECT id, priority, scheduled_at, args FROM {s}river_job
        WHERE state = 'available' AND queue = $1 AND scheduled_at <= coalesce($4::timestamptz, now())
            AND ($8::text[] IS NULL OR kind = ANY($8::text[]))
        ORDER BY priority, scheduled_at, id
        LIMIT $7
    ) w
    JOIN rotation r ON r.tenant IS NULL
    WHERE NOT w.args ? 'tenant'
),
{controls}picked AS (
    SELECT c.id, c.priority, c.rank, c.pos
    FROM (
        SELECT k.id, k.priority, k.scheduled_at, k.rank, k.pos FROM keyed k{allowed}
        UNION ALL
        SELECT * FROM plain
    ) c
    ORDER BY c.priority, c.rank, c.pos
    LIMIT $3 * 2
),
locked AS (
    SELECT j.id, p.pos
    FROM picked p JOIN {s}river_job j ON j.id = p.id
    WHERE j.state = 'available'
    ORDER BY p.priority, p.rank, p.pos
    LIMIT $3
    FOR UPDATE OF j SKIP LOCKED
),
started AS (
UPDATE {s}river_job
SET state = 'running',
    attempt = river_job.attempt + 1,
    attempted_at = coalesce($4::timestamptz, now()),
    attempted_by = array_append(
        CASE WHEN array_length(river_job.attempted_by, 1) >= $6
        -- +2 instead of +1: Postgres arrays count from 1 (River's own).
        THEN river_job.attempted_by[array_length(river_job.attempted_by, 1) + 2 - $6:]
        ELSE river_job.attempted_by
        END,
        $5::text
    ){unmark}
FROM locked
WHERE river_job.id = locked.id
RETURNING river_job.id, river_job.args->>'tenant' AS tenant, locked.pos, river_job.kind,
    river_job.args, river_job.attempt, river_job.attempted_at, river_job.attempted_by, river_job.created_at,
    river_job.errors, river_job.finalized_at, river_job.max_attempts, river_job.metadata, river_job.priority,
    river_job.queue, river_job.state::text AS state, river_job.scheduled_at, river_job.tags, river_job.unique_key,
    river_job.unique_states
)
SELECT id, tenant, pos, kind, NULL::float8 AS next_token_s,
    args, attempt, attempted_at, attempted_by, created_at, errors, finalized_at, max_attempts, metadata, priority,
    queue, state, scheduled_at, tags, unique_key, unique_states
FROM started
UNION ALL
SELECT NULL, r.tenant, r.pos, '', {nextToken},
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM (SELECT tenant, pos FROM rotation ORDER BY pos DESC LIMIT 1) r
WHERE (SELECT count(*) FROM started) < $3`

// fetchedJob is a job's columns as the fair fetch returns them (nullable,
// for the row of a short fetch's last place).
type fetchedJob struct {
	args         []byte
	attempt      *int16
	attemptedAt  *time.Time
	attemptedBy  []string
	createdAt    *time.Time
	errors       [][]byte
	finalizedAt  *time.Time
	maxAttempts  *int16
	metadata     []byte
	priority     *int16
	queue        *string
	state        *string
	scheduledAt  *time.Time
	tags         []string
	uniqueKey    []byte
	uniqueStates pgtype.Bits
}

func (j *fetchedJob) dest() []any {
	return []any{&j.args, &j.attempt, &j.attemptedAt, &j.attemptedBy, &j.createdAt, &j.errors, &j.finalizedAt,
		&j.maxAttempts, &j.metadata, &j.priority, &j.queue, &j.state, &j.scheduledAt, &j.tags, &j.uniqueKey, &j.uniqueStates}
}

// row is the job as River's driver makes it of the same columns
// (riverpgxv5's jobRowFromInternalPartial, which JobGetByIDMany uses:
// times in UTC, attempt errors that cannot be decoded left out), so that
// River reads a fair fetch's jobs as it reads its own;
// TestFairFetchRowsAsRiverReadsThem holds the two to each other.
func (j *fetchedJob) row(id int64, kind string) *rivertype.JobRow {
	utc := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		u := t.UTC()
		return &u
	}
	errs := make([]rivertype.AttemptError, len(j.errors))
	for i, raw := range j.errors {
		if err := riverdriver.UnmarshalAttemptError(raw, &errs[i]); err != nil {
			errs = nil
			break
		}
	}
	var uniqueStates byte
	if j.uniqueStates.Valid && len(j.uniqueStates.Bytes) > 0 {
		uniqueStates = j.uniqueStates.Bytes[0]
	}
	deref16 := func(v *int16) int {
		if v == nil {
			return 0
		}
		return max(int(*v), 0)
	}
	job := &rivertype.JobRow{
		ID:           id,
		Attempt:      deref16(j.attempt),
		AttemptedAt:  utc(j.attemptedAt),
		AttemptedBy:  j.attemptedBy,
		EncodedArgs:  j.args,
		Errors:       errs,
		FinalizedAt:  utc(j.finalizedAt),
		Kind:         kind,
		MaxAttempts:  deref16(j.maxAttempts),
		Metadata:     j.metadata,
		Priority:     deref16(j.priority),
		Tags:         j.tags,
		UniqueKey:    j.uniqueKey,
		UniqueStates: uniquestates.UniqueBitmaskToStates(uniqueStates),
	}
	if j.createdAt != nil {
		job.CreatedAt = j.createdAt.UTC()
	}
	if j.scheduledAt != nil {
		job.ScheduledAt = j.scheduledAt.UTC()
	}
	if j.queue != nil {
		job.Queue = *j.queue
	}
	if j.state != nil {
		job.State = rivertype.JobState(*j.state)
	}
	return job
}
