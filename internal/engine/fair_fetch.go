package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

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
// setting, and costs the unkeyed path one index probe per fetch.
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

	mu     sync.Mutex
	cursor string // the tenant the last fetch's turns ended on; "" from the first
}

// ProducerInit gives each producer the state its turns rotate with.
func (p *pilot) ProducerInit(ctx context.Context, exec riverdriver.Executor, params *riverpilot.ProducerInitParams) (int64, riverpilot.ProducerState, error) {
	id, state, err := p.StandardPilot.ProducerInit(ctx, exec, params)
	if err != nil {
		return 0, nil, err
	}
	return id, &fairState{ProducerState: state}, nil
}

// JobGetAvailable is River's fetch: River's own when no keyed job is ready
// in the queue, the fair fetch when one is.
func (p *pilot) JobGetAvailable(ctx context.Context, exec riverdriver.Executor, state riverpilot.ProducerState, params *riverdriver.JobGetAvailableParams) (*riverdriver.JobGetAvailableResult, error) {
	fs, ok := state.(*fairState)
	if !ok || p.pool == nil || params.MaxToLock <= 0 {
		return p.StandardPilot.JobGetAvailable(ctx, exec, state, params)
	}
	ctx, cancel := context.WithTimeout(ctx, fairFetchTimeout)
	defer cancel()

	texts := p.fairTexts(params.Schema)
	var keyed bool
	if err := queryRow(ctx, p.pool, texts.probe, params.Queue).Scan(&keyed); err != nil {
		return nil, fmt.Errorf("tributary: look for ready keyed runs in queue %q: %w", params.Queue, err)
	}
	if !keyed {
		return p.StandardPilot.JobGetAvailable(ctx, exec, state, params)
	}

	fs.mu.Lock()
	cursor := fs.cursor
	fs.mu.Unlock()

	rows, err := p.pool.Query(ctx, texts.fetch, params.Queue, cursor, params.MaxToLock, params.Now,
		params.ClientID, params.MaxAttemptedBy, params.MaxToLock*fairPlainWindow, params.Kind)
	if err != nil {
		return nil, fmt.Errorf("tributary: fetch jobs of queue %q in fair turns: %w", params.Queue, err)
	}
	var (
		ids    []int64
		last   int64  // the furthest place in the rotation served
		served string // its tenant, "" for the jobs without one
	)
	for rows.Next() {
		var (
			id     int64
			tenant *string
			pos    int64
		)
		if err := rows.Scan(&id, &tenant, &pos); err != nil {
			rows.Close()
			return nil, fmt.Errorf("tributary: fetch jobs of queue %q in fair turns: %w", params.Queue, err)
		}
		ids = append(ids, id)
		if pos > last {
			last, served = pos, ""
			if tenant != nil {
				served = *tenant
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("tributary: fetch jobs of queue %q in fair turns: %w", params.Queue, err)
	}

	fs.mu.Lock()
	fs.cursor = served
	fs.mu.Unlock()

	if len(ids) == 0 {
		return &riverdriver.JobGetAvailableResult{}, nil
	}
	// The jobs are running and this producer's from here on, as after
	// River's own fetch: nothing else changes them before River reads them
	// but a cancellation's metadata, which River reads along.
	jobs, err := exec.JobGetByIDMany(ctx, &riverdriver.JobGetByIDManyParams{ID: ids, Schema: params.Schema})
	if err != nil {
		return nil, fmt.Errorf("tributary: read the %d jobs fetched from queue %q: %w", len(ids), params.Queue, err)
	}
	return &riverdriver.JobGetAvailableResult{Jobs: jobs}, nil
}

// fairTexts are the fair fetch's statements for one schema.
type fairTexts struct {
	schema       string
	probe, fetch string
}

// fairTexts returns the statements for schema; a pilot serves one schema,
// so they are made once.
func (p *pilot) fairTexts(schema string) fairTexts {
	p.fairMu.Lock()
	defer p.fairMu.Unlock()
	if p.fair.probe == "" || p.fair.schema != schema {
		prefix := schemaPrefix(schema)
		p.fair = fairTexts{
			schema: schema,
			probe:  strings.ReplaceAll(fairProbeSQL, "{s}", prefix),
			fetch:  strings.ReplaceAll(fairFetchSQL, "{s}", prefix),
		}
	}
	return p.fair
}

// fairProbeSQL: has the queue a ready keyed job? One probe of the index.
const fairProbeSQL = `SELECT EXISTS (
    SELECT 1 FROM {s}river_job
    WHERE state = 'available' AND args ? 'tenant' AND queue = $1
)`

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
// as the LIMIT needs). Each tenant offers its oldest runs, ranked, about
// twice its share of the fetch; the jobs without a tenant among River's
// first $7 are ranked the same way. The fetch takes them by priority,
// rank, place in the rotation, and locks them as River does, skipping
// those another producer holds.
const fairFetchSQL = `WITH RECURSIVE after_cursor AS (
    (SELECT args->>'tenant' AS tenant FROM {s}river_job
     WHERE state = 'available' AND args ? 'tenant' AND queue = $1 AND args->>'tenant' > $2
     ORDER BY args->>'tenant' LIMIT 1)
    UNION ALL
    SELECT (SELECT args->>'tenant' FROM {s}river_job
            WHERE state = 'available' AND args ? 'tenant' AND queue = $1 AND args->>'tenant' > a.tenant
            ORDER BY args->>'tenant' LIMIT 1)
    FROM after_cursor a WHERE a.tenant IS NOT NULL
),
from_start AS (
    (SELECT args->>'tenant' AS tenant FROM {s}river_job
     WHERE state = 'available' AND args ? 'tenant' AND queue = $1
     ORDER BY args->>'tenant' LIMIT 1)
    UNION ALL
    SELECT (SELECT args->>'tenant' FROM {s}river_job
            WHERE state = 'available' AND args ? 'tenant' AND queue = $1 AND args->>'tenant' > f.tenant
            ORDER BY args->>'tenant' LIMIT 1)
    FROM from_start f WHERE f.tenant IS NOT NULL AND f.tenant <= $2
),
rotation AS MATERIALIZED (
    SELECT r.tenant, row_number() OVER () AS pos
    FROM (
        SELECT tenant FROM (
            SELECT tenant FROM after_cursor WHERE tenant IS NOT NULL
            UNION ALL
            SELECT NULL
            UNION ALL
            SELECT tenant FROM from_start WHERE tenant IS NOT NULL AND tenant <= $2
        ) k
        LIMIT $3 + 1
    ) r
),
keyed AS (
    SELECT j.id, j.priority, j.scheduled_at, j.rank, r.pos
    FROM rotation r CROSS JOIN LATERAL (
        SELECT x.id, x.priority, x.scheduled_at,
            row_number() OVER (ORDER BY x.priority, x.scheduled_at, x.id) AS rank
        FROM (
            SELECT id, priority, scheduled_at FROM {s}river_job
            WHERE state = 'available' AND args ? 'tenant' AND queue = $1 AND args->>'tenant' = r.tenant
                AND scheduled_at <= coalesce($4::timestamptz, now())
                AND ($8::text[] IS NULL OR kind = ANY($8::text[]))
            ORDER BY priority, scheduled_at, id
            LIMIT (SELECT $3 * 2 / count(*) + 1 FROM rotation)
        ) x
    ) j
    WHERE r.tenant IS NOT NULL
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
picked AS (
    SELECT c.id, c.priority, c.rank, c.pos
    FROM (SELECT * FROM keyed UNION ALL SELECT * FROM plain) c
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
)
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
    )
FROM locked
WHERE river_job.id = locked.id
RETURNING river_job.id, river_job.args->>'tenant', locked.pos`
