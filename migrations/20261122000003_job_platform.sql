-- The job platform. Every durable piece of work is first a row here, written in the same
-- transaction as the data that causes it; Redis (apalis) only carries wake-ups with the row id.
-- A handler claims the row (status queued -> running with a lease), does the work and records
-- the outcome in one transaction, so a job run twice does its work once.
CREATE TABLE job_runs (
    id               uuid PRIMARY KEY,
    company_id       uuid REFERENCES companies (id) ON DELETE CASCADE,
    kind             text NOT NULL CHECK (kind IN ('ingest', 'pricing_run', 'webhook_delivery', 'crm_pull')),
    payload          jsonb NOT NULL,
    status           text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    max_attempts     integer NOT NULL DEFAULT 5,
    run_at           timestamptz NOT NULL DEFAULT now(),
    -- Last time the row was pushed to Redis; the sweeper pushes again when it has waited too long.
    enqueued_at      timestamptz,
    claimed_by       text,
    claimed_at       timestamptz,
    lease_expires_at timestamptz,
    finished_at      timestamptz,
    last_error       text,
    result           jsonb,
    -- Makes a job unique where it must be (one CRM pull per source and cron tick).
    dedupe_key       text UNIQUE,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX job_runs_due_idx ON job_runs (run_at) WHERE status = 'queued';
CREATE INDEX job_runs_lease_idx ON job_runs (lease_expires_at) WHERE status = 'running';
CREATE INDEX job_runs_company_idx ON job_runs (company_id, status);
CREATE INDEX job_runs_finished_idx ON job_runs (finished_at) WHERE status IN ('succeeded', 'failed');

-- Lease-up mode per facility (hysteresis: enter below 60 %, leave at or above 70 %), kept as the
-- history of mode changes in snapshot-date order; the current mode is the latest event's.
CREATE TABLE lease_up_events (
    facility_id   uuid NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    company_id    uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    snapshot_date date NOT NULL,
    from_mode     text NOT NULL CHECK (from_mode IN ('lease_up', 'stabilized')),
    to_mode       text NOT NULL CHECK (to_mode IN ('lease_up', 'stabilized')),
    occupancy_pct double precision NOT NULL,
    recorded_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (facility_id, snapshot_date)
);
ALTER TABLE facilities ADD COLUMN mode text NOT NULL DEFAULT 'stabilized'
    CHECK (mode IN ('lease_up', 'stabilized'));

-- Connected CRMs pulled on a schedule (cron with seconds, in the company's time zone).
CREATE TABLE data_sources (
    id                 uuid PRIMARY KEY,
    company_id         uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    provider           text NOT NULL,
    name               text NOT NULL,
    base_url           text NOT NULL,
    credentials_sealed bytea NOT NULL,
    credential_hint    text NOT NULL,
    schedule           text NOT NULL,
    enabled            boolean NOT NULL DEFAULT true,
    last_tick_at       timestamptz,
    last_pull_at       timestamptz,
    last_pull_status   text,
    last_error         text,
    created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX data_sources_company_idx ON data_sources (company_id);
