package engine

import (
	"slices"
	"sync"
	"time"
)

// Tenant limits at the fetch.
//
// A workflow type's tenant limit (workflow.DefineOpts.TenantLimit, given
// by SetTenantLimits, and an operator's limit for one tenant in
// tributary_tenant_limits) is kept by the fair fetch itself: a candidate
// of a limited (kind, tenant) pair is fetched only while the pair has
// fewer jobs running than its limit, counted in the fetch's own statement.
// A run over its limit is not touched: its job stays available, in its
// place in its tenant's line, holds no worker, is not retried, and is
// fetched in its turn once its tenant has a job running less. Nothing is
// written when an attempt begins or ends.
//
// Why it is exact across clients: every fetch that may take a limited
// kind's jobs takes the kind's transaction advisory lock in a statement
// before its fetch, and holds it until it commits, so the fetch's
// snapshot, taken after the lock, counts every job a racing fetch started.
// A job counts while River has it running: an attempt that sleeps, waits
// or ended frees its place when its job leaves the running state, and a
// dead client's jobs free theirs when they are rescued.
//
// What wakes a run over its limit: a fetch that started fewer jobs than it
// was asked for marks its queue, and the end of a limited attempt on this
// client (TenantAttemptEnded) then notifies the queue's producers, on
// every client, to fetch again; River's poll is the backstop.

// TenantLimit is the tenant limit of one job kind: its workflow type, and
// the most jobs of one tenant that run at once unless the tenant has its
// own (tributary_tenant_limits).
type TenantLimit struct {
	Type string
	Max  int
}

// SetTenantLimits gives the driver the tenant limits of job kinds, before
// River's client is built on it.
func (d *Driver) SetTenantLimits(limits map[string]TenantLimit) {
	l := &d.pilot.limits
	for kind, lim := range limits {
		l.kinds = append(l.kinds, kind)
		l.types = append(l.types, lim.Type)
		l.max = append(l.max, int32(lim.Max))
	}
}

// TenantAttemptEnded tells the driver that an attempt of a limited kind
// in queue ended on this client: if a fetch of the queue left work for
// want of a slot, its producers are told to fetch again.
func (d *Driver) TenantAttemptEnded(queue string) {
	p := d.pilot
	if !p.limits.takeShort(queue) {
		return
	}
	p.fairMu.Lock()
	schema := p.fair.schema
	p.fairMu.Unlock()
	p.armFetch(queue, schema, limitFetchWait)
}

// limitFetchWait is how long after a limited attempt ends its queue is
// fetched again: time for the attempt's completion to be written when
// River's completer, not the engine, writes it.
const limitFetchWait = 5 * time.Millisecond

// pilotLimits are the tenant limits of a pilot, as the fetch passes them.
type pilotLimits struct {
	kinds []string
	types []string
	max   []int32

	mu    sync.Mutex
	short map[string]bool // queues whose last fetch started fewer jobs than asked
}

// lockKeys returns the advisory lock keys of the limited kinds among
// fetchable (nil for all), in schema.
func (l *pilotLimits) lockKeys(schema string, fetchable []string) []string {
	keys := make([]string, 0, len(l.kinds))
	for _, kind := range l.kinds {
		if fetchable == nil || slices.Contains(fetchable, kind) {
			keys = append(keys, "tributary_limit/"+schema+"/"+kind)
		}
	}
	return keys
}

func (l *pilotLimits) markShort(queue string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.short == nil {
		l.short = map[string]bool{}
	}
	l.short[queue] = true
}

// takeShort reports whether queue was marked short, and clears the mark.
func (l *pilotLimits) takeShort(queue string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	was := l.short[queue]
	delete(l.short, queue)
	return was
}
