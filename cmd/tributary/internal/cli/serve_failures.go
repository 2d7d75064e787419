package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/workflow"
)

// failureWatchInterval is how often serve looks for runs that failed.
const failureWatchInterval = 5 * time.Second

// failureWatchOverlap is how far back each look reaches before the
// previous one's latest failure: a failure's finish time is its
// transaction's start, which may commit a moment after a later one.
const failureWatchOverlap = 5 * time.Second

// watchFailures logs, at warn, each run that fails while serve runs,
// wherever it ran: serve works no workflow code, and the services that do
// log only their own failures, so serve's log is the one that shows them
// all. Every interval it reads the failures since its previous look (an
// index of failed runs by finish time serves the query, so its cost
// follows the failures, not the runs), at most 1000 a look; a burst
// beyond that is summed up in one line. It returns when ctx ends.
func watchFailures(ctx context.Context, logger *slog.Logger, wf *workflow.Client, interval time.Duration) {
	if !logger.Enabled(ctx, slog.LevelWarn) {
		return
	}
	since := time.Now()
	seen := map[uuid.UUID]time.Time{} // logged failures, by finish time, within the overlap
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		runs, err := wf.ListFailures(ctx, since.Add(-failureWatchOverlap), 1000)
		if err != nil {
			if ctx.Err() == nil {
				logger.WarnContext(ctx, "tributary: Could not read the runs that failed; trying again", slog.String("err", err.Error()))
			}
			continue
		}
		if len(runs) == 1000 {
			logger.WarnContext(ctx, "tributary: At least 1000 runs failed since the last look; logging the latest 1000", slog.Time("since", since))
		}
		for i := len(runs) - 1; i >= 0; i-- { // oldest first
			run := runs[i]
			if _, ok := seen[run.ID]; ok || run.FinishedAt == nil {
				continue
			}
			seen[run.ID] = *run.FinishedAt
			if run.FinishedAt.After(since) {
				since = *run.FinishedAt
			}
			attrs := []any{slog.String("run_id", run.ID.String()), slog.String("workflow", run.Type)}
			if run.Error != nil {
				attrs = append(attrs, slog.String("kind", run.Error.Kind), slog.String("step", run.Error.Step), slog.String("err", run.Error.Message))
			}
			logger.WarnContext(ctx, "tributary: Run failed", attrs...)
		}
		for id, at := range seen {
			if at.Before(since.Add(-2 * failureWatchOverlap)) {
				delete(seen, id)
			}
		}
	}
}
