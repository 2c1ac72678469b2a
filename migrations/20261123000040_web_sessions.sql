-- Dashboard sign-in sessions. The browser holds a random token in an HttpOnly cookie; only its
-- SHA-256 is stored, so a copy of this table cannot be replayed as a login. A session ends at
-- the earlier of its idle expiry (pushed forward as the user works) and its absolute expiry
-- (fixed at sign-in). The CSRF token is per session and goes into every form of the dashboard.
CREATE TABLE web_sessions (
    id                  uuid PRIMARY KEY,
    token_hash          bytea NOT NULL UNIQUE,
    user_id             uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token          text NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    last_seen_at        timestamptz NOT NULL DEFAULT now(),
    idle_expires_at     timestamptz NOT NULL,
    absolute_expires_at timestamptz NOT NULL
);
-- "Log out everywhere" and a password reset end every session of a user.
CREATE INDEX web_sessions_user_idx ON web_sessions (user_id);
-- The purge of ended sessions.
CREATE INDEX web_sessions_expiry_idx ON web_sessions (idle_expires_at);
