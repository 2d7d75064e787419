-- Per-tenant rate limits (workflow.DefineOpts.TenantRate): at most so many
-- attempts of one workflow type and one tenant start per period, across
-- every client. A token bucket per (job kind, tenant): tokens as of at,
-- refilled at the type's rate up to its burst when next read. The fair
-- fetch (internal/engine/fair_fetch.go) reads and locks the buckets of the
-- tenants it is about to serve, starts at most their tokens' worth, and
-- takes what it started, in one transaction.
CREATE TABLE /* TEMPLATE: schema */tributary_tenant_rates (
    job_kind text NOT NULL,
    tenant text NOT NULL,
    tokens double precision NOT NULL,
    at timestamptz NOT NULL,
    PRIMARY KEY (job_kind, tenant)
);
