ALTER TABLE /* TEMPLATE: schema */schedules DROP COLUMN keep_runs;
