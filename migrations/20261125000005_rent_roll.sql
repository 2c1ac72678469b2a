-- The rent roll: each facility's tenants in place (their current state, one row per tenancy)
-- and the events that changed it (moved in, rent changed, moved out). A daily snapshot that
-- repeats an unchanged roll writes nothing here: storage grows with events, not with days.

CREATE TABLE rent_roll_tenants (
    facility_id        uuid        NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    tenant_id          text        NOT NULL,
    company_id         uuid        NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    size               text        NOT NULL,
    tier               text        NOT NULL DEFAULT '',
    rent               float8      NOT NULL CHECK (rent >= 0),
    move_in_date       date        NOT NULL,
    last_increase_date date,
    customer_id        text,
    flags              text[]      NOT NULL DEFAULT '{}',
    -- The roll's date the tenant was first seen in, and the one it was last missing from
    -- (null while in place).
    first_seen_on      date        NOT NULL,
    moved_out_on       date,
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (facility_id, tenant_id)
);

-- The tenants in place of a facility (the roll in force).
CREATE INDEX rent_roll_tenants_in_place ON rent_roll_tenants (facility_id) WHERE moved_out_on IS NULL;
CREATE INDEX rent_roll_tenants_company ON rent_roll_tenants (company_id);

CREATE TABLE rent_roll_events (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    facility_id uuid        NOT NULL REFERENCES facilities (id) ON DELETE CASCADE,
    company_id  uuid        NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    tenant_id   text        NOT NULL,
    -- The day it happened: the move-in date, the last-increase date (or the roll's date when the
    -- rent changed without one), or the date of the first roll without the tenant.
    event_date  date        NOT NULL,
    kind        text        NOT NULL CHECK (kind IN ('moved_in', 'rent_changed', 'moved_out')),
    size        text        NOT NULL,
    rent_before float8,
    rent_after  float8,
    -- The roll that showed it.
    roll_date   date        NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX rent_roll_events_facility ON rent_roll_events (facility_id, event_date);
CREATE INDEX rent_roll_events_company ON rent_roll_events (company_id, event_date);

-- The date of the roll in force: an older roll (a late re-send) does not move it back.
ALTER TABLE facilities ADD COLUMN rent_roll_date date;
