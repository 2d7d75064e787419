-- The runs that overlap policy "queue" (or a backfill's buffer) holds back,
-- for the schedules' status trigger (tributary_schedule_runs_finished, 004):
-- each statement that finishes scheduled runs looks for the oldest held-back
-- run of their schedules. Without this index that look-up read every pending
-- run of the table through workflow_runs_unfinished, for every completion
-- batch: at 100,000 slots due together, a tenth of the completions' time.
-- Held-back runs are few, so the index is small, and most inserts and
-- updates of runs do not touch it.
CREATE INDEX workflow_runs_schedule_queued ON /* TEMPLATE: schema */workflow_runs (schedule_id, fire_at)
    WHERE status = 'pending' AND metadata ? 'schedule_queued';
