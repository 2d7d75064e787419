-- Holiday calendars: named sets of local dates that schedules exclude
-- (schedule.Params.Calendars): a slot whose nominal local date a
-- schedule's calendar holds is skipped or moved to the next business day
-- (schedules.on_excluded). A date range is stored as its days.
CREATE TABLE /* TEMPLATE: schema */tributary_calendars (
    name text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,99}$'),
    description text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

CREATE TABLE /* TEMPLATE: schema */tributary_calendar_dates (
    calendar text NOT NULL REFERENCES /* TEMPLATE: schema */tributary_calendars (name) ON DELETE CASCADE,
    day date NOT NULL,
    note text NOT NULL DEFAULT '',
    PRIMARY KEY (calendar, day)
);

-- Adding columns with constant defaults rewrites nothing. The GIN index
-- finds the schedules of a calendar when it changes.
ALTER TABLE /* TEMPLATE: schema */schedules
    ADD COLUMN calendars text[] NOT NULL DEFAULT '{}',
    ADD COLUMN on_excluded text NOT NULL DEFAULT 'skip' CHECK (on_excluded IN ('skip', 'next-business-day'));
CREATE INDEX schedules_calendars ON /* TEMPLATE: schema */schedules USING gin (calendars) WHERE calendars <> '{}';
