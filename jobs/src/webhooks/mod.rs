//! Signed outbound webhooks: subscriptions (the signing secret sealed at rest), the deliveries
//! an event causes, and their log.
//!
//! A delivery is recorded in the transaction of the event that causes it, with a
//! `webhook_delivery` job row that carries its wake-ups; the delivery row holds its own schedule
//! (`attempts`, `next_attempt_at`), so worker restarts and a lost Redis neither lose nor repeat
//! it. The attempts themselves are made by `handlers::webhook_delivery`.

pub mod attempts;
pub mod client;
mod delivery_log;
pub use delivery_log::{
    deliveries, AttemptLog, Delivery, DeliveryFilter, DeliveryPage, DeliveryStatus,
};

use crate::config::MasterKey;
use crate::crypto;
use crate::error::{Error, Result, ValidationError};
use crate::outbound::guard::PrivateTargets;
use crate::runs::{self, NewJob};
use base64::Engine as _;
use chrono::{DateTime, SecondsFormat, Utc};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// The event sent when a recommendation run is stored.
pub const RECOMMENDATIONS_READY: &str = "recommendations.ready";
/// Every event a subscription can take.
pub const EVENTS: [&str; 1] = [RECOMMENDATIONS_READY];
/// Subscriptions per company: each event is sent once per subscription.
pub const MAX_SUBSCRIPTIONS: i64 = 20;
/// Attempts per delivery (the interface's bound).
pub const MAX_ATTEMPTS: i32 = crate::config::WebhookSettings::MAX_ATTEMPTS as i32;
/// Claims of a delivery's job row before the platform gives up on it. Each attempt is one
/// claim; the margin is for claims that find nothing to do (an early wake-up) or that end in
/// an infrastructure error (the database unreachable), which the platform retries itself.
const JOB_MAX_CLAIMS: i32 = 25;

/// A stored recommendation run, as the `recommendations.ready` payload describes it.
#[derive(Clone, Debug)]
pub struct RecommendationsReady {
    pub company_id: Uuid,
    pub facility_id: Uuid,
    pub facility_name: String,
    pub recommendation_id: Uuid,
    pub generated_at: DateTime<Utc>,
    pub per_size_count: i32,
}

/// The body sent (and signed), in the interface's field order.
#[derive(Serialize)]
struct Payload<'a> {
    event: &'a str,
    company_id: Uuid,
    facility_id: Uuid,
    facility_name: &'a str,
    recommendation_id: Uuid,
    /// ISO 8601 UTC with milliseconds.
    generated_at: String,
    per_size_count: i32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    test: bool,
}

/// The exact body of a `recommendations.ready` delivery.
pub fn payload_body(event: &RecommendationsReady, test: bool) -> String {
    serde_json::to_string(&Payload {
        event: RECOMMENDATIONS_READY,
        company_id: event.company_id,
        facility_id: event.facility_id,
        facility_name: &event.facility_name,
        recommendation_id: event.recommendation_id,
        generated_at: event
            .generated_at
            .to_rfc3339_opts(SecondsFormat::Millis, true),
        per_size_count: event.per_size_count,
        test,
    })
    .expect("a payload of plain fields serialises")
}

/// Records one delivery (and its webhook_delivery job row) per subscription of the company that
/// takes `recommendations.ready`; returns the job ids to push after commit.
///
/// Call it in the transaction that stores the run. Recording the same run twice records
/// nothing more (one delivery per subscription and run).
pub async fn record_recommendations_ready(
    conn: &mut PgConnection,
    event: &RecommendationsReady,
) -> Result<Vec<Uuid>> {
    let subscriptions: Vec<Uuid> = sqlx::query_scalar!(
        "SELECT id FROM webhook_subscriptions
         WHERE company_id = $1 AND (events IS NULL OR $2 = ANY(events))
         ORDER BY created_at, id",
        event.company_id,
        RECOMMENDATIONS_READY
    )
    .fetch_all(&mut *conn)
    .await?;
    let body = payload_body(event, false);
    let mut jobs = Vec::with_capacity(subscriptions.len());
    for subscription_id in subscriptions {
        if let Some((_, job)) = record_delivery(conn, event, subscription_id, &body, false).await? {
            jobs.push(job);
        }
    }
    Ok(jobs)
}

/// Records a delivery of `body` to one subscription with its job; `None` when this run was
/// recorded for the subscription already. Returns (delivery id, job id).
async fn record_delivery(
    conn: &mut PgConnection,
    event: &RecommendationsReady,
    subscription_id: Uuid,
    body: &str,
    test: bool,
) -> Result<Option<(Uuid, Uuid)>> {
    let delivery_id = Uuid::now_v7();
    let inserted = sqlx::query_scalar!(
        "INSERT INTO webhook_deliveries
             (id, company_id, subscription_id, event, url, body, test, recommendation_id, max_attempts)
         SELECT $1, s.company_id, s.id, $3, s.url, $4, $5, $6, $7
         FROM webhook_subscriptions s WHERE s.id = $2 AND s.company_id = $8
         ON CONFLICT (subscription_id, event, recommendation_id) DO NOTHING
         RETURNING id",
        delivery_id,
        subscription_id,
        RECOMMENDATIONS_READY,
        body,
        test,
        event.recommendation_id,
        MAX_ATTEMPTS,
        event.company_id
    )
    .fetch_optional(&mut *conn)
    .await?;
    if inserted.is_none() {
        return Ok(None);
    }
    let mut job = NewJob::new(
        Some(event.company_id),
        crate::payload::Payload::WebhookDelivery(crate::payload::WebhookDelivery { delivery_id }),
    );
    job.max_attempts = JOB_MAX_CLAIMS;
    let job_id = runs::insert(&mut *conn, job)
        .await?
        .ok_or_else(|| Error::Conflict("the delivery's job exists already".to_owned()))?;
    sqlx::query!(
        "UPDATE webhook_deliveries SET job_id = $2 WHERE id = $1",
        delivery_id,
        job_id
    )
    .execute(&mut *conn)
    .await?;
    Ok(Some((delivery_id, job_id)))
}

/// A subscription as listed (never its secret).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = WebhookSubscription)]
pub struct Subscription {
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

/// The creation answer: the subscription and its secret, shown this once.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = CreatedWebhookSubscription)]
pub struct CreatedSubscription {
    #[serde(flatten)]
    pub subscription: Subscription,
    /// The signing secret (HMAC-SHA256 key of `X-Service-Signature`): shown this once.
    pub secret: String,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[schema(as = NewWebhookSubscription)]
#[serde(deny_unknown_fields)]
pub struct NewSubscription {
    /// Delivery target: an absolute `https://` URL of at most 2,048 characters, no credentials,
    /// not an internal address.
    #[schema(max_length = 2048, pattern = "^[hH][tT][tT][pP][sS]://")]
    pub url: String,
    /// Events to take (`recommendations.ready`); every event, including later ones, when absent.
    pub events: Option<Vec<String>>,
}

/// Checks a receiver URL: absolute `https://`, at most 2,048 characters, no credentials, and
/// not an obviously internal host (IP literal or loopback name) unless the operator allows it.
/// Names are resolved and checked again at every attempt.
pub fn parse_target_url(raw: &str, policy: &PrivateTargets) -> Result<String, ValidationError> {
    crate::outbound::parse_https_url("url", raw, policy).map(String::from)
}

fn parse_events(events: Option<Vec<String>>) -> Result<Option<Vec<String>>, ValidationError> {
    let Some(events) = events else {
        return Ok(None);
    };
    if events.is_empty() {
        return Err(ValidationError::new(
            "events",
            "must name at least one event (leave it out for every event)",
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let e = e.trim();
        if !EVENTS.contains(&e) {
            return Err(ValidationError::new(
                format!("events[{i}]"),
                format!("'{e}' is not an event; known events: {}", EVENTS.join(", ")),
            ));
        }
        if !out.iter().any(|o| o == e) {
            out.push(e.to_owned());
        }
    }
    Ok(Some(out))
}

/// A new signing secret: `whsec_` and 32 random bytes in base64url.
fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!(
        "whsec_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

pub async fn create(
    pool: &PgPool,
    key: &MasterKey,
    policy: &PrivateTargets,
    company_id: Uuid,
    new: NewSubscription,
) -> Result<CreatedSubscription> {
    let url = parse_target_url(&new.url, policy)?;
    let events = parse_events(new.events)?;
    let mut tx = pool.begin().await?;
    // Serialises creations of one company, so the cap holds under concurrency.
    crate::tenancy::lock_company(&mut tx, company_id).await?;
    let count = sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM webhook_subscriptions WHERE company_id = $1"#,
        company_id
    )
    .fetch_one(&mut *tx)
    .await?;
    if count >= MAX_SUBSCRIPTIONS {
        return Err(ValidationError::new(
            "url",
            format!(
                "a company has at most {MAX_SUBSCRIPTIONS} webhook subscriptions; delete one first"
            ),
        )
        .into());
    }
    let id = Uuid::now_v7();
    let secret = new_secret();
    let sealed = crypto::seal(key, id.as_bytes(), secret.as_bytes());
    sqlx::query!(
        "INSERT INTO webhook_subscriptions (id, company_id, url, events, secret_sealed, secret_hint)
         VALUES ($1, $2, $3, $4, $5, $6)",
        id,
        company_id,
        url,
        events.as_deref(),
        sealed,
        crypto::hint(&secret)
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(CreatedSubscription {
        subscription: get(pool, company_id, id).await?,
        secret,
    })
}

struct SubscriptionRow {
    id: Uuid,
    url: String,
    events: Option<Vec<String>>,
    secret_hint: String,
    created_at: DateTime<Utc>,
}

impl From<SubscriptionRow> for Subscription {
    fn from(r: SubscriptionRow) -> Self {
        Self {
            id: r.id,
            url: r.url,
            all_events: r.events.is_none(),
            events: r
                .events
                .unwrap_or_else(|| EVENTS.iter().map(|e| (*e).to_owned()).collect()),
            secret_hint: r.secret_hint,
            created_at: r.created_at,
        }
    }
}

pub async fn list(pool: &PgPool, company_id: Uuid) -> Result<Vec<Subscription>> {
    Ok(sqlx::query_as!(
        SubscriptionRow,
        "SELECT id, url, events, secret_hint, created_at FROM webhook_subscriptions
         WHERE company_id = $1 ORDER BY created_at, id",
        company_id
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(Subscription::from)
    .collect())
}

pub async fn get(pool: &PgPool, company_id: Uuid, id: Uuid) -> Result<Subscription> {
    sqlx::query_as!(
        SubscriptionRow,
        "SELECT id, url, events, secret_hint, created_at FROM webhook_subscriptions
         WHERE company_id = $1 AND id = $2",
        company_id,
        id
    )
    .fetch_optional(pool)
    .await?
    .map(Subscription::from)
    .ok_or_else(|| Error::not_found(format!("no webhook subscription with id {id}")))
}

/// Deletes a subscription. Its unfinished deliveries are closed as failed and their waiting
/// jobs finished in the same transaction, so nothing more is sent to it; its log stays.
pub async fn delete(pool: &PgPool, company_id: Uuid, id: Uuid) -> Result<()> {
    let mut tx = pool.begin().await?;
    let done = sqlx::query!(
        "DELETE FROM webhook_subscriptions WHERE company_id = $1 AND id = $2",
        company_id,
        id
    )
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::not_found(format!(
            "no webhook subscription with id {id}"
        )));
    }
    let jobs: Vec<Uuid> = sqlx::query_scalar!(
        "UPDATE webhook_deliveries SET status = 'failed', last_error = 'the subscription was deleted',
                next_attempt_at = NULL, finished_at = now(), updated_at = now()
         WHERE subscription_id = $1 AND status IN ('queued', 'retrying')
         RETURNING job_id",
        id
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .flatten()
    .collect();
    // Jobs waiting for their next attempt end here; one running now finds the delivery closed.
    crate::runs::end_waiting_deliveries(&mut tx, &jobs).await?;
    tx.commit().await?;
    Ok(())
}

/// A queued test delivery.
#[derive(Debug, Serialize)]
pub struct TestPing {
    pub delivery_id: Uuid,
    pub job_id: Uuid,
}

/// Records a `recommendations.ready` delivery marked `test: true` to one subscription. It
/// describes the company's first facility by name when it has one (a nil id and "Example
/// facility" otherwise), a fresh recommendation id and no per-size recommendations.
pub async fn record_test_ping(pool: &PgPool, company_id: Uuid, id: Uuid) -> Result<TestPing> {
    let mut tx = pool.begin().await?;
    let exists = sqlx::query_scalar!(
        "SELECT id FROM webhook_subscriptions WHERE company_id = $1 AND id = $2",
        company_id,
        id
    )
    .fetch_optional(&mut *tx)
    .await?;
    if exists.is_none() {
        return Err(Error::not_found(format!(
            "no webhook subscription with id {id}"
        )));
    }
    let facility = sqlx::query!(
        "SELECT id, name FROM facilities WHERE company_id = $1 ORDER BY lower(name), id LIMIT 1",
        company_id
    )
    .fetch_optional(&mut *tx)
    .await?;
    let (facility_id, facility_name) = facility
        .map(|f| (f.id, f.name))
        .unwrap_or_else(|| (Uuid::nil(), "Example facility".to_owned()));
    let event = RecommendationsReady {
        company_id,
        facility_id,
        facility_name,
        recommendation_id: Uuid::now_v7(),
        generated_at: Utc::now(),
        per_size_count: 0,
    };
    let body = payload_body(&event, true);
    let (delivery_id, job_id) = record_delivery(&mut tx, &event, id, &body, true)
        .await?
        .ok_or_else(|| Error::Conflict("a test ping with this id exists".to_owned()))?;
    tx.commit().await?;
    Ok(TestPing {
        delivery_id,
        job_id,
    })
}

/// Every webhook secret sealed at rest, locked until the caller's transaction ends (for master key
/// rotation).
pub async fn sealed_for_update(conn: &mut PgConnection) -> Result<Vec<(Uuid, Vec<u8>)>> {
    Ok(
        sqlx::query!("SELECT id, secret_sealed FROM webhook_subscriptions FOR UPDATE")
            .fetch_all(conn)
            .await?
            .into_iter()
            .map(|r| (r.id, r.secret_sealed))
            .collect(),
    )
}

/// Stores webhook secrets sealed again (master key rotation); returns how many.
pub async fn store_sealed(conn: &mut PgConnection, values: &[(Uuid, Vec<u8>)]) -> Result<u64> {
    let (ids, sealed): (Vec<Uuid>, Vec<Vec<u8>>) = values.iter().cloned().unzip();
    Ok(sqlx::query!(
        "UPDATE webhook_subscriptions t SET secret_sealed = u.sealed FROM UNNEST($1::uuid[], $2::bytea[]) AS u(id, sealed)
         WHERE t.id = u.id",
        &ids,
        &sealed
    )
    .execute(conn)
    .await?
    .rows_affected())
}

#[cfg(test)]
mod tests;
