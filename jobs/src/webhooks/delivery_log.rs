//! The delivery log of a company's webhooks: deliveries filtered by status and subscription,
//! newest first and paged, each with its attempts.

use crate::error::{Error, Result, ValidationError};
use chrono::{DateTime, Utc};
use domain::ids::CompanyId;
use serde::Serialize;
use sqlx::PgPool;
use uuid::Uuid;

/// Delivery states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryStatus {
    Queued,
    Retrying,
    Complete,
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Retrying => "retrying",
            Self::Complete => "complete",
            Self::Failed => "failed",
        }
    }
}

/// Filters and page of the delivery log.
#[derive(Debug, Default)]
pub struct DeliveryFilter {
    /// Only deliveries of this subscription.
    pub subscription_id: Option<Uuid>,
    /// Only deliveries in this state.
    pub status: Option<DeliveryStatus>,
    /// Page size, 1 to 100 (default 20).
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page: deliveries older than it.
    pub cursor: Option<Uuid>,
}

#[derive(Debug, Serialize)]
pub struct AttemptLog {
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

#[derive(Debug, Serialize)]
pub struct Delivery {
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

#[derive(Debug, Serialize)]
pub struct DeliveryPage {
    /// Deliveries, newest first.
    pub deliveries: Vec<Delivery>,
    /// Pass as `cursor` for the next (older) page; `null` on the last page.
    pub next_cursor: Option<Uuid>,
}

/// The company's deliveries, newest first.
pub async fn deliveries(
    pool: &PgPool,
    company_id: CompanyId,
    filter: DeliveryFilter,
) -> Result<DeliveryPage> {
    let limit = filter.limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        return Err(ValidationError::new("limit", "must be from 1 to 100").into());
    }
    if let Some(sub) = filter.subscription_id {
        // A subscription id the company never had (another company's) names nothing.
        let known = sqlx::query_scalar!(
            r#"SELECT EXISTS (SELECT 1 FROM webhook_subscriptions WHERE company_id = $1 AND id = $2)
                   OR EXISTS (SELECT 1 FROM webhook_deliveries WHERE company_id = $1 AND subscription_id = $2)
               AS "known!""#,
            company_id.uuid(),
            sub
        )
        .fetch_one(pool)
        .await?;
        if !known {
            return Err(Error::not_found(format!(
                "no webhook subscription with id {sub}"
            )));
        }
    }
    let status = filter.status.map(DeliveryStatus::as_str);
    let rows = sqlx::query!(
        "SELECT id, subscription_id, event, url, test, status, attempts, max_attempts, last_http_status,
                last_error, next_attempt_at, created_at, updated_at, finished_at
         FROM webhook_deliveries
         WHERE company_id = $1
           AND ($2::uuid IS NULL OR subscription_id = $2)
           AND ($3::text IS NULL OR status = $3)
           AND ($4::uuid IS NULL OR id < $4)
         ORDER BY id DESC LIMIT $5",
        company_id.uuid(),
        filter.subscription_id,
        status,
        filter.cursor,
        limit + 1
    )
    .fetch_all(pool)
    .await?;
    let more = rows.len() as i64 > limit;
    let rows: Vec<_> = rows.into_iter().take(limit as usize).collect();
    let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
    let attempts = sqlx::query!(
        "SELECT delivery_id, attempt, started_at, finished_at, duration_ms, http_status, error, response_excerpt
         FROM webhook_attempts WHERE delivery_id = ANY($1) ORDER BY delivery_id, attempt",
        &ids
    )
    .fetch_all(pool)
    .await?;
    let mut by_delivery: std::collections::HashMap<Uuid, Vec<AttemptLog>> =
        std::collections::HashMap::new();
    for a in attempts {
        by_delivery
            .entry(a.delivery_id)
            .or_default()
            .push(AttemptLog {
                attempt: a.attempt,
                started_at: a.started_at,
                finished_at: a.finished_at,
                duration_ms: a.duration_ms,
                http_status: a.http_status,
                error: a.error,
                response_body: a.response_excerpt,
            });
    }
    let next_cursor = if more { ids.last().copied() } else { None };
    Ok(DeliveryPage {
        deliveries: rows
            .into_iter()
            .map(|r| Delivery {
                attempt_log: by_delivery.remove(&r.id).unwrap_or_default(),
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
            })
            .collect(),
        next_cursor,
    })
}
