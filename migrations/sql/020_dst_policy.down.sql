ALTER TABLE /* TEMPLATE: schema */schedules DROP COLUMN dst_gap, DROP COLUMN dst_fold;
