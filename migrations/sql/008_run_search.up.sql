-- Indexes for the dashboard's run search and overview (issue 12).
--
-- Creating them reads the whole workflow_runs table under a lock that
-- blocks writes to it: on a large table this migration takes a while.

-- Runs by metadata, for a key=value search (ListParams.Metadata: jsonb
-- containment). Runs without metadata, most runs not started by a
-- schedule, are left out, so that starting them costs nothing more.
CREATE INDEX workflow_runs_metadata ON /* TEMPLATE: schema */workflow_runs USING gin (metadata jsonb_path_ops)
    WHERE metadata <> '{}';

-- Failed runs by when they failed, for the overview's recent failures
-- (ListFailures, CountRuns): a few rows, whatever the table's size.
CREATE INDEX workflow_runs_failed ON /* TEMPLATE: schema */workflow_runs (finished_at)
    WHERE status = 'failed';
