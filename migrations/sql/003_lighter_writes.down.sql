DROP TRIGGER IF EXISTS workflow_runs_truncate_steps ON /* TEMPLATE: schema */workflow_runs;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */tributary_truncate_run_steps();
DROP TRIGGER IF EXISTS workflow_runs_delete_steps ON /* TEMPLATE: schema */workflow_runs;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */tributary_delete_run_steps();

-- Steps whose run is gone (none, unless written by hand) would block the
-- foreign key.
DELETE FROM /* TEMPLATE: schema */step_runs s
WHERE NOT EXISTS (SELECT 1 FROM /* TEMPLATE: schema */workflow_runs r WHERE r.id = s.run_id);
ALTER TABLE /* TEMPLATE: schema */step_runs
    ADD CONSTRAINT step_runs_run_id_fkey FOREIGN KEY (run_id)
    REFERENCES /* TEMPLATE: schema */workflow_runs (id) ON DELETE CASCADE;

DROP TRIGGER IF EXISTS workflow_runs_schedule_finished ON /* TEMPLATE: schema */workflow_runs;
DROP TRIGGER IF EXISTS workflow_runs_schedule_skipped ON /* TEMPLATE: schema */workflow_runs;

ALTER TABLE /* TEMPLATE: schema */workflow_runs
    ALTER COLUMN workflow_type TYPE text,
    ALTER COLUMN idempotency_key TYPE text,
    ALTER COLUMN status TYPE text,
    ADD CONSTRAINT workflow_runs_workflow_type_check CHECK (char_length(workflow_type) BETWEEN 1 AND 128),
    ADD CONSTRAINT workflow_runs_idempotency_key_check CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
    ADD CONSTRAINT workflow_runs_status_check
        CHECK (status IN ('pending', 'running', 'sleeping', 'waiting', 'completed', 'failed', 'cancelled', 'skipped'));

ALTER TABLE /* TEMPLATE: schema */step_runs
    ALTER COLUMN name TYPE text,
    ALTER COLUMN kind TYPE text,
    ALTER COLUMN status TYPE text,
    ADD CONSTRAINT step_runs_name_check CHECK (char_length(name) BETWEEN 1 AND 200),
    ADD CONSTRAINT step_runs_kind_check CHECK (kind IN ('step', 'sleep', 'signal', 'child')),
    ADD CONSTRAINT step_runs_status_check CHECK (status IN ('completed', 'failed', 'sleeping', 'waiting'));

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

DROP DOMAIN /* TEMPLATE: schema */tributary_workflow_type;
DROP DOMAIN /* TEMPLATE: schema */tributary_idempotency_key;
DROP DOMAIN /* TEMPLATE: schema */tributary_run_status;
DROP DOMAIN /* TEMPLATE: schema */tributary_step_name;
DROP DOMAIN /* TEMPLATE: schema */tributary_step_kind;
DROP DOMAIN /* TEMPLATE: schema */tributary_step_status;
