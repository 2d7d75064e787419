DROP INDEX /* TEMPLATE: schema */schedules_calendars;
ALTER TABLE /* TEMPLATE: schema */schedules DROP COLUMN calendars, DROP COLUMN on_excluded;
DROP TABLE /* TEMPLATE: schema */tributary_calendar_dates;
DROP TABLE /* TEMPLATE: schema */tributary_calendars;
