-- Prepared schedule slots (schedule/prepare.go): a slot's run and its River
-- job are written ahead, the job in River's pending state until its slot
-- is decided. The reconciler looks for those still pending after their
-- slot, which a client of an earlier version passed over, through this
-- index: only pending jobs are in it, so the look-up reads the overdue
-- ones, not every slot prepared. No job is pending before this version
-- (River's open-source edition never makes one), so it builds from nothing.
CREATE INDEX river_job_tributary_pending ON /* TEMPLATE: schema */river_job (scheduled_at)
    WHERE state = 'pending';
