-- Version records mean nothing to code from before 007: they go, and
-- replays match by name again.
DELETE FROM /* TEMPLATE: schema */step_runs WHERE kind = 'version';

ALTER DOMAIN /* TEMPLATE: schema */tributary_step_kind DROP CONSTRAINT tributary_step_kind_check;
ALTER DOMAIN /* TEMPLATE: schema */tributary_step_kind ADD CONSTRAINT tributary_step_kind_check
    CHECK (VALUE IN ('step', 'sleep', 'signal', 'child'));

ALTER TABLE /* TEMPLATE: schema */step_runs
    DROP COLUMN signal_name,
    DROP COLUMN seq;
