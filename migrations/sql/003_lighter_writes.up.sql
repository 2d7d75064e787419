-- Lighter writes on every run's hot path (step memos, run completion),
-- with the same rules as before. A batched memo or completion is one
-- statement for a few rows, so what Postgres does once per statement, or
-- once per row in a query of its own, was a large share of its cost.
--
-- Changing a column's type checks every row and rebuilds the indexes on it,
-- under an exclusive lock of the table: on a large workflow_runs table this
-- migration takes a while.

-- 1. The value rules of the columns these statements write, moved from
-- CHECK constraints to domains. Postgres reads a table's CHECK constraints
-- back from the catalog, and plans them, for every statement that writes
-- the table; it caches a domain's constraints per connection.

CREATE DOMAIN /* TEMPLATE: schema */tributary_workflow_type AS text
    CHECK (char_length(VALUE) BETWEEN 1 AND 128);
CREATE DOMAIN /* TEMPLATE: schema */tributary_idempotency_key AS text
    CHECK (char_length(VALUE) BETWEEN 1 AND 255);
CREATE DOMAIN /* TEMPLATE: schema */tributary_run_status AS text
    CHECK (VALUE IN ('pending', 'running', 'sleeping', 'waiting', 'completed', 'failed', 'cancelled', 'skipped'));
CREATE DOMAIN /* TEMPLATE: schema */tributary_step_name AS text
    CHECK (char_length(VALUE) BETWEEN 1 AND 200);
CREATE DOMAIN /* TEMPLATE: schema */tributary_step_kind AS text
    CHECK (VALUE IN ('step', 'sleep', 'signal', 'child'));
CREATE DOMAIN /* TEMPLATE: schema */tributary_step_status AS text
    CHECK (VALUE IN ('completed', 'failed', 'sleeping', 'waiting'));

-- A column a trigger names cannot change type: the schedule triggers go and
-- come back unchanged.
DROP TRIGGER workflow_runs_schedule_finished ON /* TEMPLATE: schema */workflow_runs;
DROP TRIGGER workflow_runs_schedule_skipped ON /* TEMPLATE: schema */workflow_runs;

ALTER TABLE /* TEMPLATE: schema */workflow_runs
    DROP CONSTRAINT workflow_runs_workflow_type_check,
    DROP CONSTRAINT workflow_runs_idempotency_key_check,
    DROP CONSTRAINT workflow_runs_status_check,
    ALTER COLUMN workflow_type TYPE /* TEMPLATE: schema */tributary_workflow_type,
    ALTER COLUMN idempotency_key TYPE /* TEMPLATE: schema */tributary_idempotency_key,
    ALTER COLUMN status TYPE /* TEMPLATE: schema */tributary_run_status;

ALTER TABLE /* TEMPLATE: schema */step_runs
    DROP CONSTRAINT step_runs_name_check,
    DROP CONSTRAINT step_runs_kind_check,
    DROP CONSTRAINT step_runs_status_check,
    ALTER COLUMN name TYPE /* TEMPLATE: schema */tributary_step_name,
    ALTER COLUMN kind TYPE /* TEMPLATE: schema */tributary_step_kind,
    ALTER COLUMN status TYPE /* TEMPLATE: schema */tributary_step_status;

CREATE TRIGGER workflow_runs_schedule_finished
    AFTER UPDATE OF status ON /* TEMPLATE: schema */workflow_runs
    FOR EACH ROW
    WHEN (NEW.schedule_id IS NOT NULL AND NEW.status IS DISTINCT FROM OLD.status
        AND NEW.status IN ('completed', 'failed', 'cancelled'))
    EXECUTE FUNCTION /* TEMPLATE: schema */tributary_schedule_run_finished();

CREATE TRIGGER workflow_runs_schedule_skipped
    AFTER INSERT ON /* TEMPLATE: schema */workflow_runs
    FOR EACH ROW
    WHEN (NEW.schedule_id IS NOT NULL AND NEW.status = 'skipped')
    EXECUTE FUNCTION /* TEMPLATE: schema */tributary_schedule_run_finished();

-- 2. The step_runs -> workflow_runs foreign key. Its check ran a query of
-- its own for every memo written. The same guarantees now come from:
--   - the statements that write a memo (internal/engine/step.go): they insert it
--     only together with its run, taking the run's key-share lock, the lock
--     the foreign key's check took. A memo of a missing run is not written.
--     A run deleted at the same moment waits for the memo's transaction and
--     then deletes it with its steps.
--   - triggers that delete a run's steps with it (the foreign key's ON
--     DELETE CASCADE), and empty step_runs when workflow_runs is truncated.
ALTER TABLE /* TEMPLATE: schema */step_runs DROP CONSTRAINT step_runs_run_id_fkey;

CREATE FUNCTION /* TEMPLATE: schema */tributary_delete_run_steps() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM /* TEMPLATE: schema */step_runs s USING deleted_runs d WHERE s.run_id = d.id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER workflow_runs_delete_steps
    AFTER DELETE ON /* TEMPLATE: schema */workflow_runs
    REFERENCING OLD TABLE AS deleted_runs
    FOR EACH STATEMENT
    EXECUTE FUNCTION /* TEMPLATE: schema */tributary_delete_run_steps();

CREATE FUNCTION /* TEMPLATE: schema */tributary_truncate_run_steps() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE /* TEMPLATE: schema */step_runs;
    RETURN NULL;
END;
$$;

CREATE TRIGGER workflow_runs_truncate_steps
    AFTER TRUNCATE ON /* TEMPLATE: schema */workflow_runs
    FOR EACH STATEMENT
    EXECUTE FUNCTION /* TEMPLATE: schema */tributary_truncate_run_steps();
