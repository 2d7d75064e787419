-- Execution grants: the authority a schedule's runs act under, instead of a
-- user's session (GRANT_NOT_SESSION). A grant names a subject and scopes
-- such as workflow:execute:<type> or *, and can expire or be revoked.
CREATE TABLE /* TEMPLATE: schema */execution_grants (
    id uuid PRIMARY KEY,
    subject text NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 200),
    scopes text[] NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    revoke_reason text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Schedules: a cron expression in an IANA zone that starts workflow runs.
-- The chain of slots lives in River: each slot is one fire job, and the
-- transaction that fires a slot inserts the next one (PRODUCER_ENQUEUES_NEXT).
CREATE TABLE /* TEMPLATE: schema */schedules (
    id uuid PRIMARY KEY,
    name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    description text NOT NULL DEFAULT '',
    owner text NOT NULL DEFAULT '',
    workflow_type text NOT NULL CHECK (char_length(workflow_type) BETWEEN 1 AND 128),
    input jsonb NOT NULL DEFAULT 'null',
    cron text NOT NULL,
    time_zone text NOT NULL DEFAULT 'UTC',
    start_at timestamptz,
    end_at timestamptz,
    overlap_policy text NOT NULL DEFAULT 'skip' CHECK (overlap_policy IN ('allow', 'skip', 'queue', 'replace')),
    catchup_window_ms bigint NOT NULL DEFAULT 60000 CHECK (catchup_window_ms >= 0),
    catchup_policy text NOT NULL DEFAULT 'window' CHECK (catchup_policy IN ('window', 'latest')),
    max_attempts integer NOT NULL DEFAULT 0,
    timeout_ms bigint NOT NULL DEFAULT 0,
    queue text NOT NULL DEFAULT '',
    priority smallint NOT NULL DEFAULT 0,
    paused boolean NOT NULL DEFAULT false,
    pause_note text NOT NULL DEFAULT '',
    paused_at timestamptz,
    next_fire_at timestamptz,
    last_fire_at timestamptz,
    run_count bigint NOT NULL DEFAULT 0,
    failure_count bigint NOT NULL DEFAULT 0,
    last_run_status text,
    grant_id uuid REFERENCES /* TEMPLATE: schema */execution_grants (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (end_at IS NULL OR start_at IS NULL OR end_at > start_at)
);

CREATE INDEX schedules_owner ON /* TEMPLATE: schema */schedules (owner, id);
CREATE INDEX schedules_workflow_type ON /* TEMPLATE: schema */schedules (workflow_type, id);
-- Live schedules by their next slot, for the reconciler that repairs chains.
CREATE INDEX schedules_next_fire ON /* TEMPLATE: schema */schedules (next_fire_at) WHERE NOT paused AND next_fire_at IS NOT NULL;

ALTER TABLE /* TEMPLATE: schema */workflow_runs
    ADD CONSTRAINT workflow_runs_schedule_fk FOREIGN KEY (schedule_id)
    REFERENCES /* TEMPLATE: schema */schedules (id) ON DELETE SET NULL;

-- A schedule's figures follow its runs: the last run status, and the
-- failure count; and a finished run releases a queued one. A trigger keeps them current whichever process finishes a
-- run (a workflow worker, a cancel, the repair pass), in the same
-- transaction.
CREATE FUNCTION /* TEMPLATE: schema */tributary_schedule_run_finished() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE /* TEMPLATE: schema */schedules
    SET last_run_status = NEW.status,
        failure_count = failure_count + CASE WHEN NEW.status = 'failed' THEN 1 ELSE 0 END,
        updated_at = now()
    WHERE id = NEW.schedule_id;

    -- Overlap policy "queue": a run that finished releases the schedule's
    -- queued run (held far in the future); River's scheduler makes its job
    -- available within seconds.
    IF TG_OP = 'UPDATE' THEN
        WITH queued AS (
            UPDATE /* TEMPLATE: schema */workflow_runs
            SET metadata = metadata - 'schedule_queued'
            WHERE id = (
                SELECT id FROM /* TEMPLATE: schema */workflow_runs
                WHERE schedule_id = NEW.schedule_id AND status = 'pending' AND metadata ? 'schedule_queued'
                ORDER BY fire_at LIMIT 1
            )
            RETURNING job_id
        )
        UPDATE /* TEMPLATE: schema */river_job SET scheduled_at = now()
        WHERE id IN (SELECT job_id FROM queued) AND state = 'scheduled';
    END IF;
    RETURN NULL;
END;
$$;

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
