-- Signed outbound webhooks.
--
-- A subscription's signing secret is needed to sign, so it is sealed (AES-256-GCM under the
-- master key, the subscription id as associated data), never hashed; only a hint is shown.
-- `events` NULL means every event, including events added later.
CREATE TABLE webhook_subscriptions (
    id            uuid PRIMARY KEY,
    company_id    uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    url           text NOT NULL,
    events        text[],
    secret_sealed bytea NOT NULL,
    secret_hint   text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_subscriptions_company_idx ON webhook_subscriptions (company_id, created_at);

-- One delivery per subscription and event occurrence, recorded in the transaction of the event.
-- The delivery holds its own schedule (attempts, next_attempt_at): its webhook_delivery job row
-- only carries the wake-ups, so worker restarts and a lost Redis neither lose nor repeat it.
-- The log outlives its subscription: subscription_id has no foreign key, and deleting a
-- subscription closes its unfinished deliveries as failed. `body` is the exact text sent and
-- signed on every attempt. The unique key makes recording the same run twice a no-op.
CREATE TABLE webhook_deliveries (
    id                uuid PRIMARY KEY,
    company_id        uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    subscription_id   uuid NOT NULL,
    job_id            uuid,
    event             text NOT NULL,
    url               text NOT NULL,
    body              text NOT NULL,
    test              boolean NOT NULL DEFAULT false,
    recommendation_id uuid NOT NULL,
    status            text NOT NULL DEFAULT 'queued'
                      CHECK (status IN ('queued', 'retrying', 'complete', 'failed')),
    attempts          integer NOT NULL DEFAULT 0,
    max_attempts      integer NOT NULL,
    next_attempt_at   timestamptz,
    last_http_status  integer,
    last_error        text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    finished_at       timestamptz,
    UNIQUE (subscription_id, event, recommendation_id)
);
-- The log is read newest first (ids are UUIDv7, ordered by time), per company or subscription.
CREATE INDEX webhook_deliveries_company_idx ON webhook_deliveries (company_id, id DESC);
CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id, id DESC);

-- Every attempt of a delivery. A row is written (unfinished) before the request is sent, so an
-- attempt cut off by a dying worker is still counted when another worker takes the job over.
CREATE TABLE webhook_attempts (
    delivery_id      uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt          integer NOT NULL,
    started_at       timestamptz NOT NULL,
    finished_at      timestamptz,
    duration_ms      integer,
    http_status      integer,
    error            text,
    -- The first KiB of the receiver's answer.
    response_excerpt text,
    worker           text,
    PRIMARY KEY (delivery_id, attempt)
);
