-- Rent rolls held back: a roll that would move out more than the facility's share of the
-- tenants in force (one buggy CRM night sending `tenants: []`) is kept here instead of being
-- applied, until someone confirms it or a later roll within the share replaces it. One held roll
-- per facility: the latest.

CREATE TABLE held_rolls (
    facility_id  uuid        PRIMARY KEY REFERENCES facilities (id) ON DELETE CASCADE,
    company_id   uuid        NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    roll_date    date        NOT NULL,
    -- The roll as sent, tenant by tenant (the sync's `tenants`, already read whole).
    tenants      jsonb       NOT NULL,
    tenant_count integer     NOT NULL CHECK (tenant_count >= 0),
    -- Tenants in force when it was held, and how many of them it would have moved out.
    in_force     integer     NOT NULL CHECK (in_force >= 0),
    moving_out   integer     NOT NULL CHECK (moving_out >= 0),
    -- The facility's share (percent) in force when it was held.
    hold_pct     float8      NOT NULL,
    held_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX held_rolls_company ON held_rolls (company_id);

-- The share of the tenants in force a roll may move out before it is held (percent; 100 never
-- holds). A constant default adds the column without rewriting the table.
ALTER TABLE facilities
    ADD COLUMN move_out_hold_pct float8 NOT NULL DEFAULT 20
        CHECK (move_out_hold_pct >= 0 AND move_out_hold_pct <= 100);
