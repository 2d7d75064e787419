-- Set-based firing of schedule slots (issue 11). Slots are no longer one
-- River job each: one job per due instant fires every schedule due by then,
-- in batches, and schedules.next_fire_at is the chain's only state.
--
-- Creating the indexes below reads the whole workflow_runs table under a
-- lock that blocks writes to it: on a large table this migration takes a
-- while.

-- The "latest" catch-up policy marks the slot it jumped to: that slot runs
-- however late it is found. The mark used to live in the slot's job.
ALTER TABLE /* TEMPLATE: schema */schedules
    ADD COLUMN next_fire_catch_up boolean NOT NULL DEFAULT false;

UPDATE /* TEMPLATE: schema */schedules s
SET next_fire_catch_up = true
FROM /* TEMPLATE: schema */river_job j
WHERE j.kind = 'tributary:schedule_fire'
    AND j.state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
    AND j.args->>'catch_up' = 'true'
    AND j.args->>'schedule_id' = s.id::text
    AND (j.args->>'fire_at')::timestamptz = s.next_fire_at;

-- Due schedules in the order they fire, for the firing pass's claim.
DROP INDEX /* TEMPLATE: schema */schedules_next_fire;
CREATE INDEX schedules_next_fire ON /* TEMPLATE: schema */schedules (next_fire_at, id)
    WHERE NOT paused AND next_fire_at IS NOT NULL;

-- A schedule's run ledger, newest first (History): its cost follows the
-- schedule's runs, not the table's.
CREATE INDEX workflow_runs_schedule_history ON /* TEMPLATE: schema */workflow_runs (schedule_id, id DESC)
    WHERE schedule_id IS NOT NULL;

-- A schedule's unfinished runs, for the overlap policies: a handful of rows
-- per schedule however long its history.
CREATE INDEX workflow_runs_schedule_unfinished ON /* TEMPLATE: schema */workflow_runs (schedule_id)
    WHERE schedule_id IS NOT NULL AND status IN ('pending', 'running', 'sleeping', 'waiting');
