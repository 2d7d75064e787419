package wfruntime

import (
	"context"
	"sync"
	"time"
)

// Batcher groups requests from concurrent runs into one database round trip
// and one commit, the way River's completer batches job completions. A
// request waits for its own batch to commit, so batching never weakens a
// guarantee. A batch is whatever queued up while the previous one was being
// written, or, with a spacing, since the previous one started, whichever is
// longer. Under load that amortizes commits (and their fsync) and the
// server's per-statement work over many runs; when idle, a lone request
// goes straight through, spacing or not.
type Batcher[Req, Res any] struct {
	// flush writes a batch. It sets each item's Res or Err; a returned error
	// is given to every item it did not set an error for.
	flush   func(ctx context.Context, items []*BatchItem[Req, Res]) error
	flows   int           // batches in flight at once
	max     int           // largest batch
	spacing time.Duration // least time from the start of one batch to the next, per flow

	reqs chan *BatchItem[Req, Res]

	mu      sync.RWMutex
	running bool
	stopCh  chan struct{}
	wg      sync.WaitGroup
}

// BatchItem is one request in a batch: a flush sets its Res, or its Err.
type BatchItem[Req, Res any] struct {
	Ctx  context.Context // the requester's, without its cancellation
	Req  Req
	Res  Res
	Err  error
	done chan struct{}
}

// NewBatcher returns a stopped Batcher that writes at most flows batches at
// once, of at most max items, spaced by spacing, by calling flush. A
// stopped Batcher writes each request itself, alone.
func NewBatcher[Req, Res any](flows, max int, spacing time.Duration, flush func(ctx context.Context, items []*BatchItem[Req, Res]) error) *Batcher[Req, Res] {
	return &Batcher[Req, Res]{flush: flush, flows: flows, max: max, spacing: spacing, reqs: make(chan *BatchItem[Req, Res], max)}
}

// Start starts the flushing goroutines.
func (b *Batcher[Req, Res]) Start() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running {
		return
	}
	b.running = true
	b.stopCh = make(chan struct{})
	for range b.flows {
		b.wg.Add(1)
		go b.loop()
	}
}

// Stop flushes what is queued and stops the flushing goroutines.
func (b *Batcher[Req, Res]) Stop() {
	b.mu.Lock()
	if !b.running {
		b.mu.Unlock()
		return
	}
	b.running = false
	close(b.stopCh)
	b.mu.Unlock()
	b.wg.Wait()
}

// Do queues req and waits until its batch is written. Once queued, the
// request is written even if ctx ends first.
func (b *Batcher[Req, Res]) Do(ctx context.Context, req Req) (Res, error) {
	item := &BatchItem[Req, Res]{Ctx: context.WithoutCancel(ctx), Req: req, done: make(chan struct{})}
	var zero Res
	if err := b.enqueue(ctx, item); err != nil {
		return zero, err
	}
	select {
	case <-item.done:
		return item.Res, item.Err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// Send queues req without waiting for it to be written; its result is
// dropped, so flush must handle what a failure means for it. It waits only
// while the queue is full. On a stopped batcher it writes req itself.
func (b *Batcher[Req, Res]) Send(req Req) {
	item := &BatchItem[Req, Res]{Ctx: context.Background(), Req: req, done: make(chan struct{})}
	_ = b.enqueue(context.Background(), item) // cannot fail: the context never ends
}

// enqueue hands item to the flushing goroutines, waiting while the queue is
// full; on a stopped batcher it writes item itself. It fails only when ctx
// ends before item is queued.
func (b *Batcher[Req, Res]) enqueue(ctx context.Context, item *BatchItem[Req, Res]) error {
	b.mu.RLock()
	if !b.running {
		b.mu.RUnlock()
		b.run([]*BatchItem[Req, Res]{item})
		return nil
	}
	defer b.mu.RUnlock()
	select {
	case b.reqs <- item:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *Batcher[Req, Res]) loop() {
	defer b.wg.Done()
	batch := make([]*BatchItem[Req, Res], 0, b.max)
	var lastStart time.Time
	for {
		select {
		case item := <-b.reqs:
			if wait := b.spacing - time.Since(lastStart); wait > 0 {
				b.sleep(wait)
			}
			lastStart = time.Now()
			b.run(b.drain(append(batch[:0], item)))
		case <-b.stopCh: // write what is queued, then stop
			for {
				select {
				case item := <-b.reqs:
					b.run(b.drain(append(batch[:0], item)))
				default:
					return
				}
			}
		}
	}
}

// drain adds what is queued to batch, up to the largest batch.
func (b *Batcher[Req, Res]) drain(batch []*BatchItem[Req, Res]) []*BatchItem[Req, Res] {
	for len(batch) < b.max {
		select {
		case item := <-b.reqs:
			batch = append(batch, item)
		default:
			return batch
		}
	}
	return batch
}

// sleep waits for d, or until the batcher stops.
func (b *Batcher[Req, Res]) sleep(d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-b.stopCh:
	}
}

// run flushes items. A batch is written in one transaction, so when it
// fails (a deadlock with another batch, one bad row) nothing of it was
// written, and each item is tried alone so that one item's problem is not
// every item's.
func (b *Batcher[Req, Res]) run(items []*BatchItem[Req, Res]) {
	err := b.flush(context.Background(), items)
	if err != nil && len(items) > 1 {
		for _, item := range items {
			var zero Res
			item.Res, item.Err = zero, nil
			if err := b.flush(context.Background(), []*BatchItem[Req, Res]{item}); err != nil && item.Err == nil {
				item.Err = err
			}
			close(item.done)
		}
		return
	}
	for _, item := range items {
		if item.Err == nil && err != nil {
			item.Err = err
		}
		close(item.done)
	}
}
