ALTER TABLE /* TEMPLATE: schema */workflow_runs DROP CONSTRAINT IF EXISTS workflow_runs_schedule_fk;
DROP TABLE IF EXISTS /* TEMPLATE: schema */schedules;
