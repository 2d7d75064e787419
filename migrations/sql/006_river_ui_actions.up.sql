-- A workflow run's River job cancelled, discarded or deleted outside
-- Tributary (River UI's Cancel and Delete buttons, River's rescuer) reaches
-- its run within moments instead of at the next repair pass: these
-- triggers announce the run's id to the working clients of the schema,
-- which repair that run at once (workflow.RepairRuns). They only notify,
-- after the change, and only for Tributary's job kinds; Tributary's own
-- cancellations and failures (which change the run in the same
-- transaction) are announced too, and the repair finds nothing to do.
-- The channel is the working clients' wake-up channel (the engine's
-- wakeChannelSQL): 'tributary_wake_' and a hash of the schema.
CREATE FUNCTION /* TEMPLATE: schema */tributary_run_job_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    job record;
BEGIN
    IF TG_OP = 'DELETE' THEN
        job := OLD;
    ELSE
        job := NEW;
    END IF;
    PERFORM pg_notify('tributary_wake_' || left(md5(TG_TABLE_SCHEMA), 16), 'repair ' || (job.args->>'run_id'));
    RETURN NULL;
END
$$;

CREATE TRIGGER river_job_tributary_run_ended
    AFTER UPDATE OF state ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (NEW.state IN ('cancelled', 'discarded') AND OLD.state IS DISTINCT FROM NEW.state
        AND NEW.kind LIKE 'workflow:%')
    EXECUTE FUNCTION /* TEMPLATE: schema */tributary_run_job_changed();

-- River's job cleaner deletes finished jobs (their runs are finished too):
-- only the deletion of a job that could still run is announced.
CREATE TRIGGER river_job_tributary_run_deleted
    AFTER DELETE ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (OLD.state NOT IN ('completed', 'cancelled', 'discarded') AND OLD.kind LIKE 'workflow:%')
    EXECUTE FUNCTION /* TEMPLATE: schema */tributary_run_job_changed();
