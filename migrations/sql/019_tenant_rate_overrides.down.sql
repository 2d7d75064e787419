ALTER TABLE /* TEMPLATE: schema */tributary_tenant_rates DROP COLUMN per_second, DROP COLUMN burst;
DROP TABLE /* TEMPLATE: schema */tributary_tenant_rate_overrides;
ALTER TABLE /* TEMPLATE: schema */tributary_workers DROP COLUMN tenant_rates;
