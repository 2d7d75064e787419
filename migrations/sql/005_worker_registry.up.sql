-- The worker registry (seed 001): every working client records the workflow
-- types it serves and refreshes its heartbeat every second. It tells an
-- operator (and Create, Start, `schedule get`, the dashboard) whether any
-- live process works a type, and lets any live client rescue the running
-- jobs of a client that died at once, instead of after River's
-- RescueStuckJobsAfter.
CREATE TABLE /* TEMPLATE: schema */tributary_workers (
    -- River's client ID: river_job.attempted_by names the clients that
    -- worked a job, last the current attempt's.
    client_id text PRIMARY KEY,
    hostname text NOT NULL,
    pid integer NOT NULL,
    -- The registered workflow types whose queue the client works.
    workflow_types text[] NOT NULL,
    queues text[] NOT NULL,
    -- The client's Config.MaxInputBytes: a schedule created by a client
    -- that does not work the type (the CLI, an API) is checked against the
    -- limit of the workers that will start its runs.
    max_input_bytes integer NOT NULL,
    -- The session advisory lock the client holds on a connection of its
    -- own while it lives: when its process dies, Postgres closes the
    -- session and the lock is gone at once.
    lock_key bigint NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);
