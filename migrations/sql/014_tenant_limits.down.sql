DROP INDEX /* TEMPLATE: schema */workflow_runs_held;
ALTER TABLE /* TEMPLATE: schema */workflow_runs DROP COLUMN held;
DROP TABLE /* TEMPLATE: schema */tributary_tenant_slots;
DROP TABLE /* TEMPLATE: schema */tributary_tenant_limits;
ALTER TABLE /* TEMPLATE: schema */tributary_workers DROP COLUMN tenant_limits;
