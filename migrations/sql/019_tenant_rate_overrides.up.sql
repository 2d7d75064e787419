-- Per-tenant rates seen and set (workflow.DefineOpts.TenantRate): the
-- rates the working clients keep, for an operator's tools, and an
-- operator's rate for one tenant in place of its type's.

-- The rates of the workflow types a working client serves
-- (DefineOpts.TenantRate, {"type": {"limit": 100, "per": "1m0s",
-- "per_second": 1.6667, "burst": 1}}: limit per per, and the tokens a
-- second and the bucket the fetch keeps them with), so that an operator's
-- tools can show a type's rate, and the runs waiting for it, without its
-- code.
ALTER TABLE /* TEMPLATE: schema */tributary_workers
    ADD COLUMN tenant_rates jsonb NOT NULL DEFAULT '{}';

-- An operator's rate for one tenant of one type, in place of the type's
-- (DefineOpts.TenantRate): a big tenant gets 1,000 a minute where the rest
-- get 100. rate_limit per per is the rate as set (per kept to the
-- microsecond); per_second and burst are what the fair fetch
-- (internal/engine/fair_rates.go) refills the tenant's bucket in
-- tributary_tenant_rates with, computed from them once, as for the type's.
CREATE TABLE /* TEMPLATE: schema */tributary_tenant_rate_overrides (
    workflow_type text NOT NULL,
    tenant text NOT NULL CHECK (char_length(tenant) BETWEEN 1 AND 100),
    rate_limit integer NOT NULL CHECK (rate_limit >= 1),
    per interval NOT NULL CHECK (per > interval '0'),
    per_second double precision NOT NULL CHECK (per_second > 0),
    burst double precision NOT NULL CHECK (burst >= 1),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_type, tenant)
);

-- The rate a bucket was last refilled at. The fair fetch refills a bucket
-- to now, at its tenant's rate (its own, else its type's), in the
-- statement that creates or locks it, and the take later in the same
-- transaction only subtracts: the tokens are counted at the rate that
-- statement read, even when an operator changes the rate in between.
-- NULL on a bucket last written by a client from before this migration.
ALTER TABLE /* TEMPLATE: schema */tributary_tenant_rates
    ADD COLUMN per_second double precision,
    ADD COLUMN burst double precision;
