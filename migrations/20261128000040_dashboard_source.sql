-- Where a recorded change came from: the API (a key's request), the dashboard (a signed-in
-- person's click) or the service on its own. Entries recorded before this column have none.
ALTER TABLE audit_log ADD COLUMN via text CHECK (via IN ('api', 'dashboard', 'service'));

-- A run asked for with the dashboard's "Run now" is stored with the trigger `dashboard`
-- (before, the only on-request trigger was `api`, whoever asked).
ALTER TABLE recommendation_runs DROP CONSTRAINT recommendation_runs_trigger_check;
ALTER TABLE recommendation_runs ADD CONSTRAINT recommendation_runs_trigger_check
    CHECK (trigger IN ('api', 'sync', 'dashboard'));
