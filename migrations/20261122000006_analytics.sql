-- Analytics: a monthly rollup per facility, kept in step with sync_records by triggers, so that
-- 12-month trends and the seasonality profile read one row per facility-month (24,000 rows for
-- 1,000 facilities x 2 years) instead of every daily record (730,000).
--
-- A row holds, for one facility and calendar month: how many snapshots the month has, sums of
-- the daily flows, and the figures of the month's latest snapshot (month-to-date counters and
-- the stock figures: occupancy, units, area, rents). It is recomputed from sync_records for every
-- facility-month a statement touches (insert, update or delete, whatever the intake path), so
-- it never drifts from the records: a re-sent day, an out-of-order day or a deleted facility
-- give the same row as computing it afresh.

CREATE TABLE facility_months (
    facility_id             uuid NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    company_id              uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    month                   date NOT NULL CHECK (extract(day FROM month) = 1),
    days_reported           integer NOT NULL,
    -- Sums over the month's snapshots; null when no snapshot of the month carried the figure.
    move_ins_daily_sum      integer,
    move_outs_daily_sum     integer,
    leads_sum               integer,
    -- The month's latest snapshot and its figures.
    last_date               date NOT NULL,
    last_sync_id            uuid NOT NULL,
    occupancy_pct           double precision,
    move_ins_mtd            integer,
    move_outs_mtd           integer,
    total_units             integer,
    occupied_units          integer,
    units_estimated         boolean NOT NULL,
    rentable_sqft           double precision,
    rentable_sqft_estimated boolean NOT NULL,
    gross_potential_rent    double precision,
    actual_rent             double precision,
    actual_rent_estimated   boolean NOT NULL,
    PRIMARY KEY (facility_id, month)
);
CREATE INDEX facility_months_company_idx ON facility_months (company_id, month);

-- Recomputes the given (facility, month) pairs from sync_records. Callers in concurrent
-- transactions touching one facility are serialised by a transaction-scoped advisory lock taken
-- before anything is read, so the later one sees the earlier one's committed records.
CREATE FUNCTION analytics_refresh_facility_months(p_facilities uuid[], p_months date[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_facilities IS NULL OR cardinality(p_facilities) = 0 THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('facility_months'), hashtext(f::text))
    FROM (SELECT DISTINCT unnest(p_facilities) AS f ORDER BY 1) ordered;

    DELETE FROM facility_months m
    USING unnest(p_facilities, p_months) AS p(facility_id, month)
    WHERE m.facility_id = p.facility_id AND m.month = p.month;

    INSERT INTO facility_months (
        facility_id, company_id, month, days_reported, move_ins_daily_sum, move_outs_daily_sum,
        leads_sum, last_date, last_sync_id, occupancy_pct, move_ins_mtd, move_outs_mtd,
        total_units, occupied_units, units_estimated, rentable_sqft, rentable_sqft_estimated,
        gross_potential_rent, actual_rent, actual_rent_estimated)
    SELECT p.facility_id, l.company_id, p.month, a.days, a.mi, a.mo, a.leads,
           l.snapshot_date, l.id, l.occupancy_pct, l.move_ins_mtd, l.move_outs_mtd,
           l.total_units, l.occupied_units, l.units_estimated, l.rentable_sqft,
           l.rentable_sqft_estimated, l.gross_potential_rent, l.actual_rent, l.actual_rent_estimated
    FROM (SELECT DISTINCT facility_id, month FROM unnest(p_facilities, p_months) AS u(facility_id, month)) p
    CROSS JOIN LATERAL (
        SELECT count(*)::int AS days, sum(s.move_ins_daily)::int AS mi,
               sum(s.move_outs_daily)::int AS mo, sum(s.leads_total)::int AS leads
        FROM sync_records s
        WHERE s.facility_id = p.facility_id
          AND s.snapshot_date >= p.month AND s.snapshot_date < (p.month + 31)
          AND date_trunc('month', s.snapshot_date::timestamp)::date = p.month
    ) a
    CROSS JOIN LATERAL (
        SELECT s.* FROM sync_records s
        WHERE s.facility_id = p.facility_id
          AND s.snapshot_date >= p.month AND s.snapshot_date < (p.month + 31)
          AND date_trunc('month', s.snapshot_date::timestamp)::date = p.month
        ORDER BY s.snapshot_date DESC LIMIT 1
    ) l;
END $$;

CREATE FUNCTION sync_records_refresh_months() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM analytics_refresh_facility_months(array_agg(c.facility_id), array_agg(c.month))
        FROM (SELECT DISTINCT facility_id, date_trunc('month', snapshot_date::timestamp)::date AS month
              FROM changed_new) c;
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM analytics_refresh_facility_months(array_agg(c.facility_id), array_agg(c.month))
        FROM (SELECT facility_id, date_trunc('month', snapshot_date::timestamp)::date AS month FROM changed_new
              UNION
              SELECT facility_id, date_trunc('month', snapshot_date::timestamp)::date FROM changed_old) c;
    ELSE
        PERFORM analytics_refresh_facility_months(array_agg(c.facility_id), array_agg(c.month))
        FROM (SELECT DISTINCT facility_id, date_trunc('month', snapshot_date::timestamp)::date AS month
              FROM changed_old) c;
    END IF;
    RETURN NULL;
END $$;

-- Statement-level, so a bulk insert of a facility's history recomputes each month once.
CREATE TRIGGER sync_records_months_ins AFTER INSERT ON sync_records
    REFERENCING NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION sync_records_refresh_months();
CREATE TRIGGER sync_records_months_upd AFTER UPDATE ON sync_records
    REFERENCING NEW TABLE AS changed_new OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION sync_records_refresh_months();
CREATE TRIGGER sync_records_months_del AFTER DELETE ON sync_records
    REFERENCING OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION sync_records_refresh_months();

-- Records that existed before this migration.
SELECT analytics_refresh_facility_months(array_agg(facility_id), array_agg(month))
FROM (SELECT DISTINCT facility_id, date_trunc('month', snapshot_date::timestamp)::date AS month
      FROM sync_records) existing;

-- The latest observation of each competitor per facility and size (names compared trimmed and
-- case-insensitively, rates above 0), kept in step with competitor_rates by triggers. The
-- competitor band counts only each competitor's most recent observation, so reading these rows
-- gives the same band as reading every observation, without scanning months of daily scrapes.
CREATE TABLE competitor_latest (
    facility_id    uuid NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    size           text NOT NULL,
    competitor_key text NOT NULL,
    competitor     text NOT NULL,
    rate           double precision NOT NULL,
    promo          text,
    observed_on    date NOT NULL,
    PRIMARY KEY (facility_id, size, competitor_key)
);
-- Reads go through competitor_rates_facility_size_idx (facility_id, size, observed_on DESC).

CREATE FUNCTION analytics_refresh_competitor_latest(p_facilities uuid[], p_sizes text[], p_keys text[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_facilities IS NULL OR cardinality(p_facilities) = 0 THEN
        RETURN;
    END IF;
    -- The same per-facility lock as the monthly rollup (already held when a sync stores both).
    PERFORM pg_advisory_xact_lock(hashtext('facility_months'), hashtext(f::text))
    FROM (SELECT DISTINCT unnest(p_facilities) AS f ORDER BY 1) ordered;

    DELETE FROM competitor_latest c
    USING unnest(p_facilities, p_sizes, p_keys) AS k(facility_id, size, competitor_key)
    WHERE c.facility_id = k.facility_id AND c.size = k.size AND c.competitor_key = k.competitor_key;

    INSERT INTO competitor_latest (facility_id, size, competitor_key, competitor, rate, promo, observed_on)
    SELECT k.facility_id, k.size, k.competitor_key, r.competitor, r.rate, r.promo, r.observed_on
    FROM (SELECT DISTINCT facility_id, size, competitor_key
          FROM unnest(p_facilities, p_sizes, p_keys) AS u(facility_id, size, competitor_key)) k
    CROSS JOIN LATERAL (
        SELECT cr.competitor, cr.rate, cr.promo, cr.observed_on FROM competitor_rates cr
        WHERE cr.facility_id = k.facility_id AND cr.size = k.size
          AND lower(btrim(cr.competitor)) = k.competitor_key AND cr.rate > 0
        ORDER BY cr.observed_on DESC, cr.id DESC LIMIT 1
    ) r;
END $$;

CREATE FUNCTION competitor_rates_refresh_latest() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM analytics_refresh_competitor_latest(array_agg(c.facility_id), array_agg(c.size), array_agg(c.k))
        FROM (SELECT DISTINCT facility_id, size, lower(btrim(competitor)) AS k FROM changed_new) c;
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM analytics_refresh_competitor_latest(array_agg(c.facility_id), array_agg(c.size), array_agg(c.k))
        FROM (SELECT facility_id, size, lower(btrim(competitor)) AS k FROM changed_new
              UNION
              SELECT facility_id, size, lower(btrim(competitor)) FROM changed_old) c;
    ELSE
        PERFORM analytics_refresh_competitor_latest(array_agg(c.facility_id), array_agg(c.size), array_agg(c.k))
        FROM (SELECT DISTINCT facility_id, size, lower(btrim(competitor)) AS k FROM changed_old) c;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER competitor_rates_latest_ins AFTER INSERT ON competitor_rates
    REFERENCING NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION competitor_rates_refresh_latest();
CREATE TRIGGER competitor_rates_latest_upd AFTER UPDATE ON competitor_rates
    REFERENCING NEW TABLE AS changed_new OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION competitor_rates_refresh_latest();
CREATE TRIGGER competitor_rates_latest_del AFTER DELETE ON competitor_rates
    REFERENCING OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION competitor_rates_refresh_latest();

SELECT analytics_refresh_competitor_latest(array_agg(facility_id), array_agg(size), array_agg(k))
FROM (SELECT DISTINCT facility_id, size, lower(btrim(competitor)) AS k FROM competitor_rates) existing;

-- Daily totals per company for the company-wide lead funnel (30 or 90 days of every facility
-- would otherwise sum up to 450,000 lead rows per request). Kept by statement-level triggers as
-- deltas: an insert adds, a delete subtracts, an update does both, whatever deletes the rows
-- (a re-sent day, a deleted facility). Writers of one company and date are serialised by a
-- transaction-scoped advisory lock taken in (company, date) order, so concurrent syncs can
-- neither lose an update nor deadlock on these rows.
-- sync_leads carries its record's company so a delete can be attributed after the record is gone.
ALTER TABLE sync_leads ADD COLUMN company_id uuid;
UPDATE sync_leads l SET company_id = s.company_id FROM sync_records s WHERE s.id = l.sync_id;

CREATE FUNCTION sync_leads_set_company() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.company_id IS NULL THEN
        SELECT s.company_id INTO NEW.company_id FROM sync_records s WHERE s.id = NEW.sync_id;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER sync_leads_company BEFORE INSERT ON sync_leads
    FOR EACH ROW EXECUTE FUNCTION sync_leads_set_company();

CREATE TABLE company_days (
    company_id              uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    snapshot_date           date NOT NULL,
    snapshots               bigint NOT NULL,
    snapshots_with_move_ins bigint NOT NULL,
    move_ins_daily_sum      bigint NOT NULL,
    PRIMARY KEY (company_id, snapshot_date)
);

CREATE TABLE company_lead_days (
    company_id    uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    snapshot_date date NOT NULL,
    channel       text NOT NULL,
    leads         bigint NOT NULL,
    PRIMARY KEY (company_id, snapshot_date, channel)
);

-- Applies signed deltas (one row per changed source row) to company_days.
CREATE FUNCTION analytics_company_days_apply(d jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('company_days'), hashtext(k.c || k.d))
    FROM (SELECT DISTINCT x->>'c' AS c, x->>'d' AS d FROM jsonb_array_elements(d) x ORDER BY 1, 2) k;
    INSERT INTO company_days AS t (company_id, snapshot_date, snapshots, snapshots_with_move_ins, move_ins_daily_sum)
    SELECT (x->>'c')::uuid, (x->>'d')::date, sum((x->>'n')::bigint), sum((x->>'w')::bigint), sum((x->>'m')::bigint)
    FROM jsonb_array_elements(d) x
    WHERE EXISTS (SELECT 1 FROM companies co WHERE co.id = (x->>'c')::uuid)
    GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (company_id, snapshot_date) DO UPDATE SET
        snapshots = t.snapshots + EXCLUDED.snapshots,
        snapshots_with_move_ins = t.snapshots_with_move_ins + EXCLUDED.snapshots_with_move_ins,
        move_ins_daily_sum = t.move_ins_daily_sum + EXCLUDED.move_ins_daily_sum;
END $$;

CREATE FUNCTION sync_records_company_days() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    d jsonb;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT jsonb_agg(jsonb_build_object('c', company_id, 'd', snapshot_date, 'n', 1,
                   'w', (move_ins_daily IS NOT NULL)::int, 'm', coalesce(move_ins_daily, 0)))
        INTO d FROM changed_new;
    ELSIF TG_OP = 'UPDATE' THEN
        SELECT jsonb_agg(x) INTO d FROM (
            SELECT jsonb_build_object('c', company_id, 'd', snapshot_date, 'n', 1,
                   'w', (move_ins_daily IS NOT NULL)::int, 'm', coalesce(move_ins_daily, 0)) AS x FROM changed_new
            UNION ALL
            SELECT jsonb_build_object('c', company_id, 'd', snapshot_date, 'n', -1,
                   'w', -(move_ins_daily IS NOT NULL)::int, 'm', -coalesce(move_ins_daily, 0)) FROM changed_old) u;
    ELSE
        SELECT jsonb_agg(jsonb_build_object('c', company_id, 'd', snapshot_date, 'n', -1,
                   'w', -(move_ins_daily IS NOT NULL)::int, 'm', -coalesce(move_ins_daily, 0)))
        INTO d FROM changed_old;
    END IF;
    IF d IS NOT NULL THEN
        PERFORM analytics_company_days_apply(d);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER sync_records_company_days_ins AFTER INSERT ON sync_records
    REFERENCING NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION sync_records_company_days();
CREATE TRIGGER sync_records_company_days_upd AFTER UPDATE ON sync_records
    REFERENCING NEW TABLE AS changed_new OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION sync_records_company_days();
CREATE TRIGGER sync_records_company_days_del AFTER DELETE ON sync_records
    REFERENCING OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION sync_records_company_days();

CREATE FUNCTION sync_leads_company_lead_days() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pg_advisory_xact_lock(hashtext('company_days'), hashtext(k.c || k.d))
        FROM (SELECT DISTINCT company_id::text AS c, snapshot_date::text AS d FROM changed_new ORDER BY 1, 2) k;
        INSERT INTO company_lead_days AS t (company_id, snapshot_date, channel, leads)
        SELECT company_id, snapshot_date, channel, sum(lead_count) FROM changed_new n
        WHERE company_id IS NOT NULL AND EXISTS (SELECT 1 FROM companies co WHERE co.id = n.company_id)
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (company_id, snapshot_date, channel) DO UPDATE SET leads = t.leads + EXCLUDED.leads;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM pg_advisory_xact_lock(hashtext('company_days'), hashtext(k.c || k.d))
        FROM (SELECT DISTINCT company_id::text AS c, snapshot_date::text AS d FROM changed_old ORDER BY 1, 2) k;
        UPDATE company_lead_days t SET leads = t.leads - o.leads
        FROM (SELECT company_id, snapshot_date, channel, sum(lead_count) AS leads FROM changed_old
              WHERE company_id IS NOT NULL GROUP BY 1, 2, 3) o
        WHERE t.company_id = o.company_id AND t.snapshot_date = o.snapshot_date AND t.channel = o.channel;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER sync_leads_days_ins AFTER INSERT ON sync_leads
    REFERENCING NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION sync_leads_company_lead_days();
CREATE TRIGGER sync_leads_days_upd AFTER UPDATE ON sync_leads
    REFERENCING NEW TABLE AS changed_new OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION sync_leads_company_lead_days();
CREATE TRIGGER sync_leads_days_del AFTER DELETE ON sync_leads
    REFERENCING OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION sync_leads_company_lead_days();

-- Records that existed before this migration.
INSERT INTO company_days (company_id, snapshot_date, snapshots, snapshots_with_move_ins, move_ins_daily_sum)
SELECT company_id, snapshot_date, count(*), count(move_ins_daily), coalesce(sum(move_ins_daily), 0)
FROM sync_records GROUP BY 1, 2;
INSERT INTO company_lead_days (company_id, snapshot_date, channel, leads)
SELECT company_id, snapshot_date, channel, sum(lead_count) FROM sync_leads
WHERE company_id IS NOT NULL GROUP BY 1, 2, 3;
