package wfruntime

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// Pending holds the runs whose attempts have ended and whose completion is
// not known to be durable, by River job id. An entry goes when its job's
// fate is durably committed: by the engine's batch when it commits
// synchronously or finds the job no longer running, by the pilot always.
// One whose job River's completer gave up on (a non-retryable error) stays
// until Stop, bounded by Limit, and the job, still running, is rescued by
// River.
type Pending struct {
	// Limit bounds the runs whose attempts have ended but whose completion
	// has not committed yet (with AsyncCompletion: is not durable yet).
	// When it is reached, a worker waits for its own completion, which
	// slows fetching down to what the database commits. Tests lower it.
	Limit int

	mu sync.Mutex
	m  map[int64]*pendingCompletion

	// settled are the jobs the engine's batch completed durably, as River's
	// update would return them, until River's completer comes for them
	// (Completer.TakeCompleted): one per job River's executor finished and
	// has yet to hand its completer, which River bounds by its backlog.
	settled map[int64]*rivertype.JobRow
}

// pendingCompletion is a run pending completion.
type pendingCompletion struct {
	req Completion

	// flushed is closed once the engine's batch has tried the completion
	// (committed it, found its job no longer running, or failed), for
	// River's completer to wait on (Completer.TakeCompleted).
	flushed chan struct{}
	tried   bool

	// committed says the engine's batch committed the completion
	// asynchronously: visible, perhaps not durable yet.
	committed bool

	// lsn is the server's WAL insert position read after that commit, past
	// its commit record: the completion is on disk once the WAL is flushed
	// that far. Zero when unknown.
	lsn int64
}

// Add records req unless Limit completions are pending already.
func (p *Pending) Add(req Completion) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m) >= p.Limit {
		return false
	}
	if p.m == nil {
		p.m = make(map[int64]*pendingCompletion)
	}
	p.m[req.JobID] = &pendingCompletion{req: req, flushed: make(chan struct{})}
	return true
}

// markTried records that the engine's batch has tried the completion,
// and lets whoever waits on it go (once); p.mu is held.
func (pc *pendingCompletion) markTried() {
	if !pc.tried {
		pc.tried = true
		close(pc.flushed)
	}
}

// tried records that the engine's batch has tried reqs, whatever came of
// it (see pendingCompletion.flushed).
func (p *Pending) tried(reqs []Completion) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, req := range reqs {
		if pc, ok := p.m[req.JobID]; ok {
			pc.markTried()
		}
	}
}

// awaitTried waits until the engine's batch has tried those of jobIDs
// still pending, for at most within, or until ctx is done.
func (p *Pending) awaitTried(ctx context.Context, jobIDs []int64, within time.Duration) {
	p.mu.Lock()
	var waits []<-chan struct{}
	for _, id := range jobIDs {
		if pc, ok := p.m[id]; ok && !pc.tried {
			waits = append(waits, pc.flushed)
		}
	}
	p.mu.Unlock()
	if len(waits) == 0 {
		return
	}
	timer := time.NewTimer(within)
	defer timer.Stop()
	for _, ch := range waits {
		select {
		case <-ch:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// holdAll reports whether every one of reqs is pending.
func (p *Pending) holdAll(reqs []Completion) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, req := range reqs {
		if _, ok := p.m[req.JobID]; !ok {
			return false
		}
	}
	return true
}

// JobIDs are the jobs of the pending completions.
func (p *Pending) JobIDs() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.AppendSeq(make([]int64, 0, len(p.m)), maps.Keys(p.m))
}

// of returns the pending completions of jobIDs, jobs River is about to mark
// completed.
func (p *Pending) of(jobIDs []int64) []Completion {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m) == 0 {
		return nil
	}
	var reqs []Completion
	for _, id := range jobIDs {
		if pc, ok := p.m[id]; ok {
			reqs = append(reqs, pc.req)
		}
	}
	return reqs
}

// committed records that the engine's batch committed reqs asynchronously,
// and the WAL position past that commit (0: unknown).
func (p *Pending) committed(reqs []Completion, lsn int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, req := range reqs {
		if pc, ok := p.m[req.JobID]; ok {
			pc.committed, pc.lsn = true, lsn
		}
	}
}

// flushedBy reports whether the completions of reqs that the engine's batch
// committed are on disk once the server's WAL is flushed up to flushed. A
// completion it has no WAL position for is not.
func (p *Pending) flushedBy(reqs []Completion, flushed int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, req := range reqs {
		if pc, ok := p.m[req.JobID]; ok && (pc.lsn == 0 || pc.lsn > flushed) {
			return false
		}
	}
	return true
}

// countCommitted counts the completions of reqs that the engine's batch
// committed.
func (p *Pending) countCommitted(reqs []Completion) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, req := range reqs {
		if pc, ok := p.m[req.JobID]; ok && pc.committed {
			n++
		}
	}
	return n
}

// notCommitted returns those of reqs that the engine's batch did not
// commit.
func (p *Pending) notCommitted(reqs []Completion) []Completion {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Completion, 0, len(reqs))
	for _, req := range reqs {
		if pc, ok := p.m[req.JobID]; !ok || !pc.committed {
			out = append(out, req)
		}
	}
	return out
}

// done forgets completions whose job's fate is durably committed: completed
// with its run, or found no longer running.
func (p *Pending) done(reqs []Completion) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, req := range reqs {
		p.forget(req.JobID)
	}
}

// forget drops the completion of job id, and lets whoever waits on it go;
// p.mu is held.
func (p *Pending) forget(id int64) {
	if pc, ok := p.m[id]; ok {
		pc.markTried()
	}
	delete(p.m, id)
}

// settle forgets reqs, whose job's fate is durably committed, as done
// does, and keeps those of them completed at the times of completed, with
// their job, for River's completer (Completer.TakeCompleted).
func (p *Pending) settle(reqs []Completion, completed map[int64]time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, req := range reqs {
		p.forget(req.JobID)
		at, ok := completed[req.JobID]
		if !ok || req.Job == nil {
			continue
		}
		if p.settled == nil {
			p.settled = make(map[int64]*rivertype.JobRow)
		}
		row := *req.Job
		at = at.UTC() // as River's driver reads its times
		row.State, row.FinalizedAt = rivertype.JobStateCompleted, &at
		p.settled[req.JobID] = &row
	}
}

// take returns those of jobIDs that settle kept, and forgets them.
func (p *Pending) take(jobIDs []int64) map[int64]*rivertype.JobRow {
	p.mu.Lock()
	defer p.mu.Unlock()
	var rows map[int64]*rivertype.JobRow
	for _, id := range jobIDs {
		if row, ok := p.settled[id]; ok {
			if rows == nil {
				rows = make(map[int64]*rivertype.JobRow)
			}
			rows[id] = row
			delete(p.settled, id)
		}
	}
	return rows
}

// Len is how many completions are pending.
func (p *Pending) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

// Clear forgets every pending completion: the client is stopping, and the
// jobs of those still pending stay running until River rescues them.
func (p *Pending) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id := range p.m {
		p.forget(id)
	}
	clear(p.settled)
}
