-- Password-reset hardening.
--
-- 1. A reset mail carries a live token, so the outbox must not keep it readable: new mail
--    bodies are sealed (AES-256-GCM under MASTER_KEY, the mail's id as associated data) in
--    `body_sealed`, opened only by the worker that sends them, and both body columns are
--    blanked once the mail is sent or has failed for good. Finished mail is purged after the
--    retention period (the worker's retention pass). Bodies of mail already sent are blanked
--    here; mail still queued keeps its plain body until it is sent.
ALTER TABLE mail_outbox ADD COLUMN body_sealed bytea;
ALTER TABLE mail_outbox ALTER COLUMN body DROP NOT NULL;
UPDATE mail_outbox SET body = NULL WHERE sent_at IS NOT NULL OR failed_at IS NOT NULL;
CREATE INDEX mail_outbox_finished_idx ON mail_outbox (coalesce(sent_at, failed_at))
    WHERE sent_at IS NOT NULL OR failed_at IS NOT NULL;

-- 2. `POST /auth/forgot` only records the request (the same single insert whether or not the
--    address has an account, so the answer's timing tells nothing); the worker looks the
--    address up, and mails at most one link per user per five minutes.
CREATE TABLE password_reset_requests (
    id           uuid PRIMARY KEY,
    email        text NOT NULL,
    requested_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX password_reset_requests_order_idx ON password_reset_requests (requested_at);
CREATE INDEX password_reset_tokens_user_idx ON password_reset_tokens (user_id, created_at);
