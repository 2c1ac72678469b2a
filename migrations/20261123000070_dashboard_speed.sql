-- Dashboard speed on large portfolios (1,000 facilities x 730 days).
--
-- A run's raise / hold / lower counts as stored columns, so the portfolio page's latest run per
-- facility is read without expanding each run's recommendations (about 10 KB of jsonb each,
-- detoasted and unnested per facility before). Generated from the recommendations, so every
-- run is counted the same way whatever wrote it, and existing runs are counted here.
CREATE FUNCTION recommendation_action_count(recs jsonb, action text) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (SELECT count(*)::integer FROM jsonb_array_elements(recs) e WHERE e->>'action' = action);

ALTER TABLE recommendation_runs
    ADD COLUMN raise_count integer NOT NULL
        GENERATED ALWAYS AS (recommendation_action_count(recommendations, 'raise')) STORED,
    ADD COLUMN hold_count integer NOT NULL
        GENERATED ALWAYS AS (recommendation_action_count(recommendations, 'hold')) STORED,
    ADD COLUMN lower_count integer NOT NULL
        GENERATED ALWAYS AS (recommendation_action_count(recommendations, 'lower')) STORED;

-- The overview's "sync records received this month": an index-only count instead of a scan of
-- every record of the company.
CREATE INDEX sync_records_company_created_idx ON sync_records (company_id, created_at);
