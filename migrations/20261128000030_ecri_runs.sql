-- ECRI as stored work: the stay model's company evidence is fitted once per company in a job of
-- its own (`ecri_fit`), and each facility's suggestions are computed by a job (`ecri_run`) and
-- stored; reads serve the latest stored run and never recompute.
ALTER TABLE job_runs DROP CONSTRAINT job_runs_kind_check;
ALTER TABLE job_runs ADD CONSTRAINT job_runs_kind_check
    CHECK (kind IN ('ingest', 'pricing_run', 'webhook_delivery', 'crm_pull', 'ecri_run', 'ecri_fit'));
-- "Is a run already waiting for this facility?" is asked after every sync.
CREATE INDEX job_runs_waiting_facility ON job_runs (kind, (payload->>'facility_id'))
    WHERE status = 'queued';

-- One fit of the company's evidence: the outcomes of every facility's past increases and of the
-- tenants left alone, pooled in cells (`domain::ecri::evidence::cell`), as
-- [[increase, premium, tenure bits, past increases], tenants, moved_out] triples.
CREATE TABLE ecri_fits (
    id             uuid        PRIMARY KEY,
    company_id     uuid        NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    fitted_at      timestamptz NOT NULL DEFAULT now(),
    engine_version text        NOT NULL,
    facilities     integer     NOT NULL,
    cells          jsonb       NOT NULL
);
CREATE INDEX ecri_fits_company ON ecri_fits (company_id, fitted_at DESC);

-- Each facility's own cells in a fit: a run subtracts them from the pooled cells, so a
-- facility's model never counts its own outcomes twice (once as its own, once as the company's).
CREATE TABLE ecri_fit_facilities (
    fit_id      uuid  NOT NULL REFERENCES ecri_fits (id) ON DELETE CASCADE,
    facility_id uuid  NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    cells       jsonb NOT NULL,
    PRIMARY KEY (fit_id, facility_id)
);

-- One stored ECRI run of a facility: its totals and per-size summary as columns (what reports
-- read), and the whole answer (model, markets, one line per tenant) as one compressed body.
CREATE TABLE ecri_runs (
    id                 uuid        PRIMARY KEY,
    company_id         uuid        NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    facility_id        uuid        NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    created_at         timestamptz NOT NULL DEFAULT now(),
    engine_version     text        NOT NULL,
    trigger            text        NOT NULL
                                   CHECK (trigger IN ('sync', 'nightly', 'settings', 'batch', 'on_demand')),
    fit_id             uuid        REFERENCES ecri_fits (id) ON DELETE SET NULL,
    fitted_at          timestamptz,
    -- What it was built on: the roll in force and the latest snapshot's date.
    roll_date          date,
    snapshot_date      date,
    basis              text        CHECK (basis IN ('rent_roll', 'cohorts')),
    -- Why there are no suggestions, when there are none.
    reason             text,
    tenants            bigint      NOT NULL,
    tenants_affected   bigint      NOT NULL,
    monthly_uplift     float8      NOT NULL,
    expected_gain      float8      NOT NULL,
    expected_move_outs float8      NOT NULL,
    sizes              jsonb       NOT NULL,
    body               jsonb       COMPRESSION lz4 NOT NULL
);
CREATE INDEX ecri_runs_facility ON ecri_runs (facility_id, created_at DESC);
CREATE INDEX ecri_runs_company ON ecri_runs (company_id, created_at);

-- The run a batch was drafted from.
ALTER TABLE ecri_batches ADD COLUMN ecri_run_id uuid REFERENCES ecri_runs (id) ON DELETE SET NULL;
