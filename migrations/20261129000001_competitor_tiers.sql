-- Competitor rates may name the tier they were seen for (climate controlled, drive-up...), when
-- the source knows it: the pricing engine bands each tier of a size against its own competitor
-- set. NULL is a rate of unknown tier, as every rate stored before this migration is.
ALTER TABLE competitor_rates ADD COLUMN tier text
    CHECK (tier IS NULL OR length(btrim(tier)) BETWEEN 1 AND 100);

-- A competitor may price two tiers of one size on the same day: the upsert key of rates added
-- through the API or an upload takes the tier too (case-insensitive, '' for an unknown tier,
-- so rates without a tier keep the key they had).
CREATE UNIQUE INDEX competitor_rates_observation_tier_key
    ON competitor_rates (facility_id, lower(competitor), size, lower(coalesce(tier, '')), observed_on)
    WHERE sync_id IS NULL;
DROP INDEX competitor_rates_observation_key;
