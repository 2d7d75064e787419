package engine

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivertype"
)

// A producer's reserve.
//
// River's producer fetches one fetch after the other: it asks for as many
// jobs as it has free slots, starts them, and fetches again when a slot
// frees, no sooner than its cooldown (FetchCooldown) after the last call
// for a fetch. Its runs wait for each fetch, so the time a fetch takes is
// part of every cycle of the queue, and a fair fetch takes longer than
// River's (a probe of the tenant index per tenant, and the tenants'
// limits). Worse, a fetch that outlasts the cooldown lets the first slot
// that frees after it call for the next fetch at once, which then asks
// for that one slot, and the slots that free just after it wait a whole
// cooldown: measured over 1,000 tenants with 20 workers and River's
// fetch cooldown of 2 ms, a quarter of the fetches asked for one job, and
// 0-step runs cycled 25 % slower than without a tenant (docs/benchmarks.md).
//
// So while a producer fetches often in turns, its fair fetches are made
// ahead, off its path: after each fetch, a refill in the background starts
// the next turns' jobs, up to the most the producer has asked for in one
// fetch, and keeps them in the producer's reserve, once the reserve is
// down to half that. The producer's next fetch hands them out with no
// statement (waiting for a refill still in flight first, so that the
// producer's fetches never overlap), and a fetch asking for more than the
// reserve holds gets the reserve and the rest from the database.
//
// What a reserve keeps:
//
//   - Its jobs are running and this client's from the fetch that started
//     them, as River's own fetch leaves its jobs: they count against their
//     tenant's limit from then on, so no more of a tenant's jobs run at
//     once than its limit, and the orphan rescue and the dead-client
//     rescue see them as this client's (a client that dies with a reserve
//     has its reserved jobs rescued with its others, each with an attempt
//     counted as failed, as for a job River fetched and had not begun).
//   - The turns: the reserve's jobs are the ones the next fetches in turns
//     would have taken first, and the fetch after them goes on after them.
//     A tenant or a better priority whose jobs become ready meanwhile is
//     served after the reserve, at most one refill (the most jobs the
//     producer asks for in one fetch) later than without it.
//   - An attempt begins when its worker starts, as for any job: its
//     attempted_at is the refill's time, up to a few fetch cycles earlier.
//   - River's JobCancel of a reserved job reaches it once it starts, by
//     River's poll for the cancellations of its producer's running jobs
//     (its notification finds no executor for the job before then).
//
// A producer keeps a reserve only while it fetches often (its previous
// fetch began less than reserveCadence earlier) and in turns (its last
// fetch was a fair one, or some kind has a tenant limit: River's own fetch
// is quick), so that the reserve is handed out within a few cycles, and
// never for a client with tenant rates, whose tokens are taken as
// attempts start. A reserve not handed out within reserveMaxAge (the
// producer stopped fetching: its queue paused, or its slots all held by
// long attempts) is put back, as is a producer's reserve when it stops:
// its jobs become available again as they were before the fetch (state,
// attempt, attempted_at, and attempted_by, unless River's fetch dropped
// the oldest entry of a full attempted_by), and the queue's producers are
// notified. A put-back that fails (the database unreachable) keeps the
// reserve for the next fetch, and is tried again after reserveMaxAge. A
// refill that fails is logged as a warning and leaves the reserve as it
// was; the producer's next fetch fetches for itself.
const (
	reserveCadence = 10 * time.Millisecond
	reserveMaxAge  = 100 * time.Millisecond
)

// reserveTimeout bounds putting a reserve back, and reservePutBackMaxWait
// the wait before a failed put-back is tried again.
const (
	reserveTimeout        = 5 * time.Second
	reservePutBackMaxWait = 30 * time.Second
)

// startedJob is a job a fair fetch started, with its attempted_at before
// the fetch: what a producer's reserve holds.
type startedJob struct {
	job   *rivertype.JobRow
	prior *time.Time
}

// rowsOf returns the jobs' rows, as River takes them.
func rowsOf(jobs []startedJob) []*rivertype.JobRow {
	rows := make([]*rivertype.JobRow, len(jobs))
	for i, j := range jobs {
		rows[i] = j.job
	}
	return rows
}

// producerOf is what a reserve's put-back needs of its producer.
type producerOf struct {
	clientID, queue, schema string
}

// takeReserve takes up to n jobs from the producer's reserve, oldest
// first, and reports whether the producer fetches often: its previous
// fetch began less than reserveCadence ago (it records this one's start).
func (fs *fairState) takeReserve(n int) (taken []startedJob, frequent bool) {
	now := time.Now()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	frequent = !fs.lastFetch.IsZero() && now.Sub(fs.lastFetch) < reserveCadence
	fs.lastFetch = now
	n = min(n, len(fs.reserve))
	taken = slices.Clone(fs.reserve[:n])
	fs.reserve = slices.Delete(fs.reserve, 0, n)
	return taken, frequent
}

// untake puts jobs takeReserve took back at the head of the reserve, and
// arms their put-back: the fetch that was to hand them out with more
// failed.
func (p *pilot) untake(fs *fairState, taken []startedJob) {
	p.restore(fs, taken, true, reserveMaxAge, 0)
}

// keepReserve adds jobs, started by a refill ahead of its producer's
// fetches, to the producer's reserve, and arms their put-back.
func (p *pilot) keepReserve(fs *fairState, jobs []startedJob) {
	p.restore(fs, jobs, false, reserveMaxAge, 0)
}

// restore puts jobs in the producer's reserve (nothing for none), at its
// head or its end, and arms the reserve's put-back after wait, with
// failures the tries that failed before (0 for a new reserve).
func (p *pilot) restore(fs *fairState, jobs []startedJob, head bool, wait time.Duration, failures int) {
	if len(jobs) == 0 {
		return
	}
	fs.mu.Lock()
	if head {
		fs.reserve = append(jobs, fs.reserve...)
	} else {
		fs.reserve = append(fs.reserve, jobs...)
	}
	fs.reserveGen++
	gen := fs.reserveGen
	fs.mu.Unlock()
	time.AfterFunc(wait, func() { p.putBackReserve(context.Background(), fs, gen, failures) })
}

// putBackReserve puts the producer's reserve back (see the reserve's
// comment) if it is still the one of generation gen (0 for any): a fetch
// since kept a newer one, whose own put-back is armed. A put-back that
// fails keeps the jobs in the reserve, for the producer's next fetch, and
// is tried again, waiting twice as long each time up to
// reservePutBackMaxWait; failures counts the tries that failed before.
func (p *pilot) putBackReserve(ctx context.Context, fs *fairState, gen uint64, failures int) {
	fs.mu.Lock()
	if len(fs.reserve) == 0 || (gen != 0 && gen != fs.reserveGen) {
		fs.mu.Unlock()
		return
	}
	back := fs.reserve
	fs.reserve = nil
	fs.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reserveTimeout)
	defer cancel()
	ids := make([]int64, len(back))
	prior := make([]*time.Time, len(back))
	for i, r := range back {
		ids[i], prior[i] = r.job.ID, r.prior
	}
	texts := p.fairTexts(fs.producer.schema)
	err := p.driver.GetExecutor().Exec(ctx, texts.putBack, ids, prior, fs.producer.clientID)
	if err == nil {
		// A lost notification costs a poll interval.
		_ = p.driver.GetExecutor().NotifyMany(ctx, insertNotification(fs.producer.schema, fs.producer.queue))
		return
	}
	if gone(err) {
		// A dead client's running jobs are rescued.
		return
	}
	wait := min(reserveMaxAge<<min(failures+1, 16), reservePutBackMaxWait)
	p.logger().WarnContext(ctx, "tributary: could not put a producer's reserve of started jobs back in their queue; keeping them for its next fetch, and trying again",
		slog.String("queue", fs.producer.queue), slog.Int("jobs", len(back)), slog.Duration("retry_in", wait), slog.String("err", err.Error()))
	p.restore(fs, back, true, wait, failures+1)
}

// refill tops up the producer's reserve in the background (see the
// reserve's comment), after a fetch that asked as params: to the most jobs
// it asked for in one fetch, once the reserve holds half that or less, and
// only while its fetches are fair ones. One refill is in flight at a time,
// and none once the producer stopped.
func (p *pilot) refill(fs *fairState, params *riverdriver.JobGetAvailableParams) {
	fs.mu.Lock()
	fs.peak = max(fs.peak, params.MaxToLock)
	n := fs.peak - len(fs.reserve)
	if fs.stopped || fs.refilling != nil || len(fs.reserve) > fs.peak/2 || !(fs.turns || p.controlled()) {
		fs.mu.Unlock()
		return
	}
	done := make(chan struct{})
	fs.refilling = done
	fs.mu.Unlock()

	ask := *params
	ask.MaxToLock = n
	go func() {
		defer func() {
			fs.mu.Lock()
			fs.refilling = nil
			fs.mu.Unlock()
			close(done)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), fairFetchTimeout)
		defer cancel()
		jobs, err := p.fetchTurns(ctx, p.fairTexts(ask.Schema), fs, &ask)
		if err != nil {
			if !gone(err) {
				p.logger().WarnContext(ctx, "tributary: could not start a producer's next jobs ahead of its fetch; its next fetch fetches them itself",
					slog.String("queue", ask.Queue), slog.String("err", err.Error()))
			}
			return
		}
		p.keepReserve(fs, jobs)
	}()
}

// gone reports whether err says that the client's pool is closed (the
// application stopped using the database) or that the queue's tables are
// gone: nothing a reserve's put-back or refill should try again or report.
func gone(err error) bool {
	var pgErr *pgconn.PgError
	return errors.Is(err, riverdriver.ErrClosedPool) || errors.Is(err, puddle.ErrClosedPool) ||
		(errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000")) // undefined_table, invalid_schema_name
}

// awaitRefill waits for the producer's refill in flight, if any, so that
// its jobs are in the reserve and the producer's fetches do not overlap.
func (fs *fairState) awaitRefill(ctx context.Context) error {
	fs.mu.Lock()
	done := fs.refilling
	fs.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ProducerShutdown puts the stopping producer's reserve back, once its
// refill in flight, if any, ended.
func (p *pilot) ProducerShutdown(ctx context.Context, exec riverdriver.Executor, params *riverpilot.ProducerShutdownParams) error {
	p.producersMu.Lock()
	fs := p.producers[params.ProducerID]
	delete(p.producers, params.ProducerID)
	p.producersMu.Unlock()
	if fs != nil {
		fs.mu.Lock()
		fs.stopped = true
		fs.mu.Unlock()
		// A refill ends within fairFetchTimeout; its jobs are put back
		// with the rest.
		_ = fs.awaitRefill(context.WithoutCancel(ctx))
		p.putBackReserve(ctx, fs, 0, 0)
	}
	return p.StandardPilot.ProducerShutdown(ctx, exec, params)
}

// ReservedJobs returns the ids of the jobs in the reserves of the
// client's producers: running and this client's, not yet worked. The
// orphan rescue leaves them alone, as it does the jobs being worked.
func (d *Driver) ReservedJobs() []int64 {
	p := d.pilot
	p.producersMu.Lock()
	states := make([]*fairState, 0, len(p.producers))
	for _, fs := range p.producers {
		states = append(states, fs)
	}
	p.producersMu.Unlock()
	var ids []int64
	for _, fs := range states {
		fs.mu.Lock()
		for _, r := range fs.reserve {
			ids = append(ids, r.job.ID)
		}
		fs.mu.Unlock()
	}
	return ids
}

// SetLogger gives the driver the client's logger, for what its pilot
// cannot return as an error (a reserve that could not be put back).
func (d *Driver) SetLogger(logger *slog.Logger) { d.pilot.log = logger }

func (p *pilot) logger() *slog.Logger {
	if p.log == nil {
		return slog.Default()
	}
	return p.log
}

// putBackSQL makes jobs $1 of a producer's reserve available again as
// they were before the fetch that started them: attempted_at $2, one
// attempt less, and client $3 dropped from the end of attempted_by (NULL
// when it was the only entry, as River leaves a job never attempted). A
// job no longer running as $3's (rescued meanwhile) is left as it is.
const putBackSQL = `UPDATE {s}river_job j
SET state = 'available',
    attempt = greatest(j.attempt - 1, 0),
    attempted_at = r.prior,
    attempted_by = CASE WHEN cardinality(j.attempted_by) > 1 THEN j.attempted_by[1:cardinality(j.attempted_by) - 1] END
FROM unnest($1::bigint[], $2::timestamptz[]) AS r(id, prior)
WHERE j.id = r.id AND j.state = 'running' AND j.attempted_by[cardinality(j.attempted_by)] = $3`
