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
mod record;
pub use record::{event_body, payload_body, RecommendationsReady};
pub(crate) use record::{record_event, record_recommendations_ready};

use crate::audit::Change;
use crate::config::MasterKey;
use crate::crypto;
use crate::door::{self, Committed, Jobs, Who};
use crate::error::{Error, Result, ValidationError};
use crate::outbound::guard::PrivateTargets;
use crate::queue::Kind;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use domain::ids::CompanyId;
use rand::RngCore;
use serde::Serialize;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// The event sent when a recommendation run is stored.
pub const RECOMMENDATIONS_READY: &str = "recommendations.ready";
/// The event sent when an ECRI batch is approved.
pub const ECRI_APPROVED: &str = "ecri.approved";
/// The event sent when street rates are approved (accepted or overridden, by a person or
/// automatically).
pub const RATES_APPROVED: &str = "rates.approved";
/// Every event a subscription can take.
pub const EVENTS: [&str; 3] = [RECOMMENDATIONS_READY, ECRI_APPROVED, RATES_APPROVED];
/// Subscriptions per company: each event is sent once per subscription.
pub const MAX_SUBSCRIPTIONS: i64 = 20;
/// Attempts per delivery (the interface's bound).
pub const MAX_ATTEMPTS: i32 = crate::config::WebhookSettings::MAX_ATTEMPTS as i32;
/// Claims of a delivery's job row before the platform gives up on it. Each attempt is one
/// claim; the margin is for claims that find nothing to do (an early wake-up) or that end in
/// an infrastructure error (the database unreachable), which the platform retries itself.
const JOB_MAX_CLAIMS: i32 = 25;

/// A subscription as listed (never its secret).
#[derive(Debug, Serialize)]
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
#[derive(Serialize)]
pub struct CreatedSubscription {
    #[serde(flatten)]
    pub subscription: Subscription,
    /// The signing secret (HMAC-SHA256 key of `X-Service-Signature`): shown this once.
    pub secret: String,
}

#[derive(Debug)]
pub struct NewSubscription {
    /// Delivery target: an absolute `https://` URL of at most 2,048 characters, no credentials,
    /// not an internal address.
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

/// Creates a subscription with a new secret (shown in this answer only), recorded as
/// `webhook.create` with its address and events.
pub async fn create(
    pool: &PgPool,
    key: &MasterKey,
    policy: &PrivateTargets,
    who: &Who,
    new: NewSubscription,
) -> Result<Committed<CreatedSubscription>> {
    let company_id = who.company;
    let url = parse_target_url(&new.url, policy)?;
    let events = parse_events(new.events)?;
    let mut tx = pool.begin().await?;
    // Serialises creations of one company, so the cap holds under concurrency.
    crate::tenancy::lock_company(&mut tx, company_id).await?;
    let count = sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM webhook_subscriptions WHERE company_id = $1"#,
        company_id.uuid()
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
        company_id.uuid(),
        url,
        events.as_deref(),
        sealed,
        crypto::hint(&secret)
    )
    .execute(&mut *tx)
    .await?;
    let subscription = fetch(&mut *tx, company_id, id).await?;
    let change = Change::new("webhook.create").target("webhook", id).values(
        None,
        Some(serde_json::json!({ "url": subscription.url, "events": subscription.events })),
    );
    let created = CreatedSubscription {
        subscription,
        secret,
    };
    door::commit(tx, who, change, created, Jobs::none()).await
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

pub async fn list(pool: &PgPool, company_id: CompanyId) -> Result<Vec<Subscription>> {
    Ok(sqlx::query_as!(
        SubscriptionRow,
        "SELECT id, url, events, secret_hint, created_at FROM webhook_subscriptions
         WHERE company_id = $1 ORDER BY created_at, id",
        company_id.uuid()
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(Subscription::from)
    .collect())
}

pub async fn get(pool: &PgPool, company_id: CompanyId, id: Uuid) -> Result<Subscription> {
    fetch(pool, company_id, id).await
}

async fn fetch<'e>(
    conn: impl sqlx::PgExecutor<'e>,
    company_id: CompanyId,
    id: Uuid,
) -> Result<Subscription> {
    sqlx::query_as!(
        SubscriptionRow,
        "SELECT id, url, events, secret_hint, created_at FROM webhook_subscriptions
         WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        id
    )
    .fetch_optional(conn)
    .await?
    .map(Subscription::from)
    .ok_or_else(|| Error::not_found(format!("no webhook subscription with id {id}")))
}

/// Deletes a subscription. Its unfinished deliveries are closed as failed and their waiting
/// jobs finished in the same transaction, so nothing more is sent to it; its log stays.
pub async fn delete(pool: &PgPool, who: &Who, id: Uuid) -> Result<Committed<()>> {
    let mut tx = pool.begin().await?;
    let url = sqlx::query_scalar!(
        "DELETE FROM webhook_subscriptions WHERE company_id = $1 AND id = $2 RETURNING url",
        who.company.uuid(),
        id
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| Error::not_found(format!("no webhook subscription with id {id}")))?;
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
    let change = Change::new("webhook.delete")
        .target("webhook", id)
        .values(Some(serde_json::json!({ "url": url })), None);
    door::commit(tx, who, change, (), Jobs::none()).await
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
pub async fn record_test_ping(pool: &PgPool, who: &Who, id: Uuid) -> Result<Committed<TestPing>> {
    let company_id = who.company;
    let mut tx = pool.begin().await?;
    let exists = sqlx::query_scalar!(
        "SELECT id FROM webhook_subscriptions WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
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
        company_id.uuid()
    )
    .fetch_optional(&mut *tx)
    .await?;
    let (facility_id, facility_name) = facility
        .map(|f| (f.id, f.name))
        .unwrap_or_else(|| (Uuid::nil(), "Example facility".to_owned()));
    let event = RecommendationsReady {
        company_id,
        facility_id: facility_id.into(),
        facility_name,
        recommendation_id: Uuid::now_v7(),
        generated_at: Utc::now(),
        per_size_count: 0,
    };
    let body = payload_body(&event, true);
    let delivery = record::Delivery {
        company_id,
        event: RECOMMENDATIONS_READY,
        subject_id: event.recommendation_id,
        subscription_id: id,
    };
    let (delivery_id, job_id) = record::record_delivery(&mut tx, &delivery, &body, true)
        .await?
        .ok_or_else(|| Error::Conflict("a test ping with this id exists".to_owned()))?;
    let change = Change::new("webhook.test").target("webhook", id);
    let ping = TestPing {
        delivery_id,
        job_id,
    };
    door::commit(
        tx,
        who,
        change,
        ping,
        Jobs::one(Kind::WebhookDelivery, job_id),
    )
    .await
}

/// Every webhook secret sealed at rest, locked until the caller's transaction ends (for master key
/// rotation).
pub(crate) async fn sealed_for_update(conn: &mut PgConnection) -> Result<Vec<(Uuid, Vec<u8>)>> {
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
pub(crate) async fn store_sealed(
    conn: &mut PgConnection,
    values: &[(Uuid, Vec<u8>)],
) -> Result<u64> {
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
