DROP TRIGGER IF EXISTS workflow_runs_schedule_skipped ON /* TEMPLATE: schema */workflow_runs;
DROP TRIGGER IF EXISTS workflow_runs_schedule_finished ON /* TEMPLATE: schema */workflow_runs;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */tributary_schedule_run_finished();
ALTER TABLE /* TEMPLATE: schema */workflow_runs DROP CONSTRAINT IF EXISTS workflow_runs_schedule_fk;
DROP TABLE IF EXISTS /* TEMPLATE: schema */schedules;
DROP TABLE IF EXISTS /* TEMPLATE: schema */execution_grants;
