package wfruntime

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-go/tributary/internal/engine"
)

// The two batches a running workflow waits for, beside its completion
// (Completer.Flush): the start of an attempt that reads its run and all its
// memos, and the storing of a step's memo. Both work on the engine's rows;
// package workflow decodes the memos it reads into its own types and
// encodes the ones it stores.

// StepBatches are the flushes of a workflow client's begin and memo
// Batchers. Each request still waits for its own commit (Batcher).
type StepBatches struct {
	Queries *engine.Queries
	// WritePool is the pool for batched writes (workflow's batch pool
	// while the client is started).
	WritePool func() engine.Pool
}

// FlushBegins loads the runs that attempts start on, with all their memos,
// in one query, and sets each item's Res to its run's row. A run that is
// not runnable (finished, cancelled) gets nil.
func (s *StepBatches) FlushBegins(ctx context.Context, items []*BatchItem[uuid.UUID, *engine.AttemptRun]) error {
	ids := make([][16]byte, 0, len(items)) // binary: see engine.MemoBatch
	for _, item := range items {
		ids = append(ids, item.Req)
	}
	runs, err := s.Queries.BeginAttempts(ctx, s.WritePool(), ids)
	if err != nil {
		return fmt.Errorf("begin attempts: %w", err)
	}
	byID := make(map[uuid.UUID]*engine.AttemptRun, len(runs))
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	for _, item := range items {
		item.Res = byID[item.Req]
	}
	return nil
}

// MemoWrite is one step record to store (FlushMemos).
type MemoWrite struct {
	Row *engine.Memo

	// Fresh says the attempt found no record of this step when it
	// started, so the write is expected to insert (see FlushMemos).
	Fresh bool
}

// MemoRows are the step records writes store.
func MemoRows(writes []MemoWrite) []*engine.Memo {
	if len(writes) == 0 {
		return nil
	}
	rows := make([]*engine.Memo, len(writes))
	for i := range writes {
		rows[i] = writes[i].Row
	}
	return rows
}

// FlushMemos stores the step records of items in one statement and one
// commit; the batch fails whole or commits whole.
func (s *StepBatches) FlushMemos(ctx context.Context, items []*BatchItem[MemoWrite, struct{}]) error {
	var (
		fresh = true
		memos = engine.NewMemoBatch(len(items))
	)
	for _, item := range items {
		if memos.Add(item.Req.Row) {
			fresh = fresh && item.Req.Fresh
		}
	}
	// A batch of first writes is a plain insert: an upsert pays for a
	// speculative insertion (an extra index probe and WAL record per row).
	// Should a step's record exist all the same (another attempt of the run
	// wrote it meanwhile), the insert fails whole and the upsert settles it.
	if fresh {
		err := s.Queries.InsertMemos(ctx, s.WritePool(), &memos)
		if err == nil {
			return nil
		}
		if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != uniqueViolation {
			return fmt.Errorf("store %d step memos: %w", memos.Len(), err)
		}
	}
	if _, err := s.Queries.UpsertMemos(ctx, s.WritePool(), &memos); err != nil {
		return fmt.Errorf("store %d step memos: %w", memos.Len(), err)
	}
	return nil
}

// uniqueViolation is Postgres's SQLSTATE for a duplicate key.
const uniqueViolation = "23505"
