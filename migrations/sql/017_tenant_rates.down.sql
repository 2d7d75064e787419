DROP TABLE /* TEMPLATE: schema */tributary_tenant_rates;
