//! The `rates.approved` webhook event: one per set of decisions that approved a rate.

use super::{source_of, Decision, RunRef};
use crate::actor::Actor;
use crate::error::Result;
use chrono::SecondsFormat;
use serde::Serialize;
use sqlx::PgConnection;
use uuid::Uuid;

/// The body of `rates.approved` after `event` and `company_id`.
#[derive(Serialize)]
struct RatesApproved<'a> {
    facility_id: Uuid,
    facility_name: &'a str,
    run_id: Uuid,
    /// ISO 8601 UTC with milliseconds.
    approved_at: String,
    rates: Vec<ApprovedRate<'a>>,
}

#[derive(Serialize)]
struct ApprovedRate<'a> {
    size: &'a str,
    tier: &'a str,
    rate: f64,
    previous_rate: f64,
    /// `recommendation` (accepted) or `override`.
    source: &'static str,
    decided_by: &'a Actor,
}

/// Records one `rates.approved` event for the decisions that approved a rate (none when none
/// did); the delivery jobs to push after commit.
pub(super) async fn record_approved(
    conn: &mut PgConnection,
    at: &RunRef<'_>,
    stored: &[Decision],
) -> Result<Vec<Uuid>> {
    let rates: Vec<ApprovedRate> = stored
        .iter()
        .filter_map(|d| {
            Some(ApprovedRate {
                size: &d.size,
                tier: &d.tier,
                rate: d.rate?,
                previous_rate: d.previous_rate,
                source: source_of(&d.action),
                decided_by: &d.actor,
            })
        })
        .collect();
    let Some(approved_at) = stored.iter().map(|d| d.decided_at).max() else {
        return Ok(Vec::new());
    };
    if rates.is_empty() {
        return Ok(Vec::new());
    }
    let body = crate::webhooks::event_body(
        crate::webhooks::RATES_APPROVED,
        at.company_id,
        RatesApproved {
            facility_id: at.facility_id.uuid(),
            facility_name: at.facility_name,
            run_id: at.run_id.uuid(),
            approved_at: approved_at.to_rfc3339_opts(SecondsFormat::Millis, true),
            rates,
        },
    );
    crate::webhooks::record_event(
        conn,
        at.company_id,
        crate::webhooks::RATES_APPROVED,
        Uuid::now_v7(),
        &body,
    )
    .await
}
