-- competitor_latest keeps each competitor's latest observation per facility, size and tier.
--
-- Since competitor rates may name their tier (20261129000001), the pricing engine bands each
-- tier of a size on the rates of that tier (or, with too few, on the size's rates converted by
-- the tier premium). The analytics that band a size from these rows (the portfolio's "above the
-- P75" flag, lease-up fill suggestions) need the same: one row per competitor and tier, not one
-- per competitor whatever its tier. The tier key is the tier as the engine compares it
-- (trimmed, lower case), '' for a rate of unknown tier: a facility whose rates name no tier
-- keeps exactly the rows it had.

ALTER TABLE competitor_latest ADD COLUMN tier_key text NOT NULL DEFAULT '';
ALTER TABLE competitor_latest ALTER COLUMN tier_key DROP DEFAULT;
-- The tier as the latest observation of that key names it (null: unknown tier).
ALTER TABLE competitor_latest ADD COLUMN tier text;
ALTER TABLE competitor_latest DROP CONSTRAINT competitor_latest_pkey;
ALTER TABLE competitor_latest ADD PRIMARY KEY (facility_id, size, competitor_key, tier_key);

-- Each tier's latest observation of a (facility, size, competitor) by one index descent per
-- tier (a skip scan over the tier keys, below). competitor_rates_latest_idx stays: the ECRI
-- outcome references read each competitor's latest observation whatever its tier through it.
CREATE INDEX competitor_rates_latest_tier_idx ON competitor_rates
    (facility_id, size, (lower(btrim(competitor))), (lower(coalesce(btrim(tier), ''))),
     observed_on DESC, id DESC)
    WHERE rate > 0;

-- Same signature, so the triggers of 20261122000006 call it unchanged: a (facility, size,
-- competitor) touched by a statement has all its tiers' rows replaced.
CREATE OR REPLACE FUNCTION analytics_refresh_competitor_latest(p_facilities uuid[], p_sizes text[], p_keys text[])
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

    INSERT INTO competitor_latest
        (facility_id, size, competitor_key, tier_key, competitor, tier, rate, promo, observed_on)
    SELECT k.facility_id, k.size, k.competitor_key, r.tier_key, r.competitor, r.tier, r.rate,
           r.promo, r.observed_on
    FROM (SELECT DISTINCT facility_id, size, competitor_key
          FROM unnest(p_facilities, p_sizes, p_keys) AS u(facility_id, size, competitor_key)) k
    CROSS JOIN LATERAL (
        -- The latest observation of the smallest tier key, then of the next larger key, and so
        -- on: one descent of competitor_rates_latest_tier_idx per tier the competitor priced.
        WITH RECURSIVE tiers AS (
            (SELECT lower(coalesce(btrim(cr.tier), '')) AS tier_key, cr.competitor, cr.tier,
                    cr.rate, cr.promo, cr.observed_on
             FROM competitor_rates cr
             WHERE cr.facility_id = k.facility_id AND cr.size = k.size
               AND lower(btrim(cr.competitor)) = k.competitor_key AND cr.rate > 0
             ORDER BY lower(coalesce(btrim(cr.tier), '')), cr.observed_on DESC, cr.id DESC
             LIMIT 1)
            UNION ALL
            SELECT n.tier_key, n.competitor, n.tier, n.rate, n.promo, n.observed_on
            FROM tiers t
            CROSS JOIN LATERAL (
                SELECT lower(coalesce(btrim(cr.tier), '')) AS tier_key, cr.competitor, cr.tier,
                       cr.rate, cr.promo, cr.observed_on
                FROM competitor_rates cr
                WHERE cr.facility_id = k.facility_id AND cr.size = k.size
                  AND lower(btrim(cr.competitor)) = k.competitor_key AND cr.rate > 0
                  AND lower(coalesce(btrim(cr.tier), '')) > t.tier_key
                ORDER BY lower(coalesce(btrim(cr.tier), '')), cr.observed_on DESC, cr.id DESC
                LIMIT 1
            ) n
        )
        SELECT tier_key, competitor, tier, rate, promo, observed_on FROM tiers
    ) r;
END $$;

-- Every row again, one per tier: rows stored before this migration took a competitor's latest
-- rate whatever its tier.
DELETE FROM competitor_latest;
SELECT analytics_refresh_competitor_latest(array_agg(facility_id), array_agg(size), array_agg(k))
FROM (SELECT DISTINCT facility_id, size, lower(btrim(competitor)) AS k FROM competitor_rates) existing;
