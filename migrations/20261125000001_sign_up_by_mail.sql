-- Sign-up answers the same whether or not the address has an account: the form only records
-- the request (the same single insert either way, the password already hashed, so the answer
-- and its timing tell nothing). The worker looks the address up: a new address gets a link
-- that creates the account (a single-use token, stored hashed, valid for a day); an address
-- that has an account gets a note telling its owner to log in or reset the password. At most
-- one such mail per address per five minutes.
CREATE TABLE sign_up_requests (
    id            uuid PRIMARY KEY,
    company_name  text NOT NULL,
    email         text NOT NULL,
    password_hash text NOT NULL,
    requested_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sign_up_requests_order_idx ON sign_up_requests (requested_at);

CREATE TABLE sign_up_tokens (
    id            uuid PRIMARY KEY,
    token_hash    bytea NOT NULL UNIQUE,
    company_name  text NOT NULL,
    email         text NOT NULL,
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz
);
CREATE INDEX sign_up_tokens_email_idx ON sign_up_tokens (lower(email), created_at);

-- The spacing check of sign-up and reset mails looks up recent mail by address.
CREATE INDEX mail_outbox_to_idx ON mail_outbox (lower(to_address), created_at);
