package schedule

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/wfruntime"
)

// fireAlone fires schedule id's due slot in a transaction of its own,
// locking the schedule the way a single start does (lockToStart: under
// overlap replace, its unfinished runs first). If that fails, it records the
// slot as skipped with the error and moves the chain on; if even that
// fails, the pass leaves the schedule for the next pass.
func (c *Client) fireAlone(ctx context.Context, p *pass, id uuid.UUID, now time.Time) *passStats {
	stats := &passStats{}
	var deferred []uuid.UUID
	err := pgx.BeginFunc(ctx, c.firePool(), func(tx pgx.Tx) error {
		s, err := c.lockToStart(ctx, tx, id, "")
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if s.Paused || s.NextFireAt == nil || s.NextFireAt.After(later(now, p.bound)) {
			return nil // fired, paused or re-timed meanwhile
		}
		deferred, err = c.fireBatchTx(ctx, tx, []*Schedule{s}, p.foundAt, now, stats)
		return err
	})
	if err == nil && len(deferred) == 0 {
		stats.Batches = 1
		c.logSlots(ctx, stats.logs)
		return stats
	}
	if err == nil {
		err = errors.New("its unfinished runs stayed locked by another transaction")
	}
	c.logger.ErrorContext(ctx, "tributary: Cannot fire schedule slot; recording it as skipped",
		slog.String("schedule_id", id.String()), slog.String("err", err.Error()))
	if err := c.skipPoisonTx(ctx, id, now, err); err != nil {
		c.logger.ErrorContext(ctx, "tributary: Cannot record the failed slot either; the next pass will try again",
			slog.String("schedule_id", id.String()), slog.String("err", err.Error()))
		p.excluded = append(p.excluded, id)
		stats.Failed = 1
		return stats
	}
	stats.skip(SkipReasonCannotFire, 1)
	return stats
}

// skipPoisonTx records schedule id's due slot as skipped because firing it
// failed with cause, and advances the chain to the slot after now.
func (c *Client) skipPoisonTx(ctx context.Context, id uuid.UUID, now time.Time, cause error) error {
	return pgx.BeginFunc(ctx, c.firePool(), func(tx pgx.Tx) error {
		s, err := scheduleOf(c.q.ScheduleByIDForUpdateTx(ctx, tx, id))
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil || s.Paused || s.NextFireAt == nil {
			return err
		}
		fireAt := *s.NextFireAt
		reason := SkipReasonCannotFire + ": " + cause.Error()
		skipped := &wfruntime.ScheduledStart{FireAt: fireAt, ScheduleID: id, Skip: reason, Type: s.Workflow, Input: s.Input, Tenant: s.RunTenant()}
		if _, err := c.rt.StartScheduledTx(ctx, tx, skipped); err != nil {
			return err
		}
		spec, specErr := c.spec(s)
		var next *time.Time
		if specErr == nil {
			next = nextSlot(spec, s, later(now, fireAt))
		}
		if err := c.q.AdvanceSchedulesTx(ctx, tx, &engine.AdvanceParams{
			IDs: [][16]byte{id}, Next: []*time.Time{next}, Fired: []time.Time{fireAt}, Ran: []int64{0},
			CatchUp: []bool{false}, Pause: []string{""}, Now: c.sqlNow(),
		}); err != nil {
			return err
		}
		if next != nil {
			return c.seedTx(ctx, tx, *next)
		}
		return nil
	})
}
