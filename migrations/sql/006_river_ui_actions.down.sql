-- Without the triggers, jobs ended outside Tributary reach their runs at
-- the next repair pass (a minute at most), as before.
DROP TRIGGER river_job_tributary_run_deleted ON /* TEMPLATE: schema */river_job;
DROP TRIGGER river_job_tributary_run_ended ON /* TEMPLATE: schema */river_job;
DROP FUNCTION /* TEMPLATE: schema */tributary_run_job_changed();
