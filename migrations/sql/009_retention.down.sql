DROP INDEX /* TEMPLATE: schema */workflow_signals_run;
