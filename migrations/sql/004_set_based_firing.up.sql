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

-- A schedule's figures (last run status, failure count) and the release of
-- its queued run follow its runs once per statement, not once per run: the
-- per-row trigger of 002 ran an UPDATE of the schedule for every run a
-- batch finished, about 50 µs each (a 10,000-slot burst spent half a
-- second of the server's time there). The statement trigger sees every
-- UPDATE of workflow_runs through its transition tables, and acts on the
-- rows whose status became finished. It locks their schedules in id order
-- first, so that statements finishing runs of the same schedules never
-- deadlock on them. A skipped slot's run is still counted by the row
-- trigger on INSERT (its WHEN clause costs an insert of a run that is not
-- skipped nothing).
DROP TRIGGER workflow_runs_schedule_finished ON /* TEMPLATE: schema */workflow_runs;

CREATE FUNCTION /* TEMPLATE: schema */tributary_schedule_runs_finished() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    notified bigint;
BEGIN
    IF NOT EXISTS (
        SELECT FROM new_runs n JOIN old_runs o ON o.id = n.id
        WHERE n.schedule_id IS NOT NULL AND n.status IS DISTINCT FROM o.status
            AND n.status IN ('completed', 'failed', 'cancelled')
    ) THEN
        RETURN NULL;
    END IF;

    PERFORM FROM /* TEMPLATE: schema */schedules s
    WHERE s.id IN (
        SELECT n.schedule_id FROM new_runs n JOIN old_runs o ON o.id = n.id
        WHERE n.schedule_id IS NOT NULL AND n.status IS DISTINCT FROM o.status
            AND n.status IN ('completed', 'failed', 'cancelled')
    )
    ORDER BY s.id
    FOR NO KEY UPDATE;

    UPDATE /* TEMPLATE: schema */schedules s
    SET last_run_status = f.status, failure_count = s.failure_count + f.failed, updated_at = now()
    FROM (
        SELECT n.schedule_id,
            (array_agg(n.status ORDER BY n.finished_at DESC NULLS LAST, n.id DESC))[1] AS status,
            count(*) FILTER (WHERE n.status = 'failed') AS failed
        FROM new_runs n JOIN old_runs o ON o.id = n.id
        WHERE n.schedule_id IS NOT NULL AND n.status IS DISTINCT FROM o.status
            AND n.status IN ('completed', 'failed', 'cancelled')
        GROUP BY n.schedule_id
    ) f
    WHERE s.id = f.schedule_id;

    -- Overlap policies "queue" and "buffer" (a backfill's): a finished run
    -- releases its schedule's oldest queued run, held far in the future.
    -- Its job is made available at once, as River's scheduler would, and
    -- River's producers are told on its insert channel, so that a backfill
    -- of many slots runs them back to back, not one per scheduler pass.
    WITH queued AS (
        UPDATE /* TEMPLATE: schema */workflow_runs r
        SET metadata = r.metadata - 'schedule_queued'
        FROM (
            SELECT DISTINCT ON (q.schedule_id) q.id
            FROM /* TEMPLATE: schema */workflow_runs q
            WHERE q.schedule_id IN (
                SELECT n.schedule_id FROM new_runs n JOIN old_runs o ON o.id = n.id
                WHERE n.schedule_id IS NOT NULL AND n.status IS DISTINCT FROM o.status
                    AND n.status IN ('completed', 'failed', 'cancelled')
            ) AND q.status = 'pending' AND q.metadata ? 'schedule_queued'
            ORDER BY q.schedule_id, q.fire_at
        ) pick
        WHERE r.id = pick.id
        RETURNING r.job_id
    ), released AS (
        UPDATE /* TEMPLATE: schema */river_job SET state = 'available', scheduled_at = now()
        WHERE id IN (SELECT job_id FROM queued) AND state = 'scheduled'
        RETURNING queue
    )
    SELECT count(*) INTO notified FROM (
        SELECT pg_notify(TG_TABLE_SCHEMA || '.river_insert', json_build_object('queue', q.queue)::text)
        FROM (SELECT DISTINCT queue FROM released) q
    ) n;
    RETURN NULL;
END;
$$;

CREATE TRIGGER workflow_runs_schedule_finished
    AFTER UPDATE ON /* TEMPLATE: schema */workflow_runs
    REFERENCING OLD TABLE AS old_runs NEW TABLE AS new_runs
    FOR EACH STATEMENT
    EXECUTE FUNCTION /* TEMPLATE: schema */tributary_schedule_runs_finished();
