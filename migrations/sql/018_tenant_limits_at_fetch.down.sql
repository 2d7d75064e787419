DROP INDEX /* TEMPLATE: schema */river_job_tributary_tenant_running;

CREATE TABLE /* TEMPLATE: schema */tributary_tenant_slots (
    run_id uuid PRIMARY KEY,
    workflow_type text NOT NULL,
    tenant text NOT NULL,
    job_id bigint NOT NULL,
    attempt integer NOT NULL,
    taken_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tributary_tenant_slots_tenant ON /* TEMPLATE: schema */tributary_tenant_slots (workflow_type, tenant);

ALTER TABLE /* TEMPLATE: schema */workflow_runs
    ADD COLUMN held text CHECK (held IS NULL OR held IN ('tenant_limit'));
CREATE INDEX workflow_runs_held ON /* TEMPLATE: schema */workflow_runs (workflow_type, tenant, id) WHERE held IS NOT NULL;
