-- The status trigger's function as 026 made it.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */tributary_schedule_runs_finished() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ids uuid[];       -- the schedules of runs whose status became finished, in id order
    statuses text[];  -- each one's latest finished run's status
    failures bigint[]; -- and how many of its runs failed
    notified bigint;
BEGIN
    IF NOT EXISTS (SELECT FROM new_runs n WHERE n.schedule_id IS NOT NULL AND n.status IN ('completed', 'failed', 'cancelled')) THEN
        RETURN NULL;
    END IF;
    EXECUTE $q$
        SELECT array_agg(f.schedule_id ORDER BY f.schedule_id), array_agg(f.status ORDER BY f.schedule_id),
            array_agg(f.failed ORDER BY f.schedule_id)
        FROM (
            SELECT n.schedule_id,
                (array_agg(n.status::text ORDER BY n.finished_at DESC NULLS LAST, n.id DESC))[1] AS status,
                count(*) FILTER (WHERE n.status = 'failed') AS failed
            FROM new_runs n JOIN old_runs o ON o.id = n.id
            WHERE n.schedule_id IS NOT NULL AND n.status IS DISTINCT FROM o.status
                AND n.status IN ('completed', 'failed', 'cancelled')
            GROUP BY n.schedule_id
        ) f $q$
    INTO ids, statuses, failures;
    IF ids IS NULL THEN
        RETURN NULL;
    END IF;

    -- In id order, so that statements finishing runs of the same
    -- schedules never deadlock on them.
    PERFORM FROM /* TEMPLATE: schema */schedules s
    WHERE s.id = ANY(ids)
    ORDER BY s.id
    FOR NO KEY UPDATE;

    UPDATE /* TEMPLATE: schema */schedules s
    SET last_run_status = f.status, failure_count = s.failure_count + f.failed, updated_at = now()
    FROM unnest(ids, statuses, failures) AS f(schedule_id, status, failed)
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
            WHERE q.schedule_id = ANY(ids) AND q.status = 'pending' AND q.metadata ? 'schedule_queued'
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
