-- Back to one fire job per slot. The jobs of the slots now pending are not
-- re-created: after migrating down, run the reconciler (a working client
-- does at start-up) to re-seed every live schedule's chain.
DROP INDEX /* TEMPLATE: schema */workflow_runs_schedule_unfinished;
DROP INDEX /* TEMPLATE: schema */workflow_runs_schedule_history;

DROP INDEX /* TEMPLATE: schema */schedules_next_fire;
CREATE INDEX schedules_next_fire ON /* TEMPLATE: schema */schedules (next_fire_at)
    WHERE NOT paused AND next_fire_at IS NOT NULL;

ALTER TABLE /* TEMPLATE: schema */schedules DROP COLUMN next_fire_catch_up;
