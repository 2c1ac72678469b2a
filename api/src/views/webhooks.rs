//! What the API answers for webhook deliveries, built from `jobs::webhooks::delivery_log`.

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = DeliveryAttempt)]
pub(crate) struct AttemptLog {
    /// Number of the attempt, from 1.
    pub attempt: i32,
    /// When the attempt started.
    pub started_at: DateTime<Utc>,
    /// When it ended.
    pub finished_at: Option<DateTime<Utc>>,
    /// How long it took, milliseconds.
    pub duration_ms: Option<i32>,
    /// The receiver's HTTP status; null when none came.
    pub http_status: Option<i32>,
    /// Why the attempt failed, when it did.
    pub error: Option<String>,
    /// The first KiB of the receiver's answer.
    pub response_body: Option<String>,
}

impl From<jobs::webhooks::AttemptLog> for AttemptLog {
    fn from(r: jobs::webhooks::AttemptLog) -> Self {
        Self {
            attempt: r.attempt,
            started_at: r.started_at,
            finished_at: r.finished_at,
            duration_ms: r.duration_ms,
            http_status: r.http_status,
            error: r.error,
            response_body: r.response_body,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = WebhookDelivery)]
pub(crate) struct Delivery {
    /// Id of the delivery (its `X-Service-Delivery`).
    pub id: Uuid,
    /// The subscription.
    pub subscription_id: Uuid,
    /// The event.
    pub event: String,
    /// The target URL.
    pub url: String,
    /// True for a test ping.
    pub test: bool,
    /// `queued`, `retrying`, `complete` or `failed`.
    pub status: String,
    /// Attempts made.
    pub attempts: i32,
    /// Attempts allowed.
    pub max_attempts: i32,
    /// The receiver's last HTTP status.
    pub last_http_status: Option<i32>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When the next attempt is due.
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// When the delivery was recorded.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// When it completed or failed for good.
    pub finished_at: Option<DateTime<Utc>>,
    /// Every attempt, oldest first.
    pub attempt_log: Vec<AttemptLog>,
}

impl From<jobs::webhooks::Delivery> for Delivery {
    fn from(r: jobs::webhooks::Delivery) -> Self {
        Self {
            id: r.id,
            subscription_id: r.subscription_id,
            event: r.event,
            url: r.url,
            test: r.test,
            status: r.status,
            attempts: r.attempts,
            max_attempts: r.max_attempts,
            last_http_status: r.last_http_status,
            last_error: r.last_error,
            next_attempt_at: r.next_attempt_at,
            created_at: r.created_at,
            updated_at: r.updated_at,
            finished_at: r.finished_at,
            attempt_log: r.attempt_log.into_iter().map(Into::into).collect(),
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = WebhookDeliveryPage)]
pub(crate) struct DeliveryPage {
    /// Deliveries, newest first.
    pub deliveries: Vec<Delivery>,
    /// Pass as `cursor` for the next (older) page; `null` on the last page.
    pub next_cursor: Option<Uuid>,
}

impl From<jobs::webhooks::DeliveryPage> for DeliveryPage {
    fn from(r: jobs::webhooks::DeliveryPage) -> Self {
        Self {
            deliveries: r.deliveries.into_iter().map(Into::into).collect(),
            next_cursor: r.next_cursor,
        }
    }
}

/// A subscription as listed (never its secret).
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = WebhookSubscription)]
pub(crate) struct Subscription {
    /// Id of the subscription.
    pub id: Uuid,
    /// The HTTPS URL deliveries are sent to.
    pub url: String,
    /// The events it takes.
    pub events: Vec<String>,
    /// Created without `events`: takes every event, including any added later.
    pub all_events: bool,
    /// Masked hint of the signing secret.
    pub secret_hint: String,
    /// When the subscription was created.
    pub created_at: DateTime<Utc>,
}

impl From<jobs::webhooks::Subscription> for Subscription {
    fn from(r: jobs::webhooks::Subscription) -> Self {
        Self {
            id: r.id,
            url: r.url,
            events: r.events,
            all_events: r.all_events,
            secret_hint: r.secret_hint,
            created_at: r.created_at,
        }
    }
}

/// The creation answer: the subscription and its secret, shown this once.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = CreatedWebhookSubscription)]
pub(crate) struct CreatedSubscription {
    #[serde(flatten)]
    pub subscription: Subscription,
    /// The signing secret (HMAC-SHA256 key of `X-Service-Signature`): shown this once.
    pub secret: String,
}

impl From<jobs::webhooks::CreatedSubscription> for CreatedSubscription {
    fn from(r: jobs::webhooks::CreatedSubscription) -> Self {
        Self {
            subscription: r.subscription.into(),
            secret: r.secret,
        }
    }
}
