//! What an event records: its exact body, and one delivery (with its `webhook_delivery` job
//! row) per subscription that takes the event. Every event is about one subject (a run, a
//! batch, a set of approved rates): a subscription gets one delivery per event and subject.

use super::{JOB_MAX_CLAIMS, MAX_ATTEMPTS, RECOMMENDATIONS_READY};
use crate::error::{Error, Result};
use crate::runs::{self, NewJob};
use chrono::{DateTime, SecondsFormat, Utc};
use domain::ids::{CompanyId, FacilityId};
use serde::Serialize;
use sqlx::PgConnection;
use uuid::Uuid;

/// A stored recommendation run, as the `recommendations.ready` payload describes it.
#[derive(Clone, Debug)]
pub struct RecommendationsReady {
    pub company_id: CompanyId,
    pub facility_id: FacilityId,
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
        company_id: event.company_id.uuid(),
        facility_id: event.facility_id.uuid(),
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
pub(crate) async fn record_recommendations_ready(
    conn: &mut PgConnection,
    event: &RecommendationsReady,
) -> Result<Vec<Uuid>> {
    let body = payload_body(event, false);
    record_event(
        conn,
        event.company_id,
        RECOMMENDATIONS_READY,
        event.recommendation_id,
        &body,
    )
    .await
}

/// Records one delivery of `body` per subscription of the company that takes `event`; returns
/// the job ids to push after commit. Call it in the transaction of the change the event tells
/// of. Recording the same event and subject twice records nothing more.
pub(crate) async fn record_event(
    conn: &mut PgConnection,
    company_id: CompanyId,
    event: &str,
    subject_id: Uuid,
    body: &str,
) -> Result<Vec<Uuid>> {
    let subscriptions: Vec<Uuid> = sqlx::query_scalar!(
        "SELECT id FROM webhook_subscriptions
         WHERE company_id = $1 AND (events IS NULL OR $2 = ANY(events))
         ORDER BY created_at, id",
        company_id.uuid(),
        event
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut jobs = Vec::with_capacity(subscriptions.len());
    for subscription_id in subscriptions {
        let delivery = Delivery {
            company_id,
            event,
            subject_id,
            subscription_id,
        };
        if let Some((_, job)) = record_delivery(conn, &delivery, body, false).await? {
            jobs.push(job);
        }
    }
    Ok(jobs)
}

/// One delivery to record: which event, about what, to whom.
pub(super) struct Delivery<'a> {
    pub company_id: CompanyId,
    pub event: &'a str,
    pub subject_id: Uuid,
    pub subscription_id: Uuid,
}

/// The event body every event shares: its name, the company and the time, then the event's
/// own fields (flattened).
#[derive(Serialize)]
pub struct EventBody<'a, T: Serialize> {
    pub event: &'a str,
    pub company_id: Uuid,
    #[serde(flatten)]
    pub fields: T,
}

/// The exact body of an event.
pub fn event_body<T: Serialize>(event: &str, company_id: CompanyId, fields: T) -> String {
    serde_json::to_string(&EventBody {
        event,
        company_id: company_id.uuid(),
        fields,
    })
    .expect("an event body of plain fields serialises")
}

/// Records a delivery of `body` to one subscription with its job; `None` when this event and
/// subject were recorded for the subscription already. Returns (delivery id, job id).
pub(super) async fn record_delivery(
    conn: &mut PgConnection,
    d: &Delivery<'_>,
    body: &str,
    test: bool,
) -> Result<Option<(Uuid, Uuid)>> {
    let delivery_id = Uuid::now_v7();
    let inserted = sqlx::query_scalar!(
        "INSERT INTO webhook_deliveries
             (id, company_id, subscription_id, event, url, body, test, subject_id, max_attempts)
         SELECT $1, s.company_id, s.id, $3, s.url, $4, $5, $6, $7
         FROM webhook_subscriptions s WHERE s.id = $2 AND s.company_id = $8
         ON CONFLICT (subscription_id, event, subject_id) DO NOTHING
         RETURNING id",
        delivery_id,
        d.subscription_id,
        d.event,
        body,
        test,
        d.subject_id,
        MAX_ATTEMPTS,
        d.company_id.uuid()
    )
    .fetch_optional(&mut *conn)
    .await?;
    if inserted.is_none() {
        return Ok(None);
    }
    let mut job = NewJob::new(
        Some(d.company_id),
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
