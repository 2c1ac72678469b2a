-- A snapshot's tenant-rent rows summed per size, written at ingest:
-- {"10x10": [tenants, rent per month of those tenants], ...}. Company-wide reports (the
-- portfolio's rent gap) read these few bytes a facility instead of every cohort of the day.
-- Null on snapshots stored before the column existed: readers derive the sums from
-- tenant_rents then. Adding a nullable column without a default rewrites nothing.
ALTER TABLE sync_records ADD COLUMN tenant_rent_by_size jsonb;
