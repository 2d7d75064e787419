DROP TABLE /* TEMPLATE: schema */schedule_declarations;
DROP INDEX /* TEMPLATE: schema */schedules_declared_by;
DROP INDEX /* TEMPLATE: schema */schedules_owner_key;
ALTER TABLE /* TEMPLATE: schema */schedules
    DROP COLUMN created_by,
    DROP COLUMN undeclared_at,
    DROP COLUMN declared_by,
    DROP COLUMN key;
