//! What an approved batch did, from the rent rolls that came after it.
//!
//! - Stays: of the batch's tenants (lines not left out), how many are still in place at the
//!   effective date and 30, 60 and 90 days after; against them, the tenants of the same sizes
//!   who were in place at the notice date and not increased since (the held-out tenants among
//!   them), over the same days. A day counts once the facility's rent roll has reached it.
//! - Realized against predicted stay: the share still in place 90 days after the notice (what
//!   the engine's `stay_probability` predicts), once the roll reaches that day.
//! - Realized monthly uplift: for the increased tenants in place on the latest roll (from the
//!   effective date on), their rent now less their rent before; `applied_tenants` counts those
//!   whose rent shows the increase, so an increase the CRM never applied is not counted as
//!   earned.
//! - Lift (with a holdout): revenue per tenant over the 90 days from the effective date (or as
//!   far as the roll has reached), each day at the rent in force that day (the roll's
//!   `rent_changed` events, so a later increase counts from its own date and not before) for
//!   the days the tenant stayed, increased against held out, with a 95 % interval (Welch's t
//!   with customers as clusters, `domain::ecri::lift`). The verdict is `too_early` until the
//!   roll reaches the window's last day, `too_small` under 10 customers in a group.
//!
//! The tenants are followed from the rolls' events (`follow`), the lift is read in `lift`.

mod follow;
mod lift;

use super::{Batch, Line, Status};
use crate::ecri::Basis;
use crate::error::Result;
use chrono::{Duration, NaiveDate};
use domain::values::round2;
use follow::{count, follow, Followed};
use sqlx::PgPool;
use std::collections::BTreeSet;

/// Days after the effective date the stays are read at.
pub const CHECKPOINTS: [i64; 4] = [0, 30, 60, 90];
/// Days after the notice the engine's stay probability speaks of.
pub const STAY_DAYS: i64 = 90;
/// Days after the effective date the lift's revenue is counted over.
pub const LIFT_DAYS: i64 = 90;
/// Customers (a tenant without a customer id is one) each group needs before the lift is read
/// as telling anything.
pub const MIN_LIFT_SAMPLE: usize = domain::ecri::lift::MIN_CLUSTERS;

/// Tenants of a group and how many are in place on a day.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Group {
    pub tenants: i64,
    pub in_place: i64,
}

impl Group {
    /// Share (%) in place; none for an empty group.
    pub fn stay_pct(&self) -> Option<f64> {
        (self.tenants > 0).then(|| round2(self.in_place as f64 / self.tenants as f64 * 100.0))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// Days after the effective date.
    pub days: i64,
    pub date: NaiveDate,
    /// Whether the rent roll has reached the day (the counts are only given then).
    pub known: bool,
    pub increased: Option<Group>,
    pub not_increased: Option<Group>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Lift {
    pub increased_tenants: usize,
    pub control_tenants: usize,
    /// Customers (clusters) of each group: a customer's units are one observation.
    pub increased_clusters: usize,
    pub control_clusters: usize,
    /// The days counted, from the effective date.
    pub window_days: i64,
    /// Whether the roll reaches the window's last day (effective + 90 days).
    pub window_complete: bool,
    pub increased_revenue_per_tenant: f64,
    pub control_revenue_per_tenant: f64,
    pub lift_per_tenant: f64,
    /// The lift in % of the control group's revenue.
    pub lift_pct: Option<f64>,
    /// The 95 % interval of `lift_per_tenant`; none with under two customers in a group.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// Welch-Satterthwaite degrees of freedom, customers as the sample.
    pub degrees_of_freedom: Option<f64>,
    /// Student's t quantile the interval is drawn with (97.5 %).
    pub t_quantile: Option<f64>,
    /// `too_small`, `too_early`, `inconclusive`, `positive` or `negative`.
    pub verdict: &'static str,
    pub note: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The facility's latest rent roll.
    pub as_of: Option<NaiveDate>,
    /// `waiting` (the roll has not reached the effective date), `partial` or `complete` (the
    /// roll reaches 90 days after the effective date), or `unavailable` (a cohort batch).
    pub status: &'static str,
    pub note: Option<String>,
    pub checkpoints: Vec<Checkpoint>,
    /// Tenant-weighted mean of the lines' stay probabilities, %.
    pub predicted_stay_pct: f64,
    /// The day the stay is read at (notice + 90 days).
    pub stay_date: NaiveDate,
    pub realized_stay_pct: Option<f64>,
    pub realized_monthly_uplift: Option<f64>,
    /// Increased tenants in place whose rent shows the new rent.
    pub applied_tenants: Option<i64>,
    pub lift: Option<Lift>,
}

/// The outcome of an approved batch; none for a draft or a cancelled one.
pub async fn outcome(pool: &PgPool, batch: &Batch) -> Result<Option<Outcome>> {
    let (Status::Approved, Some(notice), Some(effective)) =
        (batch.status, batch.notice_date, batch.effective_date)
    else {
        return Ok(None);
    };
    let lines: Vec<_> = batch.lines.iter().filter(|l| !l.excluded).collect();
    let days = Days::new(notice, effective);
    let predicted = predicted_stay_pct(&lines);
    let as_of = sqlx::query_scalar!(
        "SELECT rent_roll_date FROM facilities WHERE id = $1",
        batch.facility_id
    )
    .fetch_one(pool)
    .await?;
    if batch.basis == Basis::Cohorts {
        return Ok(Some(days.unread(
            predicted,
            "unavailable",
            "a batch of cohorts has no tenants to follow: send a rent roll (`tenants` in the sync) to see outcomes".to_owned(),
            as_of,
        )));
    }
    let Some(roll) = as_of.filter(|d| *d >= effective) else {
        return Ok(Some(days.unread(
            predicted,
            "waiting",
            format!(
                "the increases take effect on {effective}; the rent roll{} has not reached that day",
                as_of.map(|d| format!(" (latest {d})")).unwrap_or_default()
            ),
            as_of,
        )));
    };
    let increased_ids: BTreeSet<&str> = lines
        .iter()
        .filter_map(|l| l.tenant_id.as_deref())
        .collect();
    let followed = follow(pool, batch, &lines, &increased_ids, notice, days.last_day).await?;
    let stay_date = days.stay_date;
    let realized_stay_pct = (roll >= stay_date)
        .then(|| count(followed.increased.values(), stay_date).stay_pct())
        .flatten();
    let (uplift, applied) = follow::realized_uplift(&lines, &followed.increased, roll);
    let lift = (batch.held_out > 0).then(|| {
        let controls: Vec<_> = followed
            .others
            .iter()
            .filter(|(_, c)| *c)
            .map(|(s, _)| s)
            .collect();
        lift::lift(
            &followed.increased.values().collect::<Vec<_>>(),
            &controls,
            effective,
            roll,
            days.last_day,
        )
    });
    let lost = increased_ids.len() - followed.increased.len();
    Ok(Some(Outcome {
        as_of: Some(roll),
        status: if roll >= days.last_day {
            "complete"
        } else {
            "partial"
        },
        note: (lost > 0).then(|| {
            format!(
                "{lost} tenants of the batch had left or were not in the roll by the notice date and are not counted"
            )
        }),
        checkpoints: days.checkpoints(roll, &followed),
        predicted_stay_pct: predicted,
        stay_date,
        realized_stay_pct,
        realized_monthly_uplift: Some(round2(uplift)),
        applied_tenants: Some(applied),
        lift,
    }))
}
/// Tenant-weighted mean of the lines' stay probabilities, %.
fn predicted_stay_pct(lines: &[&Line]) -> f64 {
    let tenants_total: i64 = lines.iter().map(|l| i64::from(l.tenant_count)).sum();
    if tenants_total > 0 {
        round2(
            lines
                .iter()
                .map(|l| l.stay_probability * 100.0 * f64::from(l.tenant_count))
                .sum::<f64>()
                / tenants_total as f64,
        )
    } else {
        0.0
    }
}

/// The days an approved batch is read at.
struct Days {
    /// Each checkpoint: days after the effective date, and its date.
    checkpoints: Vec<(i64, NaiveDate)>,
    /// The day the stay is read at (notice + [`STAY_DAYS`]).
    stay_date: NaiveDate,
    /// The last day of the lift's window (effective + [`LIFT_DAYS`]).
    last_day: NaiveDate,
}

impl Days {
    fn new(notice: NaiveDate, effective: NaiveDate) -> Self {
        Self {
            checkpoints: CHECKPOINTS
                .iter()
                .map(|&d| (d, effective + Duration::days(d)))
                .collect(),
            stay_date: notice + Duration::days(STAY_DAYS),
            last_day: effective + Duration::days(LIFT_DAYS),
        }
    }

    /// An outcome with nothing read from the rolls yet: its `status` and why.
    fn unread(
        &self,
        predicted: f64,
        status: &'static str,
        note: String,
        as_of: Option<NaiveDate>,
    ) -> Outcome {
        Outcome {
            as_of,
            status,
            note: Some(note),
            checkpoints: self
                .checkpoints
                .iter()
                .map(|&(days, date)| Checkpoint {
                    days,
                    date,
                    known: false,
                    increased: None,
                    not_increased: None,
                })
                .collect(),
            predicted_stay_pct: predicted,
            stay_date: self.stay_date,
            realized_stay_pct: None,
            realized_monthly_uplift: None,
            applied_tenants: None,
            lift: None,
        }
    }

    /// The stays of both groups at each checkpoint the roll (of `roll`) has reached.
    fn checkpoints(&self, roll: NaiveDate, followed: &Followed) -> Vec<Checkpoint> {
        self.checkpoints
            .iter()
            .map(|&(days, date)| {
                let known = roll >= date;
                Checkpoint {
                    days,
                    date,
                    known,
                    increased: known.then(|| count(followed.increased.values(), date)),
                    not_increased: known
                        .then(|| count(followed.others.iter().map(|(s, _)| s), date)),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_are_shares_and_an_empty_group_has_none() {
        let g = Group {
            tenants: 8,
            in_place: 6,
        };
        assert_eq!(g.stay_pct(), Some(75.0));
        let g = Group {
            tenants: 0,
            in_place: 0,
        };
        assert_eq!(g.stay_pct(), None);
    }
}
