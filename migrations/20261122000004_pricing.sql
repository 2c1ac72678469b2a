-- Pricing: per-facility engine settings, stored recommendation runs, and competitor rates added
-- through the API or an upload (kept as history, one row per competitor, size and day).

-- Only the settings a facility overrides; the rest are the engine's documented defaults.
ALTER TABLE facilities ADD COLUMN pricing_settings jsonb NOT NULL DEFAULT '{}'::jsonb;

CREATE TABLE recommendation_runs (
    id              uuid PRIMARY KEY,
    company_id      uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    facility_id     uuid NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    generated_at    timestamptz NOT NULL,
    engine_version  text NOT NULL,
    -- The snapshot the run rests on.
    snapshot_date   date NOT NULL,
    -- What asked for it: a GET of the recommendations, or the pricing run after a sync.
    trigger         text NOT NULL CHECK (trigger IN ('api', 'sync')),
    mode            text NOT NULL CHECK (mode IN ('lease_up', 'stabilized')),
    per_size_count  integer NOT NULL,
    -- The settings in force (defaults with the facility's overrides) and a summary of the inputs.
    settings        jsonb NOT NULL,
    inputs          jsonb NOT NULL,
    -- One object per unit type: rates, change, action, confidence, factors, guardrails, band.
    recommendations jsonb NOT NULL
);
CREATE INDEX recommendation_runs_facility_idx ON recommendation_runs (facility_id, generated_at DESC);

-- Competitor rates from the API or an upload are upserts per competitor, size and day; rates
-- that came with a sync stay tied to that sync (replaced when the day is pushed again).
CREATE UNIQUE INDEX competitor_rates_observation_key
    ON competitor_rates (facility_id, lower(competitor), size, observed_on)
    WHERE sync_id IS NULL;
CREATE INDEX competitor_rates_facility_size_idx ON competitor_rates (facility_id, size, observed_on DESC);
