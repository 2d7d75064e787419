package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/uniquestates"
	"github.com/riverqueue/river/rivertype"
)

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
// is left out. The caller holds the kinds' locks (fairPlanLockSQL)
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
// newBatchPool). And no sort where an index gives the order: a tenant's
// turn is one probe of river_job_tributary_tenant_ready in tenant order,
// and when the planner knows little of river_job (a new schema, never
// analyzed, where both indexes are estimated at one row), River's
// river_job_prioritized_fetching_index followed by a sort looks as cheap,
// and was chosen where it was a level shorter than the tenant index: each
// probe then read every ready job of the queue (17 ms a fetch, in a burst
// of 10,000 slots over 1,000 owners, against 1 ms;
// TestFairFetchPlanKeepsToTheTenantIndex). The statements that need a sort still sort; and since a sort
// the planner was told to avoid costs it 10^10, which is over every JIT
// threshold, JIT is off too (it compiled each fetch anew: 0.7 s a fetch).
// The settings end with the transaction.
const fairPlanSQL = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true),
    set_config('enable_sort', 'off', true), set_config('jit', 'off', true)`

// fairPlanLockSQL is fairPlanSQL that also takes the transaction advisory
// locks of the limited kinds $1 (each a schema-qualified key, see
// pilotLimits.lockKeys), in order, so that two fetches locking some of the
// same kinds never wait for each other in a circle: one statement before
// the fetch instead of two, since a limited fetch is on its producer's
// serial path (the statement is planned before its settings apply, so its
// sort is planned as any other).
const fairPlanLockSQL = fairPlanSQL + `,
    (SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))
     FROM (SELECT DISTINCT unnest($1::text[]) AS k ORDER BY 1) x)`
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
// Each row also says how many tenants the rotation held (at most $3 + 1),
// for the producer's choice of its next fetch (fairState.turns).
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
            -- The tenant is bounded from both sides rather than equal to
            -- r.tenant, and leads the order, so that the planner does not
            -- take the order as given by River's fetching index (an
            -- equality to the outer row would make it redundant): that index
            -- would then need a sort, and the tenant index is taken (see
            -- fairPlanSQL). The two bounds select exactly the tenant's jobs,
            -- text comparison being deterministic under a database's
            -- collation.
            WHERE state = 'available' AND args ? 'tenant' AND queue = $1
                AND args->>'tenant' >= r.tenant AND args->>'tenant' <= r.tenant
                AND scheduled_at <= coalesce($4::timestamptz, now())
                AND ($8::text[] IS NULL OR kind = ANY($8::text[]))
            ORDER BY args->>'tenant', priority, scheduled_at, id
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
            -- The window is read only when the rotation holds the place of
            -- the jobs without a tenant: with many tenants ready, most
            -- fetches' places are tenants only, and the window's look
            -- through River's first ready jobs (keyed, nearly all, each
            -- read from the heap for its tenant) was a fifth of the fetch.
            AND EXISTS (SELECT FROM rotation WHERE tenant IS NULL)
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
    SELECT j.id, p.pos, p.rank, j.attempted_at AS prior_attempted_at
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
    river_job.unique_states, locked.prior_attempted_at, locked.rank
)
SELECT id, tenant, pos, kind, NULL::float8 AS next_token_s, (SELECT count(tenant) FROM rotation) AS tenants,
    args, attempt, attempted_at, attempted_by, created_at, errors, finalized_at, max_attempts, metadata, priority,
    queue, state, scheduled_at, tags, unique_key, unique_states, prior_attempted_at, rank
FROM started
UNION ALL
SELECT NULL, r.tenant, r.pos, '', {nextToken}, (SELECT count(tenant) FROM rotation),
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
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
	// priorAttemptedAt is attempted_at before the fetch, which a job put
	// back from a producer's reserve gets again (fair_reserve.go).
	priorAttemptedAt *time.Time
	// rank is the job's rank among its tenant's in the fetch, which with
	// its priority and place in the rotation orders the fetch's jobs.
	rank *int64
}

func (j *fetchedJob) dest() []any {
	return []any{&j.args, &j.attempt, &j.attemptedAt, &j.attemptedBy, &j.createdAt, &j.errors, &j.finalizedAt,
		&j.maxAttempts, &j.metadata, &j.priority, &j.queue, &j.state, &j.scheduledAt, &j.tags, &j.uniqueKey, &j.uniqueStates,
		&j.priorAttemptedAt, &j.rank}
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
