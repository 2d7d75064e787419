-- Debounced starts (workflow.StartOpts.Debounce): starts of one workflow
-- type with the same debounce key collapse into one run while its window
-- is open, that is while its River job has not been fetched. The key stays
-- on the run; debounce_open is cleared by the first start that finds the
-- window closed, which then opens a new one.
ALTER TABLE /* TEMPLATE: schema */workflow_runs
    ADD COLUMN debounce_key text CHECK (char_length(debounce_key) BETWEEN 1 AND 255),
    ADD COLUMN debounce_open boolean NOT NULL DEFAULT false;

-- One open window per (type, key): racing starts meet here.
CREATE UNIQUE INDEX workflow_runs_debounce ON /* TEMPLATE: schema */workflow_runs (workflow_type, debounce_key)
    WHERE debounce_open;
