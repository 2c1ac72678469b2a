//! Approving a draft: its notice and effective dates, the check that none of its tenants has
//! another increase on the way, and the `ecri.approved` webhook event.

use super::read::get_in;
use super::{
    company_today, get, holdout, lock_draft, money, recheck, Batch, Dropped, Line, Totals,
    MAX_NOTICE_AHEAD_DAYS,
};
use crate::audit::Change;
use crate::decisions;
use crate::door::{self, Committed, Jobs, Who};
use crate::ecri::{self, Basis};
use crate::error::{Error, Result, ValidationError};
use crate::queue::Kind;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use domain::ids::{CompanyId, FacilityId};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// What an approval sets, as its log entry and its event tell it.
struct Approval<'a> {
    batch: &'a Batch,
    totals: Totals,
    notice: NaiveDate,
    effective: NaiveDate,
    approved_at: DateTime<Utc>,
    /// Lines the re-check left out.
    dropped: &'a [recheck::Failing],
    /// Tenants drawn into the control group.
    held_out: usize,
}

/// How many times an approval reads the facility's engine again when the roll or the settings
/// changed between its read and its lock.
const ATTEMPTS: usize = 3;

/// Approves a draft as a fresh decision, serialized per facility: under a lock on the facility
/// (taken before any check, so concurrent approvals see each other), every line not left out is
/// checked again against the roll in force, the settings and flags of now, the stop-loss, and
/// every approved increase and control group of the facility's other batches
/// ([`recheck::failing`]). Lines that no longer pass are a 409 naming each with its guardrail;
/// with `drop_failing` they are left out with their reason and the rest approved. Then the
/// holdout is drawn (seeded, stratified, recorded), and the notice date (today in the company's
/// time zone unless given, not before today and at most [`MAX_NOTICE_AHEAD_DAYS`] ahead), the
/// effective date (notice plus the facility's notice days of now), the decision log and the
/// `ecri.approved` event are written.
pub async fn approve(
    pool: &PgPool,
    who: &Who,
    facility_id: FacilityId,
    id: Uuid,
    request: &Approve,
) -> Result<Committed<Batch>> {
    let company_id = who.company;
    for _ in 0..ATTEMPTS {
        let before = stamp(&mut *pool.acquire().await?, facility_id).await?;
        let now = ecri::facility(pool, company_id, facility_id).await?;
        let mut tx = pool.begin().await?;
        lock_facility(&mut tx, company_id, facility_id).await?;
        lock_draft(&mut tx, company_id, facility_id, id, "approved").await?;
        if stamp(&mut tx, facility_id).await? != before {
            // A roll or the settings changed between the engine's read and the lock: read again.
            tx.rollback().await?;
            continue;
        }
        let done = decide(tx, who, facility_id, id, request, &now).await?;
        let batch = get(pool, company_id, facility_id, id).await?;
        return Ok(done.map(|()| batch));
    }
    Err(Error::Conflict(
        "the facility's rent roll or settings kept changing while the batch was approved: try again"
            .to_owned(),
    ))
}

/// What an approval asks: the notice date (today when none) and whether lines that no longer
/// pass are left out (else the approval is refused naming them).
#[derive(Clone, Debug, Default)]
pub struct Approve {
    pub notice_date: Option<NaiveDate>,
    pub drop_failing: bool,
}

/// The approval under the facility's and the draft's locks, against `now`.
async fn decide(
    mut tx: sqlx::Transaction<'static, sqlx::Postgres>,
    who: &Who,
    facility_id: FacilityId,
    id: Uuid,
    request: &Approve,
    now: &ecri::FacilityEcri,
) -> Result<Committed<()>> {
    let company_id = who.company;
    let settings = &now.settings;
    let today = company_today(&mut tx, company_id).await?;
    let notice = request.notice_date.unwrap_or(today);
    check_notice(notice, today)?;
    let dates = recheck::Dates::noticed(notice, settings);
    let effective = dates.effective;
    let mut batch = get_in(&mut tx, company_id, facility_id, id).await?;
    let history = recheck::history(&mut tx, batch.facility_id, Some(id)).await?;
    let failing = recheck::failing(&batch, None, now, &history, dates);
    if !failing.is_empty() && !request.drop_failing {
        return Err(Error::Conflict(format!(
            "{} of the batch's lines no longer pass; leave them out or approve with drop_failing: {}",
            failing.len(),
            recheck::describe_all(&failing)
        )));
    }
    drop_lines(&mut tx, &mut batch, &failing).await?;
    let draw = draw_holdout(&mut tx, &mut batch, now).await?;
    let t = batch.totals();
    if t.lines == 0 {
        return Err(Error::Conflict(if failing.is_empty() {
            "every line of the batch is left out: nothing to approve".to_owned()
        } else {
            format!(
                "no line of the batch passes now: {}",
                recheck::describe_all(&failing)
            )
        }));
    }
    let approved_at = Utc::now();
    sqlx::query!(
        "UPDATE ecri_batches SET status = 'approved', approved_by = $2, approved_at = $3,
                notice_date = $4, effective_date = $5, notice_days = $6
         WHERE id = $1",
        id,
        who.actor.json(),
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
        dropped: &failing,
        held_out: draw.as_ref().map_or(0, |d| d.held.len()),
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
                "dropped": failing.iter().map(|f| serde_json::json!({
                    "line": f.line, "guardrail": f.guardrail, "reason": f.reason,
                })).collect::<Vec<_>>(),
                "held_out": a.held_out,
            })),
        );
    let mut jobs = Jobs::of(Kind::WebhookDelivery, delivery_jobs);
    // The approved tenants now hold: the facility's stored suggestions are made again.
    ecri::runs::request_into(
        &mut tx,
        company_id,
        facility_id,
        ecri::runs::Trigger::Batch,
        &mut jobs,
    )
    .await?;
    door::commit(tx, who, change, (), jobs).await
}

/// What an approval's re-check reads, as it stands: a roll applied or settings changed since
/// the engine's read show here (both take the facility's lock, which the approval holds once it
/// compares).
async fn stamp(conn: &mut PgConnection, facility_id: FacilityId) -> Result<String> {
    let r = sqlx::query!(
        r#"SELECT f.rent_roll_date, f.ecri_settings::text AS "settings!",
                  (SELECT max(t.updated_at) FROM rent_roll_tenants t
                   WHERE t.facility_id = f.id) AS tenants_at
           FROM facilities f WHERE f.id = $1"#,
        facility_id.uuid()
    )
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no facility with id {facility_id}")))?;
    Ok(format!(
        "{:?}|{}|{:?}",
        r.rent_roll_date, r.settings, r.tenants_at
    ))
}

/// Locks the facility for the approval: approvals of one facility (and rolls and settings
/// changes, which take the same lock) wait for each other.
async fn lock_facility(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<()> {
    sqlx::query_scalar!(
        "SELECT id FROM facilities WHERE company_id = $1 AND id = $2 FOR NO KEY UPDATE",
        company_id.uuid(),
        facility_id.uuid()
    )
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no facility with id {facility_id}")))?;
    Ok(())
}

/// Leaves out the lines that no longer pass (or were drawn into the holdout), each with its
/// guardrail and reason, in the database and in `batch`.
async fn drop_lines(
    conn: &mut PgConnection,
    batch: &mut Batch,
    failing: &[recheck::Failing],
) -> Result<()> {
    if failing.is_empty() {
        return Ok(());
    }
    let no: Vec<i32> = failing.iter().map(|f| f.line).collect();
    let guardrail: Vec<String> = failing.iter().map(|f| f.guardrail.clone()).collect();
    let reason: Vec<String> = failing.iter().map(|f| f.reason.clone()).collect();
    sqlx::query!(
        "UPDATE ecri_batch_lines l SET excluded = true, dropped_guardrail = u.g,
                dropped_reason = u.r
         FROM UNNEST($2::int[], $3::text[], $4::text[]) AS u(no, g, r)
         WHERE l.batch_id = $1 AND l.line_no = u.no",
        batch.id,
        &no,
        &guardrail,
        &reason
    )
    .execute(conn)
    .await?;
    for f in failing {
        if let Some(l) = batch.lines.iter_mut().find(|l| l.line == f.line) {
            l.excluded = true;
            l.dropped = Some(Dropped {
                guardrail: f.guardrail.clone(),
                reason: f.reason.clone(),
            });
        }
    }
    Ok(())
}

/// Draws the control group from the lines kept (a roll's batch with a holdout share in force),
/// stores it with its seed and strata, and leaves its lines out (guardrail `holdout`).
async fn draw_holdout(
    conn: &mut PgConnection,
    batch: &mut Batch,
    now: &ecri::FacilityEcri,
) -> Result<Option<holdout::Draw>> {
    let pct = now.settings.holdout_pct;
    if batch.basis != Basis::RentRoll || pct <= 0.0 {
        return Ok(None);
    }
    let kept: Vec<&Line> = batch.lines.iter().filter(|l| !l.excluded).collect();
    let seed: u64 = rand::random::<u64>() >> 1;
    let street = |size: &str| now.markets.get(size).map(|m| m.street_rate);
    let draw = holdout::draw(&kept, street, pct, seed);
    let held: Vec<(&Line, String)> = draw
        .held
        .iter()
        .filter_map(|(no, stratum)| {
            kept.iter()
                .find(|l| l.line == *no)
                .map(|l| (*l, stratum.clone()))
        })
        .collect();
    holdout::insert_controls(&mut *conn, batch.id, &held).await?;
    let drawn: Vec<recheck::Failing> = held
        .iter()
        .map(|(l, _)| {
            recheck::Failing::of(
                l,
                "holdout",
                "drawn into the control group: no increase, measured against the batch".to_owned(),
            )
        })
        .collect();
    sqlx::query!(
        "UPDATE ecri_batches SET holdout_pct = $2, holdout_seed = $3, holdout_strata = $4
         WHERE id = $1",
        batch.id,
        pct,
        i64::try_from(seed).unwrap_or(i64::MAX),
        draw.strata
    )
    .execute(&mut *conn)
    .await?;
    drop_lines(conn, batch, &drawn).await?;
    Ok(Some(draw))
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
                "Approved the ECRI batch: {} lines ({} tenants), notice {notice}, in force {effective}, {} a month more if all stay{}{}",
                t.lines,
                t.tenants,
                money(t.monthly_uplift),
                if a.dropped.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; {} lines left out as they no longer pass ({})",
                        a.dropped.len(),
                        recheck::describe_all(a.dropped)
                    )
                },
                if a.held_out == 0 {
                    String::new()
                } else {
                    format!("; {} tenants held out as the control group", a.held_out)
                }
            ),
            detail: serde_json::json!({
                "lines": t.lines, "tenants": t.tenants, "monthly_uplift": t.monthly_uplift,
                "notice_date": notice, "effective_date": effective, "held_out": a.held_out,
                "dropped": a.dropped.iter().map(|f| serde_json::json!({
                    "line": f.line, "guardrail": f.guardrail, "reason": f.reason,
                })).collect::<Vec<_>>(),
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
