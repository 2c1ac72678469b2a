-- Actual rent on partial tenant rents, and the rent gap of the tenants in place.
--
-- 1. `occupied_potential_rent`: the street rent of the occupied units (sum of occupied units x
--    street rate per unit type), so the rent gap can mean street against the in-place rent of
--    the tenants in place (as the ECRI report defines it), apart from the revenue gap (gross
--    potential rent less actual rent, which includes vacancy). Computed here for the records
--    already stored, from their unit types; null where a type's occupied units are unknown.
-- 2. `actual_rent_coverage_pct`: the share of occupied units whose rent was sent (tenant rents
--    or a rent roll), the rest being estimated. Derived at ingest from now on; null for records
--    stored before (their coverage was not recorded: a re-sent day fills it in).
ALTER TABLE sync_records
    ADD COLUMN occupied_potential_rent double precision,
    ADD COLUMN actual_rent_coverage_pct double precision;
ALTER TABLE facility_months
    ADD COLUMN occupied_potential_rent double precision,
    ADD COLUMN actual_rent_coverage_pct double precision;

UPDATE sync_records s
SET occupied_potential_rent = t.potential
FROM (
    SELECT sync_id,
           CASE WHEN bool_and(occupied_units IS NOT NULL)
                THEN sum(occupied_units * street_rate) END AS potential
    FROM sync_unit_types
    GROUP BY sync_id
) t
WHERE t.sync_id = s.id;

CREATE OR REPLACE FUNCTION analytics_refresh_facility_months(p_facilities uuid[], p_months date[])
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
        gross_potential_rent, actual_rent, actual_rent_estimated, occupied_potential_rent,
        actual_rent_coverage_pct)
    SELECT p.facility_id, l.company_id, p.month, a.days, a.mi, a.mo, a.leads,
           l.snapshot_date, l.id, l.occupancy_pct, l.move_ins_mtd, l.move_outs_mtd,
           l.total_units, l.occupied_units, l.units_estimated, l.rentable_sqft,
           l.rentable_sqft_estimated, l.gross_potential_rent, l.actual_rent, l.actual_rent_estimated,
           l.occupied_potential_rent, l.actual_rent_coverage_pct
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

UPDATE facility_months m
SET occupied_potential_rent = s.occupied_potential_rent
FROM sync_records s
WHERE s.id = m.last_sync_id;
