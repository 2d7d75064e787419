-- Workflow runs: one row per run of a workflow type. Every attempt of a run
-- is a River job (river_job.id is kept in job_id); the row outlives River's
-- job cleaner.
CREATE TABLE /* TEMPLATE: schema */workflow_runs (
    id uuid PRIMARY KEY,
    workflow_type text NOT NULL CHECK (char_length(workflow_type) BETWEEN 1 AND 128),
    idempotency_key text CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
    status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'running', 'sleeping', 'waiting', 'completed', 'failed', 'cancelled', 'skipped')),
    input jsonb NOT NULL DEFAULT 'null',
    output jsonb,
    error jsonb,
    attempt integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL,
    queue text NOT NULL,
    priority smallint NOT NULL DEFAULT 1,
    job_id bigint,
    schedule_id uuid,
    fire_at timestamptz,
    parent_run_id uuid REFERENCES /* TEMPLATE: schema */workflow_runs (id) ON DELETE SET NULL,
    parent_step text,
    metadata jsonb NOT NULL DEFAULT '{}',
    tags text[] NOT NULL DEFAULT '{}',
    skip_reason text,
    cancel_requested_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    started_at timestamptz,
    finished_at timestamptz
);

-- The unique keys are partial: most runs have neither key, and a status
-- change rewrites every index that holds the row.
CREATE UNIQUE INDEX workflow_runs_idempotency_key ON /* TEMPLATE: schema */workflow_runs (workflow_type, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
-- A schedule slot fires at most once, forever (SLOT_IS_UNIQUE).
CREATE UNIQUE INDEX workflow_runs_schedule_slot ON /* TEMPLATE: schema */workflow_runs (schedule_id, fire_at)
    WHERE schedule_id IS NOT NULL;
CREATE INDEX workflow_runs_type_status_id ON /* TEMPLATE: schema */workflow_runs (workflow_type, status, id DESC);
-- Unfinished runs, for the repair pass and operators' "what is in flight".
CREATE INDEX workflow_runs_unfinished ON /* TEMPLATE: schema */workflow_runs (status, id DESC)
    WHERE status IN ('pending', 'running', 'sleeping', 'waiting');
CREATE INDEX workflow_runs_parent ON /* TEMPLATE: schema */workflow_runs (parent_run_id) WHERE parent_run_id IS NOT NULL;

-- Step memos: one row per named step of a run. A completed row is the step's
-- durable result; a replayed attempt returns it instead of calling the step.
CREATE TABLE /* TEMPLATE: schema */step_runs (
    run_id uuid NOT NULL REFERENCES /* TEMPLATE: schema */workflow_runs (id) ON DELETE CASCADE,
    name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    kind text NOT NULL CHECK (kind IN ('step', 'sleep', 'signal', 'child')),
    status text NOT NULL CHECK (status IN ('completed', 'failed', 'sleeping', 'waiting')),
    result_type text NOT NULL DEFAULT '',
    output jsonb,
    error jsonb,
    attempts integer NOT NULL DEFAULT 1,
    wake_at timestamptz,
    child_run_id uuid,
    started_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    PRIMARY KEY (run_id, name)
);

-- Signals sent to runs. A signal sent before the run waits for it stays here,
-- unconsumed, until a WaitSignal step of the same name takes it.
CREATE TABLE /* TEMPLATE: schema */workflow_signals (
    id bigserial PRIMARY KEY,
    run_id uuid NOT NULL REFERENCES /* TEMPLATE: schema */workflow_runs (id) ON DELETE CASCADE,
    name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    payload jsonb NOT NULL DEFAULT 'null',
    consumed_by_step text,
    consumed_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX workflow_signals_pending ON /* TEMPLATE: schema */workflow_signals (run_id, name, id) WHERE consumed_at IS NULL;
