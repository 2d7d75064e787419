-- Per schedule, the retry policy of its runs (schedule.Params.Retry): a
-- workflow.RetryPolicy's JSON, durations in nanoseconds; NULL for the
-- workflow type's. Adding a nullable column rewrites nothing.
ALTER TABLE /* TEMPLATE: schema */schedules
    ADD COLUMN retry jsonb CHECK (retry IS NULL OR jsonb_typeof(retry) = 'object');
