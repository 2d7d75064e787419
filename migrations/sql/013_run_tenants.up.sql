-- Run tenants (workflow.StartOpts.Tenant, schedule.Params.Tenant): the
-- tenant, customer or partner a run does its work for, a short name by
-- which runs are listed and, with the limits to come, shared out. Runs made
-- before tenants existed have none (NULL), as has every run started
-- without one.
ALTER TABLE /* TEMPLATE: schema */workflow_runs
    ADD COLUMN tenant text CHECK (tenant IS NULL OR char_length(tenant) BETWEEN 1 AND 100);

-- A tenant's runs, newest first (ListRuns with a tenant). A run without a
-- tenant is not in it: the untenanted path writes no more than before.
-- Every existing row has a NULL tenant, so this builds from nothing.
CREATE INDEX workflow_runs_tenant ON /* TEMPLATE: schema */workflow_runs (tenant, id DESC) WHERE tenant IS NOT NULL;

-- The tenant of a schedule's runs when it is not the schedule's owner;
-- NULL: the owner's (none when the owner is '').
ALTER TABLE /* TEMPLATE: schema */schedules
    ADD COLUMN run_tenant text CHECK (run_tenant IS NULL OR char_length(run_tenant) BETWEEN 1 AND 100);
