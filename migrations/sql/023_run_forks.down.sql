DROP INDEX /* TEMPLATE: schema */workflow_runs_forked_from;
ALTER TABLE /* TEMPLATE: schema */workflow_runs
    DROP COLUMN forked_from_step,
    DROP COLUMN forked_from;
