-- Per schedule, how many of its latest runs (by slot) run retention keeps
-- whatever their age (schedule.Params.KeepRuns); 0 keeps none beyond the
-- workflow client's retention. Adding a column with a constant default
-- rewrites nothing.
ALTER TABLE /* TEMPLATE: schema */schedules
    ADD COLUMN keep_runs integer NOT NULL DEFAULT 0 CHECK (keep_runs BETWEEN 0 AND 1000000);
