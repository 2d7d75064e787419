ALTER TABLE /* TEMPLATE: schema */schedules DROP COLUMN retry;
