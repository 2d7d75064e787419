package workflow

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// memoWriter stores step memos. Memos from concurrent runs that are ready at
// the same moment share one INSERT and one commit, the way River's completer
// batches job completions: under load a commit costs one fsync for many
// steps. Each caller still waits for its own memo's commit before its run
// moves on (MEMO_BEFORE_PROGRESS). It never delays a lone write to build a
// batch: a batch is whatever queued up while the previous one committed.
type memoWriter struct {
	logger *slog.Logger
	pool   *pgxpool.Pool
	q      *queries
	reqs   chan *memoReq

	mu      sync.RWMutex
	running bool
	stopCh  chan struct{}
	wg      sync.WaitGroup
}

type memoReq struct {
	done      chan error
	memo      *memo
	runID     uuid.UUID
	startedAt time.Time
	at        time.Time
}

const (
	memoBatchMax     = 500
	memoWriterFlows  = 2 // batches in flight at once
	memoWriteTimeout = 30 * time.Second
)

func newMemoWriter(pool *pgxpool.Pool, q *queries, logger *slog.Logger) *memoWriter {
	return &memoWriter{logger: logger, pool: pool, q: q, reqs: make(chan *memoReq, memoBatchMax)}
}

func (mw *memoWriter) start() {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if mw.running {
		return
	}
	mw.running = true
	mw.stopCh = make(chan struct{})
	for range memoWriterFlows {
		mw.wg.Add(1)
		go mw.loop()
	}
}

func (mw *memoWriter) stop() {
	mw.mu.Lock()
	if !mw.running {
		mw.mu.Unlock()
		return
	}
	mw.running = false
	close(mw.stopCh)
	mw.mu.Unlock()
	mw.wg.Wait()
}

// write stores m for runID and returns once it is committed.
func (mw *memoWriter) write(ctx context.Context, runID uuid.UUID, m *memo, startedAt time.Time) error {
	req := &memoReq{done: make(chan error, 1), memo: m, runID: runID, startedAt: startedAt, at: time.Now().UTC()}
	mw.mu.RLock()
	if !mw.running {
		mw.mu.RUnlock()
		return mw.flush([]*memoReq{req})
	}
	select {
	case mw.reqs <- req:
		mw.mu.RUnlock()
	case <-ctx.Done():
		mw.mu.RUnlock()
		return ctx.Err()
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (mw *memoWriter) loop() {
	defer mw.wg.Done()
	batch := make([]*memoReq, 0, memoBatchMax)
	for {
		select {
		case req := <-mw.reqs:
			batch = append(batch[:0], req)
		drain:
			for len(batch) < memoBatchMax {
				select {
				case more := <-mw.reqs:
					batch = append(batch, more)
				default:
					break drain
				}
			}
			err := mw.flush(batch)
			for _, r := range batch {
				r.done <- err
			}
		case <-mw.stopCh:
			for {
				select {
				case req := <-mw.reqs:
					req.done <- mw.flush([]*memoReq{req})
				default:
					return
				}
			}
		}
	}
}

func (mw *memoWriter) flush(batch []*memoReq) error {
	n := len(batch)
	var (
		runIDs     = make([]uuid.UUID, 0, n)
		names      = make([]string, 0, n)
		kinds      = make([]string, 0, n)
		statuses   = make([]string, 0, n)
		types      = make([]string, 0, n)
		outputs    = make([]string, 0, n)
		startedAts = make([]time.Time, 0, n)
		at         = make([]time.Time, 0, n)
		seen       = make(map[[2]string]bool, n)
	)
	for _, r := range batch {
		// Two attempts of one run racing on one step (a rescued job) may meet
		// in a batch; Postgres refuses to upsert a row twice in a statement.
		key := [2]string{r.runID.String(), r.memo.Name}
		if seen[key] {
			continue
		}
		seen[key] = true
		runIDs = append(runIDs, r.runID)
		names = append(names, r.memo.Name)
		kinds = append(kinds, string(r.memo.Kind))
		statuses = append(statuses, string(r.memo.Status))
		types = append(types, r.memo.ResultType)
		output := string(r.memo.Output)
		if output == "" {
			output = "null"
		}
		outputs = append(outputs, output)
		startedAts = append(startedAts, r.startedAt)
		at = append(at, r.at)
	}
	ctx, cancel := context.WithTimeout(context.Background(), memoWriteTimeout)
	defer cancel()
	_, err := mw.pool.Exec(ctx, mw.q.memoUpsert, runIDs, names, kinds, statuses, types, outputs, startedAts, at)
	if err != nil {
		mw.logger.ErrorContext(ctx, "tributary: Failed to store step memos", slog.Int("count", len(runIDs)), slog.String("err", err.Error()))
	}
	return err
}
