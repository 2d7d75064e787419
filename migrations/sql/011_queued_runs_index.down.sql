DROP INDEX /* TEMPLATE: schema */workflow_runs_schedule_queued;
