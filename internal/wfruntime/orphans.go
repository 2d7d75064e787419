package wfruntime

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// After the server a working client talks to changes (pg_postmaster_start_time
// differs from the last heartbeat's: a restart, or a standby promoted), the
// database may have lost what it had acknowledged: with asynchronous
// replication, a promoted standby lacks the last commits before the
// failover, among them completions of jobs this client worked. Those jobs
// stay running, under a live client, and nothing would rescue them before
// River's stuck-job rescuer, an hour later. So, for orphanWindow after the
// change, each heartbeat rescues the client's own running Tributary jobs
// that it fetched before the change and no longer works (RescueOrphansTx):
// neither held (HeldJobs) nor pending completion (Pending). It waits
// orphanSettle first: completions in flight at the change commit, or fail,
// meanwhile.
const (
	orphanSettle = 2 * time.Second
	orphanWindow = 30 * time.Second
)

// HeldJobs are the Tributary jobs a client is working now, by id: the
// orphan rescue never takes one of them. Its Middleware, on the client's
// River client, keeps it. The zero value is empty and ready to use.
type HeldJobs struct {
	mu  sync.Mutex
	ids map[int64]struct{}
}

func (h *HeldJobs) add(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ids == nil {
		h.ids = map[int64]struct{}{}
	}
	h.ids[id] = struct{}{}
}

func (h *HeldJobs) remove(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.ids, id)
}

func (h *HeldJobs) list() []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.AppendSeq(make([]int64, 0, len(h.ids)), maps.Keys(h.ids))
}

// Middleware is the River middleware that records in h the Tributary jobs
// being worked, from before their worker starts until it returns; the
// application's own jobs pass through untouched.
func (h *HeldJobs) Middleware() rivertype.Middleware { return &holdMiddleware{held: h} }

// holdMiddleware records in held the Tributary jobs being worked.
type holdMiddleware struct {
	river.MiddlewareDefaults
	held *HeldJobs
}

func (m *holdMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if !isTributaryKind(job.Kind) {
		return doInner(ctx)
	}
	m.held.add(job.ID)
	defer m.held.remove(job.ID)
	return doInner(ctx)
}

// isTributaryKind reports whether kind matches one of tributaryKinds (LIKE
// patterns of the form "prefix%").
func isTributaryKind(kind string) bool {
	return slices.ContainsFunc(tributaryKinds, func(pattern string) bool {
		return strings.HasPrefix(kind, strings.TrimSuffix(pattern, "%"))
	})
}

// serverWatch follows the server a client's heartbeats reach.
type serverWatch struct {
	start     time.Time // the server's start time at the last beat
	since     time.Time // the database's clock at the first beat on this server
	changedAt time.Time // the database's clock at the first beat on a new server; zero for none
}

// beat records a heartbeat's reading and reports whether the server
// changed since the last one.
func (w *serverWatch) beat(serverStart, at time.Time) bool {
	changed := !w.start.IsZero() && !serverStart.Equal(w.start)
	if !serverStart.Equal(w.start) {
		w.since = at
	}
	w.start = serverStart
	if changed {
		w.changedAt = at
	}
	return changed
}

// orphansDue reports whether a heartbeat at at (the database's clock)
// should rescue orphans: within orphanWindow of a server change, once
// orphanSettle has passed.
func (w *serverWatch) orphansDue(at time.Time) bool {
	if w.changedAt.IsZero() {
		return false
	}
	since := at.Sub(w.changedAt)
	return since >= orphanSettle && since <= orphanWindow
}

// rescueOrphans rescues this client's orphaned jobs (see serverWatch),
// fetched before the server changed at changedAt.
func (r *Registry) rescueOrphans(ctx context.Context, changedAt time.Time) error {
	c := &r.c
	keep := append(c.Held.list(), c.Pending.JobIDs()...)
	if c.Reserved != nil {
		keep = append(keep, c.Reserved()...)
	}
	return pgx.BeginFunc(ctx, c.Pool, func(tx pgx.Tx) error {
		rescued, err := c.Jobs.RescueOrphansTx(ctx, tx, c.ClientID, tributaryKinds, keep, changedAt)
		if err != nil {
			return err
		}
		if n := rescued.ByClient[c.ClientID]; n > 0 {
			c.Logger.WarnContext(ctx, "tributary: The database lost the outcome of jobs this client worked before the server changed (a failover or a restart); made them available again to replay",
				slog.Int("rescued_jobs", n), slog.Time("server_changed_at", changedAt))
		}
		return nil
	})
}
