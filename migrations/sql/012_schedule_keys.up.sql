-- Schedule keys (schedule.Params.Key): a name for a schedule that code can
-- create again without making a copy. A key is unique per owner; a second
-- Create of an owner's key finds the first schedule. Schedules made before
-- keys existed have none (NULL) and stay as they are.
ALTER TABLE /* TEMPLATE: schema */schedules
    ADD COLUMN key text CHECK (key IS NULL OR char_length(key) BETWEEN 1 AND 200),
    -- The service whose declaration (schedule.Client.Declare) made the
    -- schedule and keeps it in step with its code; NULL for a schedule made
    -- by Create (by hand, from the CLI, the API or the dashboard, or by
    -- application code), which no declaration ever changes.
    ADD COLUMN declared_by text CHECK (declared_by IS NULL OR (char_length(declared_by) BETWEEN 1 AND 200 AND key IS NOT NULL)),
    -- When its service stopped declaring it and paused it; a later
    -- declaration of its key resumes it. NULL otherwise.
    ADD COLUMN undeclared_at timestamptz,
    -- Who called Create: "cli", "api", "dashboard", or '' for application
    -- code (schedule.Params.CreatedBy).
    ADD COLUMN created_by text NOT NULL DEFAULT '' CHECK (char_length(created_by) <= 200);

-- Every existing row has a NULL key, so this builds from nothing.
CREATE UNIQUE INDEX schedules_owner_key ON /* TEMPLATE: schema */schedules (owner, key) WHERE key IS NOT NULL;
CREATE INDEX schedules_declared_by ON /* TEMPLATE: schema */schedules (declared_by) WHERE declared_by IS NOT NULL;

-- One row per declaring service: the newest declaration's version. Its row
-- lock makes the declarations of one service's replicas take turns, and its
-- version keeps an older build from undoing a newer one's declaration
-- during a rolling deploy.
CREATE TABLE /* TEMPLATE: schema */schedule_declarations (
    service text PRIMARY KEY CHECK (char_length(service) BETWEEN 1 AND 200),
    version bigint NOT NULL CHECK (version >= 0),
    schedules integer NOT NULL DEFAULT 0,
    declared_at timestamptz NOT NULL DEFAULT now()
);
