-- Per schedule, its DST policy (schedule.Params.DSTGap and DSTFold): what
-- a fixed-time schedule does with a wall time the clocks jump over (jump:
-- run right after the jump; shift: later by the jump's length; skip: record
-- the slot as skipped) and with one that occurs twice (first, last, both).
-- Adding columns with constant defaults rewrites nothing.
ALTER TABLE /* TEMPLATE: schema */schedules
    ADD COLUMN dst_gap text NOT NULL DEFAULT 'jump' CHECK (dst_gap IN ('jump', 'shift', 'skip')),
    ADD COLUMN dst_fold text NOT NULL DEFAULT 'first' CHECK (dst_fold IN ('first', 'last', 'both'));
