//! Approving a draft: its notice and effective dates, the check that none of its tenants has
//! another increase on the way, and the `ecri.approved` webhook event.

use super::{get, key, lock_draft, money, pending_increases, Batch, Totals, MAX_NOTICE_AHEAD_DAYS};
use crate::audit::Change;
use crate::decisions;
use crate::door::{self, Committed, Jobs, Who};
use crate::ecri;
use crate::error::{Error, Result, ValidationError};
use crate::queue::Kind;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use domain::ids::{CompanyId, FacilityId};
use sqlx::{PgConnection, PgPool};
use std::collections::BTreeMap;
use uuid::Uuid;

/// What an approval sets, as its log entry and its event tell it.
struct Approval<'a> {
    batch: &'a Batch,
    totals: Totals,
    notice: NaiveDate,
    effective: NaiveDate,
    approved_at: DateTime<Utc>,
}

/// Approves a draft: the notice date (today in the company's time zone unless given, not
/// before today and at most [`MAX_NOTICE_AHEAD_DAYS`] ahead), the effective date (notice plus
/// the facility's notice days), the decision log, and the `ecri.approved` event.
pub async fn approve(
    pool: &PgPool,
    who: &Who,
    facility_id: FacilityId,
    id: Uuid,
    notice_date: Option<NaiveDate>,
) -> Result<Committed<Batch>> {
    let (company_id, actor) = (who.company, &who.actor);
    let (settings, _) = ecri::settings(pool, company_id, facility_id).await?;
    let mut tx = pool.begin().await?;
    lock_draft(&mut tx, company_id, facility_id, id, "approved").await?;
    let today = company_today(&mut tx, company_id).await?;
    let notice = notice_date.unwrap_or(today);
    check_notice(notice, today)?;
    let effective = notice + Duration::days(i64::from(settings.notice_days));
    let batch = get(pool, company_id, facility_id, id).await?;
    let t = batch.totals();
    if t.lines == 0 {
        return Err(Error::Conflict(
            "every line of the batch is left out: nothing to approve".to_owned(),
        ));
    }
    let pending = pending_increases(&mut tx, batch.facility_id, notice, Some(id)).await?;
    check_not_pending(&batch, &pending)?;
    let approved_at = Utc::now();
    sqlx::query!(
        "UPDATE ecri_batches SET status = 'approved', approved_by = $2, approved_at = $3,
                notice_date = $4, effective_date = $5, notice_days = $6
         WHERE id = $1",
        id,
        actor.json(),
        approved_at,
        notice,
        effective,
        i32::try_from(settings.notice_days).unwrap_or(30)
    )
    .execute(&mut *tx)
    .await?;
    let a = Approval {
        batch: &batch,
        totals: t,
        notice,
        effective,
        approved_at,
    };
    log_approved(&mut tx, who, facility_id, &a).await?;
    let delivery_jobs = record_event(&mut tx, who, &a).await?;
    let change = Change::new("ecri_batch.approve")
        .target("ecri_batch", id)
        .facility(facility_id.uuid())
        .values(
            None,
            Some(serde_json::json!({
                "lines": t.lines, "tenants": t.tenants, "monthly_uplift": t.monthly_uplift,
                "notice_date": notice, "effective_date": effective,
            })),
        );
    let jobs = Jobs::of(Kind::WebhookDelivery, delivery_jobs);
    let done = door::commit(tx, who, change, (), jobs).await?;
    let batch = get(pool, company_id, facility_id, id).await?;
    Ok(done.map(|()| batch))
}

/// Today in the company's time zone.
async fn company_today(conn: &mut PgConnection, company_id: CompanyId) -> Result<NaiveDate> {
    let tz = sqlx::query_scalar!(
        "SELECT time_zone FROM companies WHERE id = $1",
        company_id.uuid()
    )
    .fetch_one(conn)
    .await?;
    let tz: chrono_tz::Tz = tz.parse().unwrap_or(chrono_tz::UTC);
    Ok(Utc::now().with_timezone(&tz).date_naive())
}

/// A notice is not backdated, nor set more than [`MAX_NOTICE_AHEAD_DAYS`] ahead.
fn check_notice(notice: NaiveDate, today: NaiveDate) -> Result<()> {
    if notice < today {
        return Err(ValidationError::new(
            "notice_date",
            format!("must not be before today ({today}): a notice cannot be backdated"),
        )
        .into());
    }
    if notice > today + Duration::days(MAX_NOTICE_AHEAD_DAYS) {
        return Err(ValidationError::new(
            "notice_date",
            format!("must be at most {MAX_NOTICE_AHEAD_DAYS} days ahead of today ({today})"),
        )
        .into());
    }
    Ok(())
}

/// No line of the batch (left out ones aside) is a tenant with an approved increase not yet in
/// force in another batch (`pending`).
fn check_not_pending(batch: &Batch, pending: &BTreeMap<String, Uuid>) -> Result<()> {
    if let Some((l, other)) = batch.lines.iter().filter(|l| !l.excluded).find_map(|l| {
        pending
            .get(&key(
                l.tenant_id.as_deref(),
                &l.size,
                l.months_since_last_increase,
            ))
            .map(|b| (l, b))
    }) {
        return Err(Error::Conflict(format!(
            "line {} ({}) has an approved increase not yet in force in batch {other}: leave the line out first",
            l.line,
            l.tenant_id.as_deref().unwrap_or(&l.size)
        )));
    }
    Ok(())
}

/// Records the approval in the facility's decision log.
async fn log_approved(
    conn: &mut PgConnection,
    who: &Who,
    facility_id: FacilityId,
    a: &Approval<'_>,
) -> Result<()> {
    let (t, notice, effective) = (&a.totals, a.notice, a.effective);
    decisions::record(
        conn,
        decisions::Entry {
            company_id: who.company,
            facility_id,
            action: "ecri_batch.approved",
            subject_id: a.batch.id,
            summary: format!(
                "Approved the ECRI batch: {} lines ({} tenants), notice {notice}, in force {effective}, {} a month more if all stay",
                t.lines,
                t.tenants,
                money(t.monthly_uplift)
            ),
            detail: serde_json::json!({
                "lines": t.lines, "tenants": t.tenants, "monthly_uplift": t.monthly_uplift,
                "notice_date": notice, "effective_date": effective,
            }),
            actor: &who.actor,
        },
    )
    .await
}

/// Records the `ecri.approved` event; the delivery jobs to push after commit.
async fn record_event(conn: &mut PgConnection, who: &Who, a: &Approval<'_>) -> Result<Vec<Uuid>> {
    let (t, id) = (&a.totals, a.batch.id);
    let body = crate::webhooks::event_body(
        crate::webhooks::ECRI_APPROVED,
        who.company,
        serde_json::json!({
            "batch_id": id,
            "facility_id": a.batch.facility_id,
            "facility_name": a.batch.facility_name,
            "approved_at": a.approved_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "approved_by": who.actor,
            "notice_date": a.notice,
            "effective_date": a.effective,
            "line_count": t.lines,
            "tenant_count": t.tenants,
            "monthly_uplift": t.monthly_uplift,
        }),
    );
    crate::webhooks::record_event(conn, who.company, crate::webhooks::ECRI_APPROVED, id, &body)
        .await
}
