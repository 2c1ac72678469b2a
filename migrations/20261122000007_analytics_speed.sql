-- Analytics, faster writes and reads.
--
-- 1. The latest competitor observation of a (facility, size, competitor) is found by one index
--    descent. Before, the refresh trigger read every observation of the facility and size
--    (3,650 rows after two years of daily scrapes of five competitors) for each competitor of a
--    sync, which made it the largest part of a sync's transaction on a long history.
-- 2. A monthly per-size rollup (`facility_size_months`) for the per-size seasonality profile,
--    which otherwise probes the per-size rows of every facility-month's latest snapshot.

CREATE INDEX competitor_rates_latest_idx ON competitor_rates
    (facility_id, size, (lower(btrim(competitor))), observed_on DESC, id DESC)
    WHERE rate > 0;

-- Per facility, calendar month and size: the size's month-to-date move-ins (summed over its
-- tiers) in the month's latest snapshot, and that snapshot's date. A size whose tiers all lack
-- the figure has no row, and a month whose latest snapshot has no unit types has none at all.
CREATE TABLE facility_size_months (
    facility_id  uuid NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    company_id   uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    month        date NOT NULL,
    size         text NOT NULL,
    move_ins_mtd integer NOT NULL,
    last_date    date NOT NULL,
    PRIMARY KEY (facility_id, month, size)
);
CREATE INDEX facility_size_months_company_idx ON facility_size_months (company_id, size, month);

-- Recomputes the given (facility, month) pairs from `facility_months` (which names each month's
-- latest snapshot) and that snapshot's unit types, under the same per-facility lock as the
-- monthly rollup.
CREATE FUNCTION analytics_refresh_size_months(p_facilities uuid[], p_months date[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_facilities IS NULL OR cardinality(p_facilities) = 0 THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('facility_months'), hashtext(f::text))
    FROM (SELECT DISTINCT unnest(p_facilities) AS f ORDER BY 1) ordered;

    DELETE FROM facility_size_months m
    USING unnest(p_facilities, p_months) AS p(facility_id, month)
    WHERE m.facility_id = p.facility_id AND m.month = p.month;

    INSERT INTO facility_size_months (facility_id, company_id, month, size, move_ins_mtd, last_date)
    SELECT m.facility_id, m.company_id, m.month, t.size, sum(t.move_ins_mtd), m.last_date
    FROM (SELECT DISTINCT facility_id, month FROM unnest(p_facilities, p_months) AS u(facility_id, month)) p
    JOIN facility_months m ON m.facility_id = p.facility_id AND m.month = p.month
    JOIN sync_unit_types t ON t.sync_id = m.last_sync_id
    WHERE t.move_ins_mtd IS NOT NULL
    GROUP BY m.facility_id, m.company_id, m.month, t.size, m.last_date;
END $$;

CREATE FUNCTION analytics_size_months_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM analytics_refresh_size_months(array_agg(c.facility_id), array_agg(c.month))
        FROM (SELECT DISTINCT facility_id, date_trunc('month', snapshot_date::timestamp)::date AS month
              FROM changed_new) c;
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM analytics_refresh_size_months(array_agg(c.facility_id), array_agg(c.month))
        FROM (SELECT facility_id, date_trunc('month', snapshot_date::timestamp)::date AS month FROM changed_new
              UNION
              SELECT facility_id, date_trunc('month', snapshot_date::timestamp)::date FROM changed_old) c;
    ELSE
        PERFORM analytics_refresh_size_months(array_agg(c.facility_id), array_agg(c.month))
        FROM (SELECT DISTINCT facility_id, date_trunc('month', snapshot_date::timestamp)::date AS month
              FROM changed_old) c;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER sync_unit_types_size_months_ins AFTER INSERT ON sync_unit_types
    REFERENCING NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION analytics_size_months_trigger();
CREATE TRIGGER sync_unit_types_size_months_upd AFTER UPDATE ON sync_unit_types
    REFERENCING NEW TABLE AS changed_new OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION analytics_size_months_trigger();
CREATE TRIGGER sync_unit_types_size_months_del AFTER DELETE ON sync_unit_types
    REFERENCING OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION analytics_size_months_trigger();

-- The same trigger function serves `sync_records` (a new latest snapshot of a month changes which
-- unit types count) and `sync_unit_types`: both have `facility_id` and `snapshot_date`.
-- Triggers of one event fire in name order, so on `sync_records` these come after
-- `sync_records_months_*` and read the month as just recomputed.
CREATE TRIGGER sync_records_size_months_ins AFTER INSERT ON sync_records
    REFERENCING NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION analytics_size_months_trigger();
CREATE TRIGGER sync_records_size_months_upd AFTER UPDATE ON sync_records
    REFERENCING NEW TABLE AS changed_new OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION analytics_size_months_trigger();
CREATE TRIGGER sync_records_size_months_del AFTER DELETE ON sync_records
    REFERENCING OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION analytics_size_months_trigger();

-- Months that existed before this migration, in one pass.
INSERT INTO facility_size_months (facility_id, company_id, month, size, move_ins_mtd, last_date)
SELECT m.facility_id, m.company_id, m.month, t.size, sum(t.move_ins_mtd), m.last_date
FROM facility_months m
JOIN sync_unit_types t ON t.sync_id = m.last_sync_id
WHERE t.move_ins_mtd IS NOT NULL
GROUP BY m.facility_id, m.company_id, m.month, t.size, m.last_date;
