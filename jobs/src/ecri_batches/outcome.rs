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
//!   far as the roll has reached), each tenant's rent for the days it stayed, increased against
//!   held out, with a 95 % confidence interval (Welch). Under 10 tenants in either group the
//!   answer says the sample is too small to tell.

use super::{Batch, Line, Status};
use crate::ecri::Basis;
use crate::error::Result;
use chrono::{Duration, NaiveDate};
use domain::pricing::engine::size_key;
use domain::values::round2;
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet};

/// Days after the effective date the stays are read at.
pub const CHECKPOINTS: [i64; 4] = [0, 30, 60, 90];
/// Days after the notice the engine's stay probability speaks of.
pub const STAY_DAYS: i64 = 90;
/// Days after the effective date the lift's revenue is counted over.
pub const LIFT_DAYS: i64 = 90;
/// Tenants each group needs before the lift is read as telling anything.
pub const MIN_LIFT_SAMPLE: usize = 10;

const MONTH_DAYS: f64 = 365.25 / 12.0;

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
    /// The days counted, from the effective date.
    pub window_days: i64,
    pub increased_revenue_per_tenant: f64,
    pub control_revenue_per_tenant: f64,
    pub lift_per_tenant: f64,
    /// The lift in % of the control group's revenue.
    pub lift_pct: Option<f64>,
    pub ci_low: f64,
    pub ci_high: f64,
    /// `too_small`, `inconclusive`, `positive` or `negative`.
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

/// A tenant as the rolls tell it.
struct Seen {
    rent: f64,
    moved_out_on: Option<NaiveDate>,
}

fn in_place(t: &Seen, day: NaiveDate) -> bool {
    t.moved_out_on.is_none_or(|d| d > day)
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
    let (uplift, applied) = realized_uplift(&lines, &followed.increased, roll);
    let lift = (batch.held_out > 0).then(|| {
        let controls: Vec<&Seen> = followed
            .others
            .iter()
            .filter(|(_, c)| *c)
            .map(|(s, _)| s)
            .collect();
        let end = roll.min(days.last_day);
        lift(
            &followed.increased.values().collect::<Vec<_>>(),
            &controls,
            effective,
            end,
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

/// The tenants an outcome follows, as the rolls tell them.
struct Followed {
    /// The batch's tenants in place at the notice date, by tenant id.
    increased: BTreeMap<String, Seen>,
    /// The other tenants of the batch's sizes in place at the notice date and not increased
    /// since, each with whether it was held out.
    others: Vec<(Seen, bool)>,
}

/// Every tenant of the facility in place at the notice date, with whether it was increased
/// (a rent change upward) between the notice and the last checkpoint.
async fn follow(
    pool: &PgPool,
    batch: &Batch,
    lines: &[&Line],
    increased_ids: &BTreeSet<&str>,
    notice: NaiveDate,
    last_day: NaiveDate,
) -> Result<Followed> {
    let sizes: BTreeSet<String> = lines.iter().map(|l| size_key(&l.size)).collect();
    let rows = sqlx::query!(
        r#"SELECT t.tenant_id, t.size, t.rent, t.moved_out_on,
                  EXISTS (SELECT 1 FROM rent_roll_events e
                          WHERE e.facility_id = t.facility_id AND e.tenant_id = t.tenant_id
                            AND e.kind = 'rent_changed' AND e.rent_after > e.rent_before
                            AND e.event_date > $2 AND e.event_date <= $3) AS "raised!",
                  EXISTS (SELECT 1 FROM ecri_batch_controls c
                          WHERE c.batch_id = $4 AND c.tenant_id = t.tenant_id) AS "control!"
           FROM rent_roll_tenants t
           WHERE t.facility_id = $1 AND t.first_seen_on <= $2 AND t.move_in_date <= $2
             AND (t.moved_out_on IS NULL OR t.moved_out_on > $2)"#,
        batch.facility_id,
        notice,
        last_day,
        batch.id
    )
    .fetch_all(pool)
    .await?;
    let mut increased: BTreeMap<String, Seen> = BTreeMap::new();
    let mut others: Vec<(Seen, bool)> = Vec::new();
    for r in rows {
        let seen = Seen {
            rent: r.rent,
            moved_out_on: r.moved_out_on,
        };
        if increased_ids.contains(r.tenant_id.as_str()) {
            increased.insert(r.tenant_id, seen);
        } else if !r.raised && sizes.contains(&size_key(&r.size)) {
            others.push((seen, r.control));
        }
    }
    Ok(Followed { increased, others })
}

/// A group's tenants and how many are in place on `day`.
fn count<'a>(group: impl Iterator<Item = &'a Seen>, day: NaiveDate) -> Group {
    let mut g = Group {
        tenants: 0,
        in_place: 0,
    };
    for t in group {
        g.tenants += 1;
        g.in_place += i64::from(in_place(t, day));
    }
    g
}

/// The increased tenants in place on the latest roll (of `roll`): their added rent per month,
/// and how many pay the new rent.
fn realized_uplift(
    lines: &[&Line],
    increased: &BTreeMap<String, Seen>,
    roll: NaiveDate,
) -> (f64, i64) {
    let mut uplift = 0.0;
    let mut applied = 0;
    for l in lines {
        let Some(t) = l.tenant_id.as_deref().and_then(|id| increased.get(id)) else {
            continue;
        };
        if in_place(t, roll) {
            uplift += t.rent - l.current_rent;
            if t.rent >= l.new_rent - 0.005 {
                applied += 1;
            }
        }
    }
    (uplift, applied)
}

/// Revenue of one tenant from `start` to `end` (inclusive): its rent for the days it stayed.
fn revenue(t: &Seen, start: NaiveDate, end: NaiveDate) -> f64 {
    let last = t
        .moved_out_on
        .map_or(end, |d| (d - Duration::days(1)).min(end));
    let days = (last - start).num_days() + 1;
    t.rent * days.max(0) as f64 / MONTH_DAYS
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n;
    let var = if xs.len() > 1 {
        xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var)
}

/// The measured lift of the increased tenants over the held-out ones, from `start` to `end`.
fn lift(increased: &[&Seen], controls: &[&Seen], start: NaiveDate, end: NaiveDate) -> Lift {
    let a: Vec<f64> = increased.iter().map(|t| revenue(t, start, end)).collect();
    let b: Vec<f64> = controls.iter().map(|t| revenue(t, start, end)).collect();
    let (ma, va) = mean_var(&a);
    let (mb, vb) = mean_var(&b);
    let diff = ma - mb;
    let se = (va / (a.len().max(1) as f64) + vb / (b.len().max(1) as f64)).sqrt();
    let (low, high) = (diff - 1.96 * se, diff + 1.96 * se);
    let window_days = (end - start).num_days() + 1;
    let (verdict, note) = if a.len() < MIN_LIFT_SAMPLE || b.len() < MIN_LIFT_SAMPLE {
        (
            "too_small",
            format!(
                "too few tenants to tell: {} increased and {} held out, at least {MIN_LIFT_SAMPLE} in each are needed",
                a.len(),
                b.len()
            ),
        )
    } else if low > 0.0 {
        (
            "positive",
            format!("the increases earned {diff:.2} more per tenant over {window_days} days (95 % interval {low:.2} to {high:.2})"),
        )
    } else if high < 0.0 {
        (
            "negative",
            format!("the increased tenants brought {:.2} less per tenant over {window_days} days (95 % interval {low:.2} to {high:.2})", -diff),
        )
    } else {
        (
            "inconclusive",
            format!("the interval ({low:.2} to {high:.2} per tenant) includes no difference: the batch has not shown a lift yet"),
        )
    };
    Lift {
        increased_tenants: a.len(),
        control_tenants: b.len(),
        window_days,
        increased_revenue_per_tenant: round2(ma),
        control_revenue_per_tenant: round2(mb),
        lift_per_tenant: round2(diff),
        lift_pct: (mb > 0.0).then(|| round2(diff / mb * 100.0)),
        ci_low: round2(low),
        ci_high: round2(high),
        verdict,
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn revenue_counts_the_days_a_tenant_stayed() {
        let stayed = Seen {
            rent: 100.0,
            moved_out_on: None,
        };
        let left = Seen {
            rent: 100.0,
            moved_out_on: Some(d("2026-01-11")),
        };
        // 31 days of January at 100 a month.
        let r = revenue(&stayed, d("2026-01-01"), d("2026-01-31"));
        assert!((r - 100.0 * 31.0 / MONTH_DAYS).abs() < 1e-9);
        // Gone on the 11th: 10 days paid.
        let r = revenue(&left, d("2026-01-01"), d("2026-01-31"));
        assert!((r - 100.0 * 10.0 / MONTH_DAYS).abs() < 1e-9);
        // Gone before the window: nothing.
        assert_eq!(revenue(&left, d("2026-02-01"), d("2026-02-28")), 0.0);
    }

    #[test]
    fn the_lift_says_when_it_cannot_tell_and_when_it_can() {
        let start = d("2026-01-01");
        let end = d("2026-03-31");
        let tenants = |rent: f64, n: usize, gone: usize| -> Vec<Seen> {
            (0..n)
                .map(|i| Seen {
                    rent: rent + (i % 3) as f64,
                    moved_out_on: (i < gone).then(|| d("2026-02-01")),
                })
                .collect()
        };
        let inc = tenants(110.0, 40, 2);
        let ctl = tenants(100.0, 40, 2);
        let l = lift(
            &inc.iter().collect::<Vec<_>>(),
            &ctl.iter().collect::<Vec<_>>(),
            start,
            end,
        );
        assert_eq!(l.verdict, "positive", "{l:?}");
        assert!(l.ci_low > 0.0 && l.ci_low < l.lift_per_tenant && l.lift_per_tenant < l.ci_high);
        assert_eq!(l.window_days, 90);
        // Ten a month more on about three months, less the same move-outs in both groups.
        assert!((l.lift_per_tenant - 10.0 * 2.9).abs() < 1.5, "{l:?}");
        let few = tenants(100.0, 5, 0);
        let l = lift(
            &inc.iter().collect::<Vec<_>>(),
            &few.iter().collect::<Vec<_>>(),
            start,
            end,
        );
        assert_eq!(l.verdict, "too_small");
        assert!(l.note.contains("5 held out"), "{}", l.note);
        // Increased tenants who leave far more: a negative lift.
        let fled = tenants(110.0, 40, 30);
        let l = lift(
            &fled.iter().collect::<Vec<_>>(),
            &ctl.iter().collect::<Vec<_>>(),
            start,
            end,
        );
        assert_eq!(l.verdict, "negative", "{l:?}");
    }

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
