DROP TABLE IF EXISTS /* TEMPLATE: schema */workflow_signals;
DROP TABLE IF EXISTS /* TEMPLATE: schema */step_runs;
DROP TABLE IF EXISTS /* TEMPLATE: schema */workflow_runs;
