-- Fair turns across tenants: a working client's fetch (internal/engine's
-- pilot, fairFetch) gives the tenants that have runs ready one turn each,
-- in rotation, instead of River's first-come order. It finds those tenants
-- by skipping through this index, one probe per tenant, and takes each
-- one's oldest runs from it. Only the ready jobs of keyed runs (a tenant in
-- their args) are in it: River's other jobs, and every job once it runs,
-- never touch it.
CREATE INDEX river_job_tributary_tenant_ready ON /* TEMPLATE: schema */river_job
    (queue, (args->>'tenant'), priority, scheduled_at, id)
    WHERE state = 'available' AND args ? 'tenant';
