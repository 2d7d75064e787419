ALTER TABLE /* TEMPLATE: schema */schedules DROP COLUMN run_tenant;
DROP INDEX /* TEMPLATE: schema */workflow_runs_tenant;
ALTER TABLE /* TEMPLATE: schema */workflow_runs DROP COLUMN tenant;
