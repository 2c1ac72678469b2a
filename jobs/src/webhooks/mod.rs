//! Signed outbound webhooks: subscriptions (the signing secret sealed at rest), the deliveries
//! an event causes, and their log.
//!
//! A delivery is recorded in the transaction of the event that causes it, with a
//! `webhook_delivery` job row that carries its wake-ups; the delivery row holds its own schedule
//! (`attempts`, `next_attempt_at`), so worker restarts and a lost Redis neither lose nor repeat
//! it. The attempts themselves are made by `handlers::webhook_delivery`.

pub mod client;

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

/// Delivery states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
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
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct DeliveryFilter {
    /// Only deliveries of this subscription.
    pub subscription_id: Option<Uuid>,
    /// Only deliveries in this state.
    pub status: Option<DeliveryStatus>,
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page: deliveries older than it.
    pub cursor: Option<Uuid>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = DeliveryAttempt)]
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

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = WebhookDelivery)]
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

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = WebhookDeliveryPage)]
pub struct DeliveryPage {
    /// Deliveries, newest first.
    pub deliveries: Vec<Delivery>,
    /// Pass as `cursor` for the next (older) page; `null` on the last page.
    pub next_cursor: Option<Uuid>,
}

/// The company's deliveries, newest first.
pub async fn deliveries(
    pool: &PgPool,
    company_id: Uuid,
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
            company_id,
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
        company_id,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_has_the_interface_fields_with_milliseconds() {
        let event = RecommendationsReady {
            company_id: Uuid::nil(),
            facility_id: Uuid::nil(),
            facility_name: "Elm \"Street\"".to_owned(),
            recommendation_id: Uuid::nil(),
            generated_at: DateTime::parse_from_rfc3339("2026-11-22T05:06:07Z")
                .unwrap()
                .with_timezone(&Utc),
            per_size_count: 7,
        };
        let body = payload_body(&event, false);
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["event"], "recommendations.ready");
        assert_eq!(v["generated_at"], "2026-11-22T05:06:07.000Z");
        assert_eq!(v["per_size_count"], 7);
        assert_eq!(v["facility_name"], "Elm \"Street\"");
        assert!(v.get("test").is_none());
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 7);
        let test: serde_json::Value = serde_json::from_str(&payload_body(&event, true)).unwrap();
        assert_eq!(test["test"], true);
    }

    #[test]
    fn receiver_urls_must_be_https_and_not_obviously_internal() {
        let p = PrivateTargets::Refused;
        assert_eq!(
            parse_target_url(" https://hooks.example.com/in ", &p).unwrap(),
            "https://hooks.example.com/in"
        );
        for (bad, fragment) in [
            ("http://hooks.example.com/in", "https://"),
            ("hooks.example.com", "absolute"),
            ("https://user:pw@hooks.example.com/", "user name"),
            ("https://127.0.0.1/", "loopback"),
            ("https://10.0.0.1/", "private"),
            ("https://[::1]:8443/", "loopback"),
            ("https://169.254.169.254/", "link-local"),
            ("https://localhost/", "loopback"),
        ] {
            let e = parse_target_url(bad, &p).unwrap_err();
            assert_eq!(e.path, "url");
            assert!(e.message.contains(fragment), "{bad}: {}", e.message);
        }
        let allowed = PrivateTargets::parse("127.0.0.1").unwrap();
        assert!(parse_target_url("https://127.0.0.1:9000/", &allowed).is_ok());
    }

    #[test]
    fn events_are_checked_and_deduplicated() {
        assert_eq!(parse_events(None).unwrap(), None);
        assert_eq!(
            parse_events(Some(vec![
                "recommendations.ready".into(),
                " recommendations.ready".into()
            ]))
            .unwrap(),
            Some(vec!["recommendations.ready".to_owned()])
        );
        assert_eq!(parse_events(Some(vec![])).unwrap_err().path, "events");
        assert_eq!(
            parse_events(Some(vec!["recommendations.ready".into(), "x".into()]))
                .unwrap_err()
                .path,
            "events[1]"
        );
        let s = new_secret();
        assert!(s.starts_with("whsec_") && s.len() == 6 + 43, "{s}");
        assert_ne!(s, new_secret());
    }
}
