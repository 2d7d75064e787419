-- Replay matches a run's step records by their position, not by name alone
-- (workflow/context.go): renaming, inserting or reordering steps under a
-- run in flight is then caught as a divergence.
--
-- seq is a record's position in its run's history: the n-th step boundary
-- (step, sleep, signal wait, child, version) the workflow reached, from 0.
-- Records written before this migration keep a NULL seq and are matched by
-- name, as before. Adding a nullable column without a default rewrites no
-- rows.
--
-- signal_name is the signal a parked signal wait waits for (its step name
-- may differ), so that Signal can say whether the run waits for it.
ALTER TABLE /* TEMPLATE: schema */step_runs
    ADD COLUMN seq integer,
    ADD COLUMN signal_name text;

-- A new step kind: the record of a workflow.Version decision. NOT VALID:
-- the new rule allows every value the old one did, so no row needs reading.
ALTER DOMAIN /* TEMPLATE: schema */tributary_step_kind DROP CONSTRAINT tributary_step_kind_check;
ALTER DOMAIN /* TEMPLATE: schema */tributary_step_kind ADD CONSTRAINT tributary_step_kind_check
    CHECK (VALUE IN ('step', 'sleep', 'signal', 'child', 'version')) NOT VALID;
