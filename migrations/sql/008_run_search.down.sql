DROP INDEX /* TEMPLATE: schema */workflow_runs_failed;
DROP INDEX /* TEMPLATE: schema */workflow_runs_metadata;
