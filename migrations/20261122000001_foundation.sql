-- Foundation schema: tenancy (companies, users, API keys), facilities and the daily sync records.
--
-- Layout of a sync record, chosen so that analytics over 1,000 facilities x 2 years stay fast:
-- * sync_records holds one row per facility and date with every facility-level scalar as a column,
--   plus aggregates derived at ingest (unit counts, rentable area, gross potential and actual rent),
--   so portfolio, trend and revenue queries read one narrow row per facility-day.
-- * Per-size data that analytics slice over time (street rate, occupancy, move-ins) lives in
--   sync_unit_types; daily lead counts per channel in sync_leads; competitor observations in
--   competitor_rates (which the competitor-rates resource also writes to).
-- * Promotions and tenant rents are only ever read for the latest snapshot, so they stay as
--   normalised JSON on the record; the request body as received is kept in raw_payload for audit.

CREATE TABLE companies (
    id                 uuid PRIMARY KEY,
    name               text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    plan               text NOT NULL DEFAULT 'standard',
    subscription_state text NOT NULL DEFAULT 'trialing'
        CHECK (subscription_state IN ('trialing', 'active', 'past_due', 'canceled', 'expired')),
    trial_ends_at      timestamptz,
    time_zone          text NOT NULL DEFAULT 'UTC',
    created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id            uuid PRIMARY KEY,
    company_id    uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    email         text NOT NULL,
    password_hash text,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
CREATE INDEX users_company_idx ON users (company_id);

CREATE TABLE password_reset_tokens (
    id         uuid PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash bytea NOT NULL UNIQUE,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Only a keyed hash of each key is stored; `prefix` identifies a key in lists.
CREATE TABLE api_keys (
    id           uuid PRIMARY KEY,
    company_id   uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name         text NOT NULL,
    prefix       text NOT NULL,
    key_hash     bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_keys_company_idx ON api_keys (company_id, created_at);

CREATE TABLE facilities (
    id            uuid PRIMARY KEY,
    company_id    uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    external_id   text,
    source_system text,
    name          text NOT NULL,
    address       text,
    website_url   text,
    rentable_sqft double precision,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
-- Matching keys of the sync: (source_system, external_id) and the case-folded name are unique per
-- company, which also makes concurrent creation of the same new facility safe.
CREATE UNIQUE INDEX facilities_external_key
    ON facilities (company_id, coalesce(source_system, ''), external_id)
    WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX facilities_name_key ON facilities (company_id, lower(name));

CREATE TABLE sync_records (
    id                     uuid PRIMARY KEY,
    company_id             uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    facility_id            uuid NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    snapshot_date          date NOT NULL,
    source                 text NOT NULL CHECK (source IN ('push', 'upload', 'crm')),
    occupancy_pct          double precision,
    move_ins_daily         integer,
    move_ins_mtd           integer,
    move_ins_target_monthly integer,
    move_outs_daily        integer,
    move_outs_mtd          integer,
    -- Derived at ingest (see docs/data-model.md for the formulas and estimates).
    unit_type_count        integer NOT NULL,
    total_units            integer,
    occupied_units         integer,
    units_estimated        boolean NOT NULL,
    rentable_sqft          double precision,
    rentable_sqft_estimated boolean NOT NULL,
    gross_potential_rent   double precision,
    actual_rent            double precision,
    actual_rent_estimated  boolean NOT NULL,
    leads_total            integer,
    promotions             jsonb NOT NULL,
    tenant_rents           jsonb NOT NULL,
    raw_payload            jsonb NOT NULL,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now(),
    UNIQUE (facility_id, snapshot_date)
);
CREATE INDEX sync_records_company_date_idx ON sync_records (company_id, snapshot_date);

CREATE TABLE sync_unit_types (
    sync_id        uuid NOT NULL REFERENCES sync_records (id) ON DELETE CASCADE,
    facility_id    uuid NOT NULL,
    snapshot_date  date NOT NULL,
    size           text NOT NULL,
    width_ft       double precision NOT NULL,
    depth_ft       double precision NOT NULL,
    tier           text NOT NULL,
    street_rate    double precision NOT NULL,
    occupancy_pct  double precision,
    move_ins_mtd   integer,
    total_units    integer,
    occupied_units integer,
    PRIMARY KEY (sync_id, size, tier)
);
CREATE INDEX sync_unit_types_facility_idx ON sync_unit_types (facility_id, size, snapshot_date);

CREATE TABLE sync_leads (
    sync_id       uuid NOT NULL REFERENCES sync_records (id) ON DELETE CASCADE,
    facility_id   uuid NOT NULL,
    snapshot_date date NOT NULL,
    channel       text NOT NULL,
    lead_count    integer NOT NULL,
    PRIMARY KEY (sync_id, channel)
);
CREATE INDEX sync_leads_facility_idx ON sync_leads (facility_id, snapshot_date);

-- Competitor observations from every intake path; a sync's rows go with its record.
CREATE TABLE competitor_rates (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    company_id  uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    facility_id uuid NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    sync_id     uuid REFERENCES sync_records (id) ON DELETE CASCADE,
    observed_on date NOT NULL,
    competitor  text NOT NULL,
    size        text NOT NULL,
    rate        double precision NOT NULL,
    promo       text,
    source_url  text,
    source      text NOT NULL CHECK (source IN ('sync', 'api', 'upload', 'crm')),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX competitor_rates_facility_idx ON competitor_rates (facility_id, observed_on DESC);
CREATE INDEX competitor_rates_sync_idx ON competitor_rates (sync_id) WHERE sync_id IS NOT NULL;
