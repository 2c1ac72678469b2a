//! ECRI batches: the engine's rent increases for one facility gathered into a draft a revenue
//! manager edits (a new rent per line, or a line left out), approves with a notice date, and
//! mails (`letters`); once approved, the later rent rolls tell what happened (`outcome`).
//!
//! - A batch's lines are frozen when it is created: the suggestions of the rent roll (or the
//!   latest snapshot's cohorts) in force then, with an increase. A tenant with an approved
//!   increase not yet in force (its effective date after the roll's date) is not suggested again.
//! - An edited rent passes the same guardrails as the engine's choice (`domain::ecri::reprice`);
//!   the refusal names the line and the guardrail.
//! - Approving sets the notice date (today in the company's time zone, or a given date up to 90
//!   days ahead) and the effective date (the notice date plus the facility's notice days),
//!   records the `ecri.approved` webhook event, and is refused (409) when a tenant of the batch
//!   has another approved increase not yet in force.
//! - The holdout (`holdout_pct`, off by default): that share of the eligible tenants is drawn at
//!   random and left out as a control group (a customer's units together), so the outcome can
//!   measure the lift.
//!
//! Every change is recorded in the facility's decision log with its actor.

mod letters;
pub mod outcome;

pub use letters::{letters, Letter, Letters};
pub use outcome::Outcome;

use crate::actor::Actor;
use crate::audit::Change;
use crate::decisions;
use crate::door::{self, Committed, Jobs, Who};
use crate::ecri::{self, Basis, TenantLine};
use crate::error::{Error, Result, ValidationError};
use crate::queue::Kind;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use domain::ecri::reprice;
use domain::ids::{CompanyId, FacilityId};
use domain::pricing::engine::size_key;
use domain::values::round2;
use rand::seq::SliceRandom;
use sqlx::{PgConnection, PgPool};
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// Most sizes or tenant ids one filter names.
pub const MAX_FILTER: usize = 10_000;
/// Most edits one request makes.
pub const MAX_EDITS: usize = 10_000;
/// Batches one list answers, newest first.
pub const MAX_LISTED: i64 = 200;
/// Furthest a notice date may be set ahead of today.
pub const MAX_NOTICE_AHEAD_DAYS: i64 = 90;

/// A batch's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Draft,
    Approved,
    Cancelled,
}

impl Status {
    /// A status by its name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "draft" => Some(Self::Draft),
            "approved" => Some(Self::Approved),
            "cancelled" => Some(Self::Cancelled),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Approved => "approved",
            Self::Cancelled => "cancelled",
        }
    }
}

/// One line: a tenant (a cohort when only cohorts are known) and its increase.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub line: i32,
    /// None for a cohort.
    pub tenant_id: Option<String>,
    pub customer_id: Option<String>,
    pub size: String,
    pub months_since_last_increase: Option<f64>,
    pub tenant_count: i32,
    pub current_rent: f64,
    /// The engine's suggestion when the batch was made.
    pub suggested_rent: f64,
    /// The rent the notice will give.
    pub new_rent: f64,
    /// Chance (0 to 1) each tenant is still in place 90 days after the notice.
    pub stay_probability: f64,
    /// Expected revenue over the horizon against no increase, for all the line's tenants.
    pub expected_gain: f64,
    pub edited: bool,
    pub excluded: bool,
    /// The figures the rent rests on (`domain::ecri::Reason`s).
    pub reasons: serde_json::Value,
}

impl Line {
    pub fn increase(&self) -> f64 {
        round2(self.new_rent - self.current_rent)
    }

    pub fn increase_pct(&self) -> f64 {
        if self.current_rent > 0.0 {
            round2((self.new_rent / self.current_rent - 1.0) * 100.0)
        } else {
            0.0
        }
    }
}

/// Sums over a batch's lines that are not excluded.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    pub lines: u32,
    pub excluded_lines: u32,
    pub tenants: i64,
    pub current_monthly_rent: f64,
    pub new_monthly_rent: f64,
    /// Added rent per month if every tenant stays.
    pub monthly_uplift: f64,
    pub expected_gain: f64,
}

#[derive(Clone, Debug)]
pub struct Batch {
    pub id: Uuid,
    pub facility_id: Uuid,
    pub facility_name: String,
    pub status: Status,
    pub basis: Basis,
    /// The date of the roll (or snapshot) the lines were drawn from.
    pub as_of: NaiveDate,
    pub notice_days: i32,
    pub horizon_months: f64,
    pub holdout_pct: f64,
    /// Tenants held out as the control group.
    pub held_out: i64,
    pub created_by: Actor,
    pub created_at: DateTime<Utc>,
    pub approved_by: Option<Actor>,
    pub approved_at: Option<DateTime<Utc>>,
    pub notice_date: Option<NaiveDate>,
    pub effective_date: Option<NaiveDate>,
    pub cancelled_by: Option<Actor>,
    pub cancelled_at: Option<DateTime<Utc>>,
    pub lines: Vec<Line>,
}

impl Batch {
    pub fn totals(&self) -> Totals {
        totals(&self.lines)
    }
}

fn totals(lines: &[Line]) -> Totals {
    let mut t = Totals::default();
    for l in lines {
        if l.excluded {
            t.excluded_lines += 1;
            continue;
        }
        let n = f64::from(l.tenant_count);
        t.lines += 1;
        t.tenants += i64::from(l.tenant_count);
        t.current_monthly_rent += l.current_rent * n;
        t.new_monthly_rent += l.new_rent * n;
        t.expected_gain += l.expected_gain;
    }
    t.monthly_uplift = round2(t.new_monthly_rent - t.current_monthly_rent);
    t.current_monthly_rent = round2(t.current_monthly_rent);
    t.new_monthly_rent = round2(t.new_monthly_rent);
    t.expected_gain = round2(t.expected_gain);
    t
}

/// Which suggestions a new batch takes: every one with an increase, or those of some sizes
/// and/or some tenants.
#[derive(Clone, Debug, Default)]
pub struct NewBatch {
    pub sizes: Option<Vec<String>>,
    pub tenant_ids: Option<Vec<String>>,
}

/// One edit of a draft's line.
#[derive(Clone, Debug)]
pub struct LineEdit {
    pub line: i32,
    pub new_rent: Option<f64>,
    pub excluded: Option<bool>,
}

/// A key that names the same tenant (or cohort) across batches.
fn key(tenant_id: Option<&str>, size: &str, months: Option<f64>) -> String {
    match tenant_id {
        Some(t) if !t.is_empty() => format!("t:{t}"),
        _ => format!(
            "c:{}:{}",
            size_key(size),
            months.map_or(-1, |m| (m * 100.0).round() as i64)
        ),
    }
}

/// The tenants (keys) of the facility's approved batches whose increases take effect after
/// `date`, with the batch that holds each.
async fn pending_increases(
    conn: &mut PgConnection,
    facility_id: Uuid,
    date: NaiveDate,
    except: Option<Uuid>,
) -> Result<BTreeMap<String, Uuid>> {
    let rows = sqlx::query!(
        r#"SELECT b.id, l.tenant_id, l.size, l.months_since_last_increase
           FROM ecri_batches b JOIN ecri_batch_lines l ON l.batch_id = b.id
           WHERE b.facility_id = $1 AND b.status = 'approved' AND b.effective_date > $2
             AND NOT l.excluded AND ($3::uuid IS NULL OR b.id <> $3)"#,
        facility_id,
        date,
        except
    )
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            (
                key(
                    r.tenant_id.as_deref(),
                    &r.size,
                    r.months_since_last_increase,
                ),
                r.id,
            )
        })
        .collect())
}

fn check_filter(name: &str, values: &Option<Vec<String>>) -> Result<(), ValidationError> {
    let Some(values) = values else {
        return Ok(());
    };
    if values.is_empty() {
        return Err(ValidationError::new(
            name,
            "must name at least one (leave it out for every suggestion)",
        ));
    }
    if values.len() > MAX_FILTER {
        return Err(ValidationError::new(
            name,
            format!("at most {MAX_FILTER}, got {}", values.len()),
        ));
    }
    if let Some(i) = values
        .iter()
        .position(|v| v.trim().is_empty() || v.chars().count() > 100)
    {
        return Err(ValidationError::new(
            format!("{name}[{i}]"),
            "must be 1 to 100 characters",
        ));
    }
    Ok(())
}

/// The lines a filter keeps; an unknown size or tenant is an error naming it.
fn filtered<'a>(all: &'a [TenantLine], filter: &NewBatch) -> Result<Vec<&'a TenantLine>> {
    check_filter("sizes", &filter.sizes)?;
    check_filter("tenant_ids", &filter.tenant_ids)?;
    let sizes: Option<BTreeSet<String>> = filter
        .sizes
        .as_ref()
        .map(|s| s.iter().map(|s| size_key(s)).collect());
    if let Some(given) = &filter.sizes {
        let known: BTreeSet<String> = all.iter().map(|l| size_key(&l.size)).collect();
        if let Some(i) = given.iter().position(|s| !known.contains(&size_key(s))) {
            return Err(ValidationError::new(
                format!("sizes[{i}]"),
                format!("no tenant of size '{}' in the roll", given[i]),
            )
            .into());
        }
    }
    let tenants: Option<BTreeSet<&str>> = filter
        .tenant_ids
        .as_ref()
        .map(|t| t.iter().map(|t| t.trim()).collect());
    if let Some(given) = &filter.tenant_ids {
        let known: BTreeSet<&str> = all.iter().map(|l| l.input.tenant_id.as_str()).collect();
        if let Some(i) = given.iter().position(|t| !known.contains(t.trim())) {
            return Err(ValidationError::new(
                format!("tenant_ids[{i}]"),
                format!("no tenant '{}' in the rent roll", given[i]),
            )
            .into());
        }
    }
    Ok(all
        .iter()
        .filter(|l| {
            sizes
                .as_ref()
                .is_none_or(|s| s.contains(&size_key(&l.size)))
                && tenants
                    .as_ref()
                    .is_none_or(|t| t.contains(l.input.tenant_id.as_str()))
        })
        .collect())
}

/// Draws the control group: `pct` % of the lines (rounded), a customer's units together, at
/// random. Returns (kept, held out).
fn draw_holdout(lines: Vec<&TenantLine>, pct: f64) -> (Vec<&TenantLine>, Vec<&TenantLine>) {
    if pct <= 0.0 || lines.is_empty() {
        return (lines, Vec::new());
    }
    // A customer's units stay together, so the customer rule holds in both groups.
    let mut groups: BTreeMap<String, Vec<&TenantLine>> = BTreeMap::new();
    for l in lines {
        let g = l
            .input
            .customer_id
            .clone()
            .map_or_else(|| format!("t:{}", l.input.tenant_id), |c| format!("c:{c}"));
        groups.entry(g).or_default().push(l);
    }
    let total: usize = groups.values().map(Vec::len).sum();
    let want = ((total as f64) * pct / 100.0).round() as usize;
    let mut order: Vec<Vec<&TenantLine>> = groups.into_values().collect();
    order.shuffle(&mut rand::thread_rng());
    let (mut kept, mut held) = (Vec::new(), Vec::new());
    for g in order {
        if held.len() + g.len() <= want {
            held.extend(g);
        } else {
            kept.extend(g);
        }
    }
    let by_order = |a: &&TenantLine, b: &&TenantLine| {
        (a.size.as_str(), a.input.tenant_id.as_str())
            .cmp(&(b.size.as_str(), b.input.tenant_id.as_str()))
    };
    kept.sort_by(by_order);
    held.sort_by(by_order);
    (kept, held)
}

/// Creates a draft from the facility's current suggestions (those of `filter`).
pub async fn create(
    pool: &PgPool,
    who: &Who,
    facility_id: FacilityId,
    filter: &NewBatch,
) -> Result<Committed<Batch>> {
    let (company_id, actor) = (who.company, &who.actor);
    let f = ecri::facility(pool, company_id, facility_id).await?;
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
    let pending = pending_increases(&mut conn, f.facility_id, as_of, None).await?;
    drop(conn);
    let suggested: Vec<&TenantLine> = chosen
        .into_iter()
        .filter(|l| l.suggestion.increase > 0.0)
        .collect();
    let suggested_count = suggested.len();
    let eligible: Vec<&TenantLine> = suggested
        .into_iter()
        .filter(|l| {
            !pending.contains_key(&key(
                Some(l.input.tenant_id.as_str()),
                &l.size,
                l.months_since_last_increase,
            ))
        })
        .collect();
    let holdout_pct = match basis {
        Basis::RentRoll => f.settings.holdout_pct,
        // A cohort is not a tenant that can be drawn.
        Basis::Cohorts => 0.0,
    };
    let (kept, held) = draw_holdout(eligible, holdout_pct);
    if kept.is_empty() {
        let why = if suggested_count > 0 && held.is_empty() {
            "every suggested increase is in an approved batch not yet in force".to_owned()
        } else if suggested_count > 0 {
            "every eligible tenant was drawn into the holdout".to_owned()
        } else if let Some(stop) = f.stop_loss {
            format!(
                "increases are held by the stop-loss ({:.1} % of increased tenants left within 90 days against {:.1} %)",
                stop.increased_move_out_pct, stop.baseline_move_out_pct
            )
        } else {
            "no tenant of the selection has a suggested increase".to_owned()
        };
        return Err(Error::Conflict(format!("no suggestions to batch: {why}")));
    }
    let id = Uuid::now_v7();
    let lines: Vec<Line> = kept
        .iter()
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
            }
        })
        .collect();
    let t = totals(&lines);
    let mut tx = pool.begin().await?;
    sqlx::query!(
        "INSERT INTO ecri_batches (id, company_id, facility_id, basis, as_of, notice_days,
                                   horizon_months, holdout_pct, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        id,
        company_id.uuid(),
        f.facility_id,
        basis_str(basis),
        as_of,
        i32::try_from(f.settings.notice_days).unwrap_or(30),
        f.settings.horizon_months,
        holdout_pct,
        actor.json()
    )
    .execute(&mut *tx)
    .await?;
    insert_lines(&mut tx, id, &lines).await?;
    insert_controls(&mut tx, id, &held).await?;
    decisions::record(
        &mut tx,
        decisions::Entry {
            company_id,
            facility_id,
            action: "ecri_batch.created",
            subject_id: id,
            summary: format!(
                "Created an ECRI batch of {} lines ({} tenants), {} a month more if all stay{}",
                t.lines,
                t.tenants,
                money(t.monthly_uplift),
                if held.is_empty() {
                    String::new()
                } else {
                    format!("; {} tenants held out as the control group", held.len())
                }
            ),
            detail: serde_json::json!({
                "lines": t.lines, "tenants": t.tenants, "monthly_uplift": t.monthly_uplift,
                "held_out": held.len(), "as_of": as_of,
            }),
            actor,
        },
    )
    .await?;
    let change = Change::new("ecri_batch.create")
        .target("ecri_batch", id)
        .facility(facility_id.uuid())
        .values(None, Some(serde_json::json!({ "lines": t.lines, "tenants": t.tenants, "monthly_uplift": t.monthly_uplift, "held_out": held.len() })));
    let done = door::commit(tx, who, change, (), Jobs::none()).await?;
    let batch = get(pool, company_id, facility_id, id).await?;
    Ok(done.map(|()| batch))
}

/// The engine's percent as a probability, to 4 decimals.
fn probability(pct: f64) -> f64 {
    (pct * 100.0).round() / 10_000.0
}

/// An amount for a sentence: two decimals, no currency (the log is currency-neutral).
fn money(v: f64) -> String {
    format!("{v:.2}")
}

fn basis_str(b: Basis) -> &'static str {
    match b {
        Basis::RentRoll => "rent_roll",
        Basis::Cohorts => "cohorts",
    }
}

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

async fn insert_controls(
    conn: &mut PgConnection,
    batch_id: Uuid,
    held: &[&TenantLine],
) -> Result<()> {
    if held.is_empty() {
        return Ok(());
    }
    let tenant: Vec<String> = held.iter().map(|l| l.input.tenant_id.clone()).collect();
    let size: Vec<String> = held.iter().map(|l| l.size.clone()).collect();
    let rent: Vec<f64> = held.iter().map(|l| l.suggestion.current_rent).collect();
    let suggested: Vec<f64> = held.iter().map(|l| l.suggestion.new_rent).collect();
    sqlx::query!(
        "INSERT INTO ecri_batch_controls (batch_id, tenant_id, size, current_rent, suggested_rent)
         SELECT $1, u.t, u.s, u.r, u.n
         FROM UNNEST($2::text[], $3::text[], $4::float8[], $5::float8[]) AS u(t, s, r, n)",
        batch_id,
        &tenant,
        &size,
        &rent,
        &suggested
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A batch as lists show it: the batch (its lines read once, for the totals and for pages that
/// chart the batches' outcomes) with its totals.
#[derive(Clone, Debug)]
pub struct Summary {
    pub batch: Batch,
    pub totals: Totals,
}

/// The facility's batches, newest first (of one status when given), at most [`MAX_LISTED`].
pub async fn list(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
    status: Option<Status>,
) -> Result<Vec<Summary>> {
    crate::facilities::ensure_owned(pool, company_id, facility_id).await?;
    let ids: Vec<Uuid> = sqlx::query_scalar!(
        "SELECT id FROM ecri_batches
         WHERE company_id = $1 AND facility_id = $2 AND ($3::text IS NULL OR status = $3)
         ORDER BY created_at DESC, id DESC LIMIT $4",
        company_id.uuid(),
        facility_id.uuid(),
        status.map(Status::as_str),
        MAX_LISTED
    )
    .fetch_all(pool)
    .await?;
    let batches = load(pool, company_id, &ids).await?;
    Ok(batches
        .into_iter()
        .map(|b| Summary {
            totals: b.totals(),
            batch: b,
        })
        .collect())
}

/// One batch with its lines (404 unless it is the company's and the facility's).
pub async fn get(
    pool: &PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
    id: Uuid,
) -> Result<Batch> {
    load(pool, company_id, &[id])
        .await?
        .into_iter()
        .find(|b| b.facility_id == facility_id.uuid())
        .ok_or_else(|| Error::not_found(format!("no ECRI batch with id {id}")))
}

/// Batches of the company by id, in the order given, with their lines.
async fn load(pool: &PgPool, company_id: CompanyId, ids: &[Uuid]) -> Result<Vec<Batch>> {
    let rows = sqlx::query!(
        r#"SELECT b.id, b.facility_id, f.name AS facility_name, b.status, b.basis, b.as_of,
                  b.notice_days, b.horizon_months, b.holdout_pct, b.created_by, b.created_at,
                  b.approved_by, b.approved_at, b.notice_date, b.effective_date, b.cancelled_by,
                  b.cancelled_at,
                  (SELECT count(*) FROM ecri_batch_controls c WHERE c.batch_id = b.id) AS "held_out!"
           FROM ecri_batches b JOIN facilities f ON f.id = b.facility_id
           WHERE b.company_id = $1 AND b.id = ANY($2)"#,
        company_id.uuid(),
        ids
    )
    .fetch_all(pool)
    .await?;
    let lines = sqlx::query!(
        r#"SELECT batch_id, line_no, tenant_id, customer_id, size, months_since_last_increase,
                  tenant_count, current_rent, suggested_rent, new_rent, stay_probability,
                  expected_gain, edited, excluded, reasons
           FROM ecri_batch_lines WHERE batch_id = ANY($1) ORDER BY batch_id, line_no"#,
        ids
    )
    .fetch_all(pool)
    .await?;
    let mut by_batch: BTreeMap<Uuid, Vec<Line>> = BTreeMap::new();
    for l in lines {
        by_batch.entry(l.batch_id).or_default().push(Line {
            line: l.line_no,
            tenant_id: l.tenant_id,
            customer_id: l.customer_id,
            size: l.size,
            months_since_last_increase: l.months_since_last_increase,
            tenant_count: l.tenant_count,
            current_rent: l.current_rent,
            suggested_rent: l.suggested_rent,
            new_rent: l.new_rent,
            stay_probability: l.stay_probability,
            expected_gain: l.expected_gain,
            edited: l.edited,
            excluded: l.excluded,
            reasons: l.reasons,
        });
    }
    let mut batches: BTreeMap<Uuid, Batch> = rows
        .into_iter()
        .map(|r| {
            let b = Batch {
                id: r.id,
                facility_id: r.facility_id,
                facility_name: r.facility_name,
                status: Status::parse(&r.status).unwrap_or(Status::Draft),
                basis: if r.basis == "cohorts" {
                    Basis::Cohorts
                } else {
                    Basis::RentRoll
                },
                as_of: r.as_of,
                notice_days: r.notice_days,
                horizon_months: r.horizon_months,
                holdout_pct: r.holdout_pct,
                held_out: r.held_out,
                created_by: Actor::from_json(&r.created_by),
                created_at: r.created_at,
                approved_by: r.approved_by.as_ref().map(Actor::from_json),
                approved_at: r.approved_at,
                notice_date: r.notice_date,
                effective_date: r.effective_date,
                cancelled_by: r.cancelled_by.as_ref().map(Actor::from_json),
                cancelled_at: r.cancelled_at,
                lines: by_batch.remove(&r.id).unwrap_or_default(),
            };
            (r.id, b)
        })
        .collect();
    Ok(ids.iter().filter_map(|id| batches.remove(id)).collect())
}

/// Locks a draft of the company's facility for a change; 404 when it is not theirs, 409 when it
/// is no longer a draft.
async fn lock_draft(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    id: Uuid,
    doing: &str,
) -> Result<()> {
    let status = sqlx::query_scalar!(
        "SELECT status FROM ecri_batches WHERE company_id = $1 AND facility_id = $2 AND id = $3
         FOR UPDATE",
        company_id.uuid(),
        facility_id.uuid(),
        id
    )
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no ECRI batch with id {id}")))?;
    if status != "draft" {
        return Err(Error::Conflict(format!(
            "the batch is {status}: only a draft can be {doing}"
        )));
    }
    Ok(())
}

/// Edits a draft's lines: a new rent (checked against every guardrail, with the stay model of
/// now) or a line left out (or back in). All or nothing: one bad edit writes nothing.
pub async fn edit(
    pool: &PgPool,
    who: &Who,
    facility_id: FacilityId,
    id: Uuid,
    edits: &[LineEdit],
) -> Result<Committed<Batch>> {
    let (company_id, actor) = (who.company, &who.actor);
    if edits.is_empty() {
        return Err(ValidationError::new("lines", "must hold at least one edit").into());
    }
    if edits.len() > MAX_EDITS {
        return Err(ValidationError::new("lines", format!("at most {MAX_EDITS} edits")).into());
    }
    let batch = get(pool, company_id, facility_id, id).await?;
    if batch.status != Status::Draft {
        return Err(Error::Conflict(format!(
            "the batch is {}: only a draft can be edited",
            batch.status.as_str()
        )));
    }
    let mut seen = BTreeSet::new();
    for (i, e) in edits.iter().enumerate() {
        if !seen.insert(e.line) {
            return Err(ValidationError::new(
                format!("lines[{i}].line"),
                format!("line {} is edited twice", e.line),
            )
            .into());
        }
        if e.new_rent.is_none() && e.excluded.is_none() {
            return Err(ValidationError::new(
                format!("lines[{i}]"),
                "must give new_rent or excluded",
            )
            .into());
        }
        if !batch.lines.iter().any(|l| l.line == e.line) {
            return Err(ValidationError::new(
                format!("lines[{i}].line"),
                format!("no line {} in the batch", e.line),
            )
            .into());
        }
    }
    // A new rent is weighed with the facility's stay model and market of now.
    let needs_engine = edits.iter().any(|e| e.new_rent.is_some());
    let now = if needs_engine {
        Some(ecri::facility(pool, company_id, facility_id).await?)
    } else {
        None
    };
    let mut changed: Vec<Line> = Vec::new();
    for (i, e) in edits.iter().enumerate() {
        let mut l = batch
            .lines
            .iter()
            .find(|l| l.line == e.line)
            .cloned()
            .expect("checked above");
        if let Some(x) = e.excluded {
            l.excluded = x;
        }
        if let Some(rent) = e.new_rent {
            let f = now.as_ref().expect("read when a rent is edited");
            let at = |what: &str| format!("lines[{i}].{what}");
            let input = f
                .lines
                .iter()
                .find(|t| {
                    key(
                        Some(t.input.tenant_id.as_str()),
                        &t.size,
                        t.months_since_last_increase,
                    ) == key(
                        l.tenant_id.as_deref(),
                        &l.size,
                        l.months_since_last_increase,
                    )
                })
                .map(|t| t.input.clone())
                .ok_or_else(|| {
                    ValidationError::new(
                        at("line"),
                        format!(
                            "line {}: {} is no longer in the rent roll{}",
                            l.line,
                            l.tenant_id.as_deref().map_or_else(
                                || format!("the {} cohort", l.size),
                                |t| format!("tenant {t}")
                            ),
                            f.as_of.map(|d| format!(" of {d}")).unwrap_or_default()
                        ),
                    )
                })?;
            let mut input = input;
            // The batch is about the rent it was made for.
            input.rent = l.current_rent;
            let market = f.markets.get(&l.size).ok_or_else(|| {
                ValidationError::new(
                    at("new_rent"),
                    format!("line {}: no street rate for {}", l.line, l.size),
                )
            })?;
            let s = reprice(&input, market, &f.model.model, &f.settings, rent).map_err(|r| {
                ValidationError::new(
                    at("new_rent"),
                    format!(
                        "line {}: {rent:.2} breaks the guardrail {}: {}",
                        l.line,
                        r.guardrail.name(),
                        r.text
                    ),
                )
            })?;
            l.new_rent = round2(rent);
            l.edited = true;
            l.stay_probability = probability(s.stay_probability);
            l.expected_gain = s.expected_gain;
            l.reasons = serde_json::to_value(&s.reasons).unwrap_or_default();
        }
        changed.push(l);
    }
    let mut tx = pool.begin().await?;
    lock_draft(&mut tx, company_id, facility_id, id, "edited").await?;
    for l in &changed {
        sqlx::query!(
            "UPDATE ecri_batch_lines SET new_rent = $3, edited = $4, excluded = $5,
                    stay_probability = $6, expected_gain = $7, reasons = $8
             WHERE batch_id = $1 AND line_no = $2",
            id,
            l.line,
            l.new_rent,
            l.edited,
            l.excluded,
            l.stay_probability,
            l.expected_gain,
            l.reasons
        )
        .execute(&mut *tx)
        .await?;
    }
    let described: Vec<String> = changed
        .iter()
        .map(|l| {
            let who = l
                .tenant_id
                .clone()
                .unwrap_or_else(|| format!("{} cohort", l.size));
            if l.excluded {
                format!("line {} ({who}) left out", l.line)
            } else {
                format!("line {} ({who}) at {}", l.line, money(l.new_rent))
            }
        })
        .collect();
    decisions::record(
        &mut tx,
        decisions::Entry {
            company_id,
            facility_id,
            action: "ecri_batch.edited",
            subject_id: id,
            summary: format!("Edited the ECRI batch: {}", described.join(", ")),
            detail: serde_json::json!({
                "lines": changed.iter().map(|l| serde_json::json!({
                    "line": l.line, "tenant_id": l.tenant_id, "new_rent": l.new_rent,
                    "excluded": l.excluded,
                })).collect::<Vec<_>>(),
            }),
            actor,
        },
    )
    .await?;
    let change = Change::new("ecri_batch.edit")
        .target("ecri_batch", id)
        .facility(facility_id.uuid())
        .values(None, Some(serde_json::json!({ "lines": changed.iter().map(|l| serde_json::json!({
            "line": l.line, "tenant_id": l.tenant_id, "new_rent": l.new_rent, "excluded": l.excluded,
        })).collect::<Vec<_>>() })));
    let done = door::commit(tx, who, change, (), Jobs::none()).await?;
    let batch = get(pool, company_id, facility_id, id).await?;
    Ok(done.map(|()| batch))
}

/// What an approval answers: the batch and the webhook deliveries to push after commit.
pub struct Approved {
    pub batch: Batch,
    pub delivery_jobs: Vec<Uuid>,
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

/// Approves a draft: the notice date (today in the company's time zone unless given, not
/// before today and at most [`MAX_NOTICE_AHEAD_DAYS`] ahead), the effective date (notice plus
/// the facility's notice days), the decision log, and the `ecri.approved` event.
pub async fn approve(
    pool: &PgPool,
    who: &Who,
    facility_id: FacilityId,
    id: Uuid,
    notice_date: Option<NaiveDate>,
) -> Result<Committed<Approved>> {
    let (company_id, actor) = (who.company, &who.actor);
    let (settings, _) = ecri::settings(pool, company_id, facility_id).await?;
    let mut tx = pool.begin().await?;
    lock_draft(&mut tx, company_id, facility_id, id, "approved").await?;
    let today = company_today(&mut tx, company_id).await?;
    let notice = notice_date.unwrap_or(today);
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
    let effective = notice + Duration::days(i64::from(settings.notice_days));
    let batch = get(pool, company_id, facility_id, id).await?;
    let t = batch.totals();
    if t.lines == 0 {
        return Err(Error::Conflict(
            "every line of the batch is left out: nothing to approve".to_owned(),
        ));
    }
    let pending = pending_increases(&mut tx, batch.facility_id, notice, Some(id)).await?;
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
    decisions::record(
        &mut tx,
        decisions::Entry {
            company_id,
            facility_id,
            action: "ecri_batch.approved",
            subject_id: id,
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
            actor,
        },
    )
    .await?;
    let body = crate::webhooks::event_body(
        crate::webhooks::ECRI_APPROVED,
        company_id,
        serde_json::json!({
            "batch_id": id,
            "facility_id": batch.facility_id,
            "facility_name": batch.facility_name,
            "approved_at": approved_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "approved_by": actor,
            "notice_date": notice,
            "effective_date": effective,
            "line_count": t.lines,
            "tenant_count": t.tenants,
            "monthly_uplift": t.monthly_uplift,
        }),
    );
    let delivery_jobs = crate::webhooks::record_event(
        &mut tx,
        company_id,
        crate::webhooks::ECRI_APPROVED,
        id,
        &body,
    )
    .await?;
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
    let jobs = Jobs::of(Kind::WebhookDelivery, delivery_jobs.iter().copied());
    let done = door::commit(tx, who, change, (), jobs).await?;
    let batch = get(pool, company_id, facility_id, id).await?;
    Ok(done.map(|()| Approved {
        batch,
        delivery_jobs,
    }))
}

/// Cancels a draft (an approved batch has been sent: it stays, and its outcome is watched).
pub async fn cancel(
    pool: &PgPool,
    who: &Who,
    facility_id: FacilityId,
    id: Uuid,
) -> Result<Committed<Batch>> {
    let (company_id, actor) = (who.company, &who.actor);
    let mut tx = pool.begin().await?;
    lock_draft(&mut tx, company_id, facility_id, id, "cancelled").await?;
    sqlx::query!(
        "UPDATE ecri_batches SET status = 'cancelled', cancelled_by = $2, cancelled_at = now()
         WHERE id = $1",
        id,
        actor.json()
    )
    .execute(&mut *tx)
    .await?;
    decisions::record(
        &mut tx,
        decisions::Entry {
            company_id,
            facility_id,
            action: "ecri_batch.cancelled",
            subject_id: id,
            summary: "Cancelled the ECRI batch".to_owned(),
            detail: serde_json::json!({}),
            actor,
        },
    )
    .await?;
    let change = Change::new("ecri_batch.cancel")
        .target("ecri_batch", id)
        .facility(facility_id.uuid());
    let done = door::commit(tx, who, change, (), Jobs::none()).await?;
    let batch = get(pool, company_id, facility_id, id).await?;
    Ok(done.map(|()| batch))
}
