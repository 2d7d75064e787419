-- Back to one fire job per slot. The jobs of the slots now pending are not
-- re-created: after migrating down, run the reconciler (a working client
-- does at start-up) to re-seed every live schedule's chain.
DROP TRIGGER workflow_runs_schedule_finished ON /* TEMPLATE: schema */workflow_runs;
DROP FUNCTION /* TEMPLATE: schema */tributary_schedule_runs_finished();
CREATE TRIGGER workflow_runs_schedule_finished
    AFTER UPDATE OF status ON /* TEMPLATE: schema */workflow_runs
    FOR EACH ROW
    WHEN (NEW.schedule_id IS NOT NULL AND NEW.status IS DISTINCT FROM OLD.status
        AND NEW.status IN ('completed', 'failed', 'cancelled'))
    EXECUTE FUNCTION /* TEMPLATE: schema */tributary_schedule_run_finished();

DROP INDEX /* TEMPLATE: schema */workflow_runs_schedule_unfinished;
DROP INDEX /* TEMPLATE: schema */workflow_runs_schedule_history;

DROP INDEX /* TEMPLATE: schema */schedules_next_fire;
CREATE INDEX schedules_next_fire ON /* TEMPLATE: schema */schedules (next_fire_at)
    WHERE NOT paused AND next_fire_at IS NOT NULL;

ALTER TABLE /* TEMPLATE: schema */schedules DROP COLUMN next_fire_catch_up;
