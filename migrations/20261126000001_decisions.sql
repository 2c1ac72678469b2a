-- Decisions: ECRI batches a revenue manager approves and sends, street rates accepted,
-- overridden or rejected, and one log of every decision with who made it.

-- A webhook delivery is about a subject (a recommendation run, an ECRI batch, a set of approved
-- rates); one delivery per subscription, event and subject.
ALTER TABLE webhook_deliveries RENAME COLUMN recommendation_id TO subject_id;

-- An ECRI batch of a facility: its lines are frozen when it is created (the suggestions of the
-- roll or snapshot of `as_of`) and may be edited while it is a draft.
CREATE TABLE ecri_batches (
    id             uuid        PRIMARY KEY,
    company_id     uuid        NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    facility_id    uuid        NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    status         text        NOT NULL DEFAULT 'draft'
                               CHECK (status IN ('draft', 'approved', 'cancelled')),
    basis          text        NOT NULL CHECK (basis IN ('rent_roll', 'cohorts')),
    as_of          date        NOT NULL,
    notice_days    integer     NOT NULL CHECK (notice_days BETWEEN 0 AND 365),
    horizon_months float8      NOT NULL,
    -- The share (%) of eligible tenants held out as a control, as set when it was created.
    holdout_pct    float8      NOT NULL DEFAULT 0,
    -- Each actor: {"type": "user" | "api_key" | "system", "id": ..., "name": ...}.
    created_by     jsonb       NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    approved_by    jsonb,
    approved_at    timestamptz,
    notice_date    date,
    effective_date date,
    cancelled_by   jsonb,
    cancelled_at   timestamptz,
    CHECK (status <> 'approved' OR (approved_at IS NOT NULL AND notice_date IS NOT NULL
                                    AND effective_date IS NOT NULL)),
    CHECK (status <> 'cancelled' OR cancelled_at IS NOT NULL)
);
CREATE INDEX ecri_batches_facility ON ecri_batches (facility_id, created_at DESC);
CREATE INDEX ecri_batches_company ON ecri_batches (company_id, created_at DESC);

CREATE TABLE ecri_batch_lines (
    batch_id                   uuid    NOT NULL REFERENCES ecri_batches (id) ON DELETE CASCADE,
    line_no                    integer NOT NULL CHECK (line_no > 0),
    -- Null for a cohort line.
    tenant_id                  text,
    customer_id                text,
    size                       text    NOT NULL,
    months_since_last_increase float8,
    tenant_count               integer NOT NULL CHECK (tenant_count > 0),
    current_rent               float8  NOT NULL CHECK (current_rent > 0),
    -- The engine's suggestion when the batch was created; `new_rent` is what will be sent.
    suggested_rent             float8  NOT NULL,
    new_rent                   float8  NOT NULL,
    stay_probability           float8  NOT NULL,
    expected_gain              float8  NOT NULL,
    edited                     boolean NOT NULL DEFAULT false,
    excluded                   boolean NOT NULL DEFAULT false,
    reasons                    jsonb   NOT NULL DEFAULT '[]'::jsonb,
    PRIMARY KEY (batch_id, line_no)
);
CREATE INDEX ecri_batch_lines_tenant ON ecri_batch_lines (tenant_id) WHERE tenant_id IS NOT NULL;

-- The tenants drawn at random and left out of a batch as its control group.
CREATE TABLE ecri_batch_controls (
    batch_id       uuid   NOT NULL REFERENCES ecri_batches (id) ON DELETE CASCADE,
    tenant_id      text   NOT NULL,
    size           text   NOT NULL,
    current_rent   float8 NOT NULL,
    suggested_rent float8 NOT NULL,
    PRIMARY KEY (batch_id, tenant_id)
);

-- A street-rate decision on one unit type of a recommendation run. The latest decision of a
-- unit type is the one in force; an approved rate (accept, override) waits until a snapshot
-- reports it.
CREATE TABLE rate_decisions (
    id               uuid        PRIMARY KEY,
    company_id       uuid        NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    facility_id      uuid        NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    run_id           uuid        NOT NULL REFERENCES recommendation_runs (id) ON DELETE CASCADE,
    size             text        NOT NULL,
    tier             text        NOT NULL DEFAULT '',
    action           text        NOT NULL CHECK (action IN ('accept', 'override', 'reject')),
    -- The rate approved (null for a rejection), the rate in force the run started from, and
    -- the run's recommendation.
    rate             float8      CHECK (rate IS NULL OR rate > 0),
    previous_rate    float8      NOT NULL,
    recommended_rate float8      NOT NULL,
    reason           text,
    -- An override past a guardrail: the guardrails it breaks.
    forced           boolean     NOT NULL DEFAULT false,
    broken           text[]      NOT NULL DEFAULT '{}',
    automatic        boolean     NOT NULL DEFAULT false,
    actor            jsonb       NOT NULL,
    decided_at       timestamptz NOT NULL DEFAULT now(),
    CHECK ((action = 'reject') = (rate IS NULL))
);
CREATE INDEX rate_decisions_unit ON rate_decisions (facility_id, size, tier, decided_at DESC);
CREATE INDEX rate_decisions_run ON rate_decisions (run_id);

-- Every decision, as the facility's history lists it.
CREATE TABLE decision_log (
    id          uuid        PRIMARY KEY,
    company_id  uuid        NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    facility_id uuid        NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    -- ecri_batch.created | ecri_batch.edited | ecri_batch.approved | ecri_batch.cancelled |
    -- rate.accepted | rate.overridden | rate.rejected
    action      text        NOT NULL,
    -- The batch or the rate decision.
    subject_id  uuid        NOT NULL,
    summary     text        NOT NULL,
    detail      jsonb       NOT NULL DEFAULT '{}'::jsonb,
    actor       jsonb       NOT NULL,
    at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX decision_log_facility ON decision_log (facility_id, at DESC);
