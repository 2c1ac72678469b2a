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
//!
//! This module holds what a batch is and the checks its verbs share; each verb (`create`,
//! `edit`, `approve`, `cancel`) is a submodule, as are reading batches (`read`), the filter and
//! the holdout a new batch is drawn with, the letters and the outcome.

mod approve;
pub mod calibration;
mod cancel;
mod create;
mod edit;
mod filter;
mod holdout;
mod letters;
pub mod outcome;
mod read;
mod recheck;

pub use approve::{approve, Approve};
pub use cancel::cancel;
pub use create::create;
pub use edit::edit;
pub use letters::{letters, Letter, LetterUnit, Letters};
pub use outcome::Outcome;
pub use read::{get, list, Summary};
pub use recheck::Failing;

use crate::actor::Actor;
use crate::ecri::Basis;
use crate::error::{Error, Result};
use chrono::{DateTime, NaiveDate, Utc};
use domain::ids::{CompanyId, FacilityId};
use domain::pricing::engine::size_key;
use domain::values::round2;
use sqlx::PgConnection;
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
    /// Why the service left the line out (an approval's re-check, the holdout's draw); none
    /// when kept or left out by a person.
    pub dropped: Option<Dropped>,
}

/// Why the service left a line out: the guardrail (or `holdout`) and a sentence.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Dropped {
    pub guardrail: String,
    pub reason: String,
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
    /// The seed the holdout was drawn with (at approval), and its strata: per size and
    /// rent-to-street band, the eligible and the held-out tenants.
    pub holdout_seed: Option<i64>,
    pub holdout_strata: Option<serde_json::Value>,
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

/// The engine's percent as a probability, to 4 decimals.
fn probability(pct: f64) -> f64 {
    (pct * 100.0).round() / 10_000.0
}

/// An amount for a sentence: two decimals, no currency (the log is currency-neutral).
fn money(v: f64) -> String {
    format!("{v:.2}")
}
