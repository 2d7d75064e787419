DROP INDEX /* TEMPLATE: schema */workflow_runs_debounce;
ALTER TABLE /* TEMPLATE: schema */workflow_runs
    DROP COLUMN debounce_open,
    DROP COLUMN debounce_key;
