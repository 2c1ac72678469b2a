-- Outgoing e-mail (password resets), written in the same transaction as what causes it and
-- delivered by the worker, so no mail is lost to a crash and no request waits on SMTP.
CREATE TABLE mail_outbox (
    id              uuid PRIMARY KEY,
    to_address      text NOT NULL,
    subject         text NOT NULL,
    body            text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    attempts        integer NOT NULL DEFAULT 0,
    sent_at         timestamptz,
    failed_at       timestamptz,
    last_error      text
);
CREATE INDEX mail_outbox_due_idx ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND failed_at IS NULL;
