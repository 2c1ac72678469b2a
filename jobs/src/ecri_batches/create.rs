//! Creating a batch: a draft of the facility's current suggestions with an increase (those of
//! a filter), less the tenants with an approved increase not yet in force and the holdout.

use super::filter::filtered;
use super::recheck::{self, History};
use super::{company_today, get, key, money, probability, totals, Batch, Line, NewBatch, Totals};
use crate::audit::Change;
use crate::decisions;
use crate::door::{self, Committed, Jobs, Who};
use crate::ecri::{self, Basis, StopLoss, TenantLine};
use crate::error::{Error, Result};
use chrono::NaiveDate;
use domain::ids::FacilityId;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// Creates a draft from the facility's latest stored ECRI run (its lines of `filter`); 409 when
/// it has none yet. Approval weighs every line again against the data of its moment.
pub async fn create(
    pool: &PgPool,
    who: &Who,
    facility_id: FacilityId,
    filter: &NewBatch,
) -> Result<Committed<Batch>> {
    let (company_id, actor) = (who.company, &who.actor);
    let latest = ecri::runs::latest(pool, company_id, facility_id).await?;
    let Some(run) = latest.run else {
        return Err(Error::Conflict(match latest.pending_job {
            Some(job) => format!(
                "no suggestions to batch yet: the facility's first ECRI run is on its way (job {job})"
            ),
            None => "no suggestions to batch: the facility has no ECRI run yet; ask for one with GET /api/v1/facilities/{id}/ecri?fresh=true".replace("{id}", &facility_id.to_string()),
        }));
    };
    let run_id = run.id;
    let f = run.ecri;
    let (Some(basis), Some(as_of)) = (f.basis, f.as_of) else {
        return Err(Error::Conflict(format!(
            "no suggestions to batch: {}",
            f.reason
                .as_deref()
                .unwrap_or("the facility has no snapshot yet")
        )));
    };
    let chosen = filtered(&f.lines, filter)?;
    let mut conn = pool.acquire().await?;
    let history = recheck::history(&mut conn, f.facility_id, None).await?;
    let today = company_today(&mut conn, company_id).await?;
    drop(conn);
    // The increase would be sent today at the earliest.
    let dates = recheck::Dates::noticed(today, &f.settings);
    let (suggested_count, kept) = eligible(chosen, &history, dates, &f.settings);
    let holdout_pct = match basis {
        Basis::RentRoll => f.settings.holdout_pct,
        // A cohort is not a tenant that can be drawn.
        Basis::Cohorts => 0.0,
    };
    if kept.is_empty() {
        let why = why_nothing(suggested_count, f.stop_loss);
        return Err(Error::Conflict(format!("no suggestions to batch: {why}")));
    }
    let id = Uuid::now_v7();
    let lines = new_lines(&kept);
    let t = totals(&lines);
    let mut tx = pool.begin().await?;
    sqlx::query!(
        "INSERT INTO ecri_batches (id, company_id, facility_id, basis, as_of, notice_days,
                                   horizon_months, holdout_pct, created_by, ecri_run_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        id,
        company_id.uuid(),
        f.facility_id,
        basis_str(basis),
        as_of,
        i32::try_from(f.settings.notice_days).unwrap_or(30),
        f.settings.horizon_months,
        holdout_pct,
        actor.json(),
        run_id
    )
    .execute(&mut *tx)
    .await?;
    insert_lines(&mut tx, id, &lines).await?;
    log_created(&mut tx, who, facility_id, id, &t, as_of).await?;
    let change = Change::new("ecri_batch.create")
        .target("ecri_batch", id)
        .facility(facility_id.uuid())
        .values(None, Some(serde_json::json!({ "lines": t.lines, "tenants": t.tenants, "monthly_uplift": t.monthly_uplift })));
    let done = door::commit(tx, who, change, (), Jobs::none()).await?;
    let batch = get(pool, company_id, facility_id, id).await?;
    Ok(done.map(|()| batch))
}

/// The chosen suggestions with an increase: how many there are, and those whose tenant has no
/// approved increase within the cooldown of `dates` (in force or pending) and is not protected
/// as another batch's control.
fn eligible<'a>(
    chosen: Vec<&'a TenantLine>,
    history: &History,
    dates: recheck::Dates,
    settings: &domain::ecri::EcriEngineSettings,
) -> (usize, Vec<&'a TenantLine>) {
    let suggested: Vec<&TenantLine> = chosen
        .into_iter()
        .filter(|l| l.suggestion.increase > 0.0)
        .collect();
    let suggested_count = suggested.len();
    let eligible: Vec<&TenantLine> = suggested
        .into_iter()
        .filter(|l| {
            let k = key(
                Some(l.input.tenant_id.as_str()),
                &l.size,
                l.months_since_last_increase,
            );
            history
                .blocks(&k, &l.input.tenant_id, dates, settings)
                .is_none()
        })
        .collect();
    (suggested_count, eligible)
}

/// Why a selection leaves no line to batch.
fn why_nothing(suggested_count: usize, stop_loss: Option<StopLoss>) -> String {
    if suggested_count > 0 {
        "every suggested increase is within the cooldown of an approved batch, or its tenant is another batch's control group".to_owned()
    } else if let Some(stop) = stop_loss {
        format!(
            "increases are held by the stop-loss ({:.1} % of increased tenants left within 90 days against {:.1} %)",
            stop.increased_move_out_pct, stop.baseline_move_out_pct
        )
    } else {
        "no tenant of the selection has a suggested increase".to_owned()
    }
}

/// The lines of a new batch, numbered from 1, each at the engine's suggested rent.
fn new_lines(kept: &[&TenantLine]) -> Vec<Line> {
    kept.iter()
        .enumerate()
        .map(|(i, l)| {
            let s = &l.suggestion;
            Line {
                line: i32::try_from(i + 1).unwrap_or(i32::MAX),
                tenant_id: (!l.input.tenant_id.is_empty()).then(|| l.input.tenant_id.clone()),
                customer_id: l.input.customer_id.clone(),
                size: l.size.clone(),
                months_since_last_increase: l.months_since_last_increase,
                tenant_count: i32::try_from(s.tenant_count.max(1)).unwrap_or(i32::MAX),
                current_rent: s.current_rent,
                suggested_rent: s.new_rent,
                new_rent: s.new_rent,
                stay_probability: probability(s.stay_probability),
                expected_gain: s.expected_gain,
                edited: false,
                excluded: false,
                reasons: serde_json::to_value(&s.reasons).unwrap_or_default(),
                dropped: None,
            }
        })
        .collect()
}

/// Records the creation in the facility's decision log.
async fn log_created(
    conn: &mut PgConnection,
    who: &Who,
    facility_id: FacilityId,
    id: Uuid,
    t: &Totals,
    as_of: NaiveDate,
) -> Result<()> {
    decisions::record(
        conn,
        decisions::Entry {
            company_id: who.company,
            facility_id,
            action: "ecri_batch.created",
            subject_id: id,
            summary: format!(
                "Created an ECRI batch of {} lines ({} tenants), {} a month more if all stay",
                t.lines,
                t.tenants,
                money(t.monthly_uplift),
            ),
            detail: serde_json::json!({
                "lines": t.lines, "tenants": t.tenants, "monthly_uplift": t.monthly_uplift,
                "as_of": as_of,
            }),
            actor: &who.actor,
        },
    )
    .await
}

/// The basis as the batch row stores it.
fn basis_str(b: Basis) -> &'static str {
    match b {
        Basis::RentRoll => "rent_roll",
        Basis::Cohorts => "cohorts",
    }
}

/// Stores the batch's lines, in one statement.
async fn insert_lines(conn: &mut PgConnection, batch_id: Uuid, lines: &[Line]) -> Result<()> {
    let mut no = Vec::with_capacity(lines.len());
    let mut tenant = Vec::with_capacity(lines.len());
    let mut customer = Vec::with_capacity(lines.len());
    let mut size = Vec::with_capacity(lines.len());
    let mut months = Vec::with_capacity(lines.len());
    let mut count = Vec::with_capacity(lines.len());
    let mut rent = Vec::with_capacity(lines.len());
    let mut suggested = Vec::with_capacity(lines.len());
    let mut stay = Vec::with_capacity(lines.len());
    let mut gain = Vec::with_capacity(lines.len());
    let mut reasons = Vec::with_capacity(lines.len());
    for l in lines {
        no.push(l.line);
        tenant.push(l.tenant_id.clone());
        customer.push(l.customer_id.clone());
        size.push(l.size.clone());
        months.push(l.months_since_last_increase);
        count.push(l.tenant_count);
        rent.push(l.current_rent);
        suggested.push(l.suggested_rent);
        stay.push(l.stay_probability);
        gain.push(l.expected_gain);
        reasons.push(l.reasons.clone());
    }
    sqlx::query!(
        r#"INSERT INTO ecri_batch_lines
               (batch_id, line_no, tenant_id, customer_id, size, months_since_last_increase,
                tenant_count, current_rent, suggested_rent, new_rent, stay_probability,
                expected_gain, reasons)
           SELECT $1, u.no, u.tenant, u.customer, u.size, u.months, u.count, u.rent,
                  u.suggested, u.suggested, u.stay, u.gain, u.reasons
           FROM UNNEST($2::int[], $3::text[], $4::text[], $5::text[], $6::float8[], $7::int[],
                       $8::float8[], $9::float8[], $10::float8[], $11::float8[], $12::jsonb[])
                AS u(no, tenant, customer, size, months, count, rent, suggested, stay, gain, reasons)"#,
        batch_id,
        &no,
        &tenant as &[Option<String>],
        &customer as &[Option<String>],
        &size,
        &months as &[Option<f64>],
        &count,
        &rent,
        &suggested,
        &stay,
        &gain,
        &reasons
    )
    .execute(conn)
    .await?;
    Ok(())
}
