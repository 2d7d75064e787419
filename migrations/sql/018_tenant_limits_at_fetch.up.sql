-- Tenant limits kept by the fetch (internal/engine/fair_limits.go): a
-- run over its tenant's limit is no longer held back on a pending job with
-- its slots counted in tributary_tenant_slots; its job stays available and
-- the fair fetch takes it once its tenant has fewer jobs running than its
-- limit, counted through the index below. Nothing is written when an
-- attempt begins or ends.

-- Runs held back under 014's scheme wait on a job in River's pending
-- state, which nothing would wake now: they become ready, in their place.
UPDATE /* TEMPLATE: schema */river_job SET state = 'available', scheduled_at = least(scheduled_at, now())
WHERE state = 'pending' AND id IN (
    SELECT job_id FROM /* TEMPLATE: schema */workflow_runs WHERE held IS NOT NULL AND status = 'pending');

DROP INDEX /* TEMPLATE: schema */workflow_runs_held;
ALTER TABLE /* TEMPLATE: schema */workflow_runs DROP COLUMN held;
DROP TABLE /* TEMPLATE: schema */tributary_tenant_slots;

-- The running jobs of keyed runs, by kind and tenant: the fetch counts a
-- limited tenant's running jobs here. Only keyed jobs while they run are
-- in it (at most the workers of every client, and the dead entries of
-- those that ran since the last vacuum).
CREATE INDEX river_job_tributary_tenant_running ON /* TEMPLATE: schema */river_job
    (kind, (args->>'tenant'))
    WHERE state = 'running' AND args ? 'tenant';
