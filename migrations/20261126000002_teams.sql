-- Teams: several people per company, each with a role and optionally a list of facilities;
-- API keys with a role and a list of facilities; invitations; and an audit log of every change.

-- Roles, from most to least: owner (everything), admin (everything but owners), manager
-- (pricing, ECRI and street-rate decisions, uploads, competitor rates), viewer (reads only).
-- Every existing user was the only login of its company: its owner.
ALTER TABLE users
    ADD COLUMN role text NOT NULL DEFAULT 'owner'
        CHECK (role IN ('owner', 'admin', 'manager', 'viewer')),
    -- The facilities the user may see; NULL for every facility of the company.
    ADD COLUMN facility_ids uuid[],
    ADD COLUMN last_sign_in_at timestamptz;

-- Existing keys keep what they could do: everything an admin can.
ALTER TABLE api_keys
    ADD COLUMN role text NOT NULL DEFAULT 'admin'
        CHECK (role IN ('admin', 'manager', 'viewer')),
    ADD COLUMN facility_ids uuid[];

-- An invitation to join a company: the link carries a random token, of which only the SHA-256
-- is stored; it works once, until `expires_at`.
CREATE TABLE team_invitations (
    id           uuid        PRIMARY KEY,
    company_id   uuid        NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    email        text        NOT NULL,
    role         text        NOT NULL CHECK (role IN ('owner', 'admin', 'manager', 'viewer')),
    facility_ids uuid[],
    token_hash   bytea       NOT NULL UNIQUE,
    invited_by   jsonb       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    accepted_at  timestamptz,
    revoked_at   timestamptz
);
-- At most one open invitation per company and address.
CREATE UNIQUE INDEX team_invitations_open_key ON team_invitations (company_id, lower(email))
    WHERE accepted_at IS NULL AND revoked_at IS NULL;

-- Every change made by a person or a key (and sign-ins), newest first per company.
CREATE TABLE audit_log (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    company_id  uuid        NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    at          timestamptz NOT NULL DEFAULT now(),
    -- {"type": "user" | "api_key" | "system", "id": ..., "name": ...}
    actor       jsonb       NOT NULL,
    -- The actor's role when it acted; NULL for the service and for a failed sign-in.
    role        text,
    action      text        NOT NULL,
    -- What was acted on, as `kind:id` (`facility:...`, `api_key:...`), when there is one.
    target      text,
    facility_id uuid,
    -- A setting's value before and after the change.
    before      jsonb,
    after       jsonb,
    client_addr text
);
CREATE INDEX audit_log_company_idx ON audit_log (company_id, at DESC, id DESC);

-- Days the audit log keeps an entry.
ALTER TABLE companies
    ADD COLUMN audit_retention_days integer NOT NULL DEFAULT 365
        CHECK (audit_retention_days BETWEEN 30 AND 3650);
