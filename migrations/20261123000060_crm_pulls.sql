-- CRM pulls as rows of their own: each pull (on demand, backfill or scheduled) with its dates,
-- status, timing and what it stored. The source keeps its last_pull_* columns as a summary.
CREATE TABLE crm_pulls (
    id                 uuid PRIMARY KEY,
    company_id         uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    source_id          uuid NOT NULL REFERENCES data_sources (id) ON DELETE CASCADE,
    -- The crm_pull job running it; a retried job keeps its one row.
    job_id             uuid NOT NULL UNIQUE,
    trigger            text NOT NULL,
    -- Null until the pull starts when no date was asked (the default date depends on the
    -- company's time zone at run time).
    date_from          date,
    date_to            date,
    status             text NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'skipped')),
    requested_at       timestamptz NOT NULL DEFAULT now(),
    started_at         timestamptz,
    finished_at        timestamptz,
    snapshots_created  integer NOT NULL DEFAULT 0,
    snapshots_updated  integer NOT NULL DEFAULT 0,
    facilities_created integer NOT NULL DEFAULT 0,
    facilities_matched integer NOT NULL DEFAULT 0,
    warnings           jsonb NOT NULL DEFAULT '[]',
    error              text,
    CHECK (date_from IS NULL OR date_from <= date_to)
);
CREATE INDEX crm_pulls_source_idx ON crm_pulls (source_id, requested_at DESC);

-- The CRM's own account (company) id, for providers whose collections hang under it.
ALTER TABLE data_sources ADD COLUMN account_id text;
