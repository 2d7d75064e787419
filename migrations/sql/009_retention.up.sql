-- Run retention (workflow.Config.CompletedRunRetention and
-- FailedRunRetention): finished runs are deleted in batches, their steps
-- and signals with them (ON DELETE CASCADE). The cascade looks signals up
-- by run; the only index on run_id covered pending signals, so each
-- deleted run would have scanned the whole signals table.
CREATE INDEX workflow_signals_run ON /* TEMPLATE: schema */workflow_signals (run_id);
