-- Per-tenant concurrency limits (workflow.DefineOpts.TenantLimit): at most
-- so many runs of one workflow type and one tenant work at once, across
-- every client of the database.

-- The limits of the workflow types a working client serves
-- (DefineOpts.TenantLimit, {"type": limit}), so that an operator's tools
-- can show a type's limit without its code.
ALTER TABLE /* TEMPLATE: schema */tributary_workers
    ADD COLUMN tenant_limits jsonb NOT NULL DEFAULT '{}';

-- An operator's limit for one tenant of one type, in place of the type's
-- (DefineOpts.TenantLimit): a big tenant gets 50 where the rest get 5.
CREATE TABLE /* TEMPLATE: schema */tributary_tenant_limits (
    workflow_type text NOT NULL,
    tenant text NOT NULL CHECK (char_length(tenant) BETWEEN 1 AND 100),
    max_running integer NOT NULL CHECK (max_running >= 1),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_type, tenant)
);

-- The slots taken: a row per run whose attempt was admitted under its
-- tenant's limit. A row counts only while its River job runs that attempt
-- (river_job.state = 'running' and the same attempt), so a slot whose
-- attempt ended without giving it back (a client killed, a job rescued)
-- is free all the same; such rows are deleted when the tenant's slots are
-- next given back.
CREATE TABLE /* TEMPLATE: schema */tributary_tenant_slots (
    run_id uuid PRIMARY KEY,
    workflow_type text NOT NULL,
    tenant text NOT NULL,
    job_id bigint NOT NULL,
    attempt integer NOT NULL,
    taken_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tributary_tenant_slots_tenant ON /* TEMPLATE: schema */tributary_tenant_slots (workflow_type, tenant);

-- Why a run that is ready to work is held back instead, its River job
-- parked in River's pending state: 'tenant_limit' (its tenant had all its
-- slots taken). NULL for every other run. Held runs are woken in the order
-- they were started (by id) as slots are given back.
ALTER TABLE /* TEMPLATE: schema */workflow_runs
    ADD COLUMN held text CHECK (held IS NULL OR held IN ('tenant_limit'));
CREATE INDEX workflow_runs_held ON /* TEMPLATE: schema */workflow_runs (workflow_type, tenant, id) WHERE held IS NOT NULL;
