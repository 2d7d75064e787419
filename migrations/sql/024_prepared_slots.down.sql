DROP INDEX /* TEMPLATE: schema */river_job_tributary_pending;
