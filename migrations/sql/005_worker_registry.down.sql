-- The registry only describes live processes: nothing is lost by dropping
-- it. Clients of the newer version fail their heartbeat until migrated up.
DROP TABLE /* TEMPLATE: schema */tributary_workers;
