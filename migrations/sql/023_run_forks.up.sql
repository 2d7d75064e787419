-- Forked runs (workflow.Client.Fork): a run started from another's input
-- and the memos of the steps before a chosen one records where it came
-- from. Both are NULL for every other run. No foreign key: a fork outlives
-- its origin (retention may delete the origin first), and a plain column
-- adds nothing to a run's insert. Adding nullable columns rewrites nothing.
ALTER TABLE /* TEMPLATE: schema */workflow_runs
    ADD COLUMN forked_from uuid,
    ADD COLUMN forked_from_step text CHECK (forked_from_step IS NULL OR char_length(forked_from_step) BETWEEN 1 AND 200);

-- A run's forks, newest first (ListRuns with ForkedFrom). Only forks are
-- in it; every existing row has a NULL origin, so this builds from nothing.
CREATE INDEX workflow_runs_forked_from ON /* TEMPLATE: schema */workflow_runs (forked_from, id DESC) WHERE forked_from IS NOT NULL;
