//! A batch's lines checked again at the moment a decision about them is committed: the roll in
//! force, the settings and flags of today, the stop-loss, and every approved increase and
//! control group of the facility's other batches. Approval, an edit and the letters all ask
//! the same question through [`failing`]; a line that no longer passes is named with the
//! guardrail it breaks.
//!
//! The increases weighed (`History`) are read in the caller's transaction after it has locked
//! the facility, so two approvals of one facility see each other: the second waits for the
//! first's commit and then reads its lines.

use super::{key, Batch, Line};
use crate::ecri::{FacilityEcri, TenantLine};
use crate::error::Result;
use chrono::{Duration, NaiveDate};
use domain::ecri::{reprice, EcriEngineSettings};
use sqlx::PgConnection;
use std::collections::BTreeMap;
use uuid::Uuid;

/// Days in an average month, to turn the cooldown's months into days.
const MONTH_DAYS: f64 = 365.25 / 12.0;
/// Days after an increase takes effect over which its outcome (and its control group's) is
/// measured; a control is protected from every other increase until then.
const WINDOW_DAYS: i64 = crate::ecri::OUTCOME_DAYS;

/// The facility's approved increases and control groups, outside the batch being decided.
#[derive(Debug, Default)]
pub(super) struct History {
    /// Per tenant (or cohort) key: each approved line not left out, (batch, effective date).
    increases: BTreeMap<String, Vec<(Uuid, NaiveDate)>>,
    /// Per tenant id: each control group it is in, (batch, the day its window ends).
    controls: BTreeMap<String, Vec<(Uuid, NaiveDate)>>,
}

/// A line that does not pass now: the guardrail it breaks and why, in a sentence.
#[derive(Clone, Debug, PartialEq)]
pub struct Failing {
    pub line: i32,
    /// The tenant id, or the cohort's size.
    pub subject: String,
    pub guardrail: String,
    pub reason: String,
}

impl Failing {
    /// Line `l` fails `guardrail`, for `reason`.
    pub(super) fn of(l: &Line, guardrail: &str, reason: String) -> Self {
        Self {
            line: l.line,
            subject: l.tenant_id.clone().unwrap_or_else(|| l.size.clone()),
            guardrail: guardrail.to_owned(),
            reason,
        }
    }

    /// "line 3 (T-0003): excluded_flag: flagged `delinquent`: never increased".
    pub fn describe(&self) -> String {
        format!(
            "line {} ({}): {}: {}",
            self.line, self.subject, self.guardrail, self.reason
        )
    }
}

/// Describes up to 20 failing lines in one sentence (with how many more).
pub(super) fn describe_all(failing: &[Failing]) -> String {
    let mut text: Vec<String> = failing.iter().take(20).map(Failing::describe).collect();
    if failing.len() > 20 {
        text.push(format!("and {} more", failing.len() - 20));
    }
    text.join("; ")
}

/// The approved increases and the control groups of the facility's batches other than
/// `except`. Read under the caller's lock on the facility.
pub(super) async fn history(
    conn: &mut PgConnection,
    facility_id: Uuid,
    except: Option<Uuid>,
) -> Result<History> {
    let lines = sqlx::query!(
        r#"SELECT b.id, b.effective_date AS "effective_date!", l.tenant_id, l.size,
                  l.months_since_last_increase
           FROM ecri_batches b JOIN ecri_batch_lines l ON l.batch_id = b.id
           WHERE b.facility_id = $1 AND b.status = 'approved' AND NOT l.excluded
             AND ($2::uuid IS NULL OR b.id <> $2)"#,
        facility_id,
        except
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut h = History::default();
    for r in lines {
        h.increases
            .entry(key(
                r.tenant_id.as_deref(),
                &r.size,
                r.months_since_last_increase,
            ))
            .or_default()
            .push((r.id, r.effective_date));
    }
    let controls = sqlx::query!(
        r#"SELECT b.id, b.effective_date AS "effective_date!", c.tenant_id
           FROM ecri_batches b JOIN ecri_batch_controls c ON c.batch_id = b.id
           WHERE b.facility_id = $1 AND b.status = 'approved'
             AND ($2::uuid IS NULL OR b.id <> $2)"#,
        facility_id,
        except
    )
    .fetch_all(&mut *conn)
    .await?;
    for r in controls {
        h.controls
            .entry(r.tenant_id)
            .or_default()
            .push((r.id, r.effective_date + Duration::days(WINDOW_DAYS)));
    }
    Ok(h)
}

impl History {
    /// Another approved increase of this tenant within the cooldown of `effective` (before or
    /// after it, in force or pending): (batch, its effective date).
    fn increase_within(
        &self,
        key: &str,
        effective: NaiveDate,
        cooldown_days: i64,
    ) -> Option<(Uuid, NaiveDate)> {
        self.increases
            .get(key)?
            .iter()
            .copied()
            .find(|(_, other)| (effective - *other).num_days().abs() < cooldown_days.max(1))
    }

    /// A control group this tenant is in whose window has not ended by `notice`.
    fn control_until(&self, tenant_id: &str, notice: NaiveDate) -> Option<(Uuid, NaiveDate)> {
        self.controls
            .get(tenant_id)?
            .iter()
            .copied()
            .find(|(_, end)| *end >= notice)
    }

    /// What in the history keeps an increase of this tenant (`key`, and its id) sent on
    /// `dates` from going out: another approved increase within the cooldown, or a control
    /// group it is in; the guardrail and a sentence.
    pub(super) fn blocks(
        &self,
        key: &str,
        tenant_id: &str,
        dates: Dates,
        s: &EcriEngineSettings,
    ) -> Option<(&'static str, String)> {
        let cooldown_days = (s.min_months_since_increase * MONTH_DAYS).round() as i64;
        if let Some((other, on)) = self.increase_within(key, dates.effective, cooldown_days) {
            return Some((
                "months_since_increase",
                format!(
                    "batch {other} raises this tenant from {on}, within the {:.0} months required between increases",
                    s.min_months_since_increase
                ),
            ));
        }
        if tenant_id.is_empty() {
            return None;
        }
        self.control_until(tenant_id, dates.notice)
            .map(|(other, end)| {
                (
                    "holdout_control",
                    format!("in the control group of batch {other} until {end}"),
                )
            })
    }
}

/// The engine's lines of now by the key that names a tenant (or cohort) across batches.
pub(super) fn by_key(now: &FacilityEcri) -> BTreeMap<String, &TenantLine> {
    now.lines
        .iter()
        .map(|t| {
            (
                key(
                    Some(t.input.tenant_id.as_str()),
                    &t.size,
                    t.months_since_last_increase,
                ),
                t,
            )
        })
        .collect()
}

/// The dates an increase would be sent and take effect.
#[derive(Clone, Copy, Debug)]
pub(super) struct Dates {
    pub notice: NaiveDate,
    pub effective: NaiveDate,
}

impl Dates {
    /// An increase noticed on `notice`, in force after the settings' notice days.
    pub(super) fn noticed(notice: NaiveDate, s: &EcriEngineSettings) -> Self {
        Self {
            notice,
            effective: notice + Duration::days(i64::from(s.notice_days)),
        }
    }
}

/// The lines of `batch` (those not left out, or only `only` when given) that do not pass now,
/// against `now` (the facility's engine of this moment), `history` and the dates the
/// increases would carry. With the customer rule on, a customer's other units fail with the
/// one that fails.
pub(super) fn failing(
    batch: &Batch,
    only: Option<&[i32]>,
    now: &FacilityEcri,
    history: &History,
    dates: Dates,
) -> Vec<Failing> {
    let fresh = by_key(now);
    let s = &now.settings;
    let considered = |l: &&Line| !l.excluded && only.is_none_or(|o| o.contains(&l.line));
    let mut out: Vec<Failing> = batch
        .lines
        .iter()
        .filter(considered)
        .filter_map(|l| {
            let k = key(
                l.tenant_id.as_deref(),
                &l.size,
                l.months_since_last_increase,
            );
            check_line(l, &k, fresh.get(&k).copied(), now, s, history, dates)
        })
        .collect();
    if s.raise_customer_units_together {
        customers_together(batch, considered, &mut out);
    }
    out.sort_by_key(|f| f.line);
    out
}

/// The guardrail one line breaks now, if any.
fn check_line(
    l: &Line,
    key: &str,
    fresh: Option<&TenantLine>,
    now: &FacilityEcri,
    s: &EcriEngineSettings,
    history: &History,
    dates: Dates,
) -> Option<Failing> {
    let fail = |guardrail: &str, reason: String| Some(Failing::of(l, guardrail, reason));
    let Some(t) = fresh else {
        let roll = now.as_of.map(|d| format!(" of {d}")).unwrap_or_default();
        return fail(
            "not_in_roll",
            match &l.tenant_id {
                Some(id) => format!("tenant {id} is no longer in the rent roll{roll}"),
                None => format!("the {} cohort is no longer in the snapshot{roll}", l.size),
            },
        );
    };
    if (t.input.rent - l.current_rent).abs() > 0.005 {
        return fail(
            "rent_changed",
            format!(
                "the rent is now {:.2}, not the {:.2} the line was drafted for (changed in the PMS)",
                t.input.rent, l.current_rent
            ),
        );
    }
    if let Some(stop) = now.stop_loss {
        return fail(
            "stop_loss",
            format!(
                "increases are held: {:.1} % of the facility's last {} increased tenants moved out within 90 days, against {:.1} % of those not increased",
                stop.increased_move_out_pct, stop.increased_tenants, stop.baseline_move_out_pct
            ),
        );
    }
    if let Some((guardrail, why)) =
        history.blocks(key, l.tenant_id.as_deref().unwrap_or(""), dates, s)
    {
        return fail(guardrail, why);
    }
    let Some(market) = domain::ecri::decide::market_for(&now.markets, &t.input) else {
        return fail("no_street_rate", format!("no street rate for {}", l.size));
    };
    match reprice(&t.input, market, &now.model.model, s, l.new_rent) {
        Ok(_) => None,
        Err(r) => fail(r.guardrail.name(), r.text),
    }
}

/// A customer's units go up together or not at all: when one fails, the customer's others in
/// the batch fail with it.
fn customers_together(batch: &Batch, considered: impl Fn(&&Line) -> bool, out: &mut Vec<Failing>) {
    let failed: BTreeMap<&str, i32> = out
        .iter()
        .filter_map(|f| {
            let l = batch.lines.iter().find(|l| l.line == f.line)?;
            Some((l.customer_id.as_deref()?, f.line))
        })
        .collect();
    let already: Vec<i32> = out.iter().map(|f| f.line).collect();
    for l in batch.lines.iter().filter(|l| considered(l)) {
        let Some(c) = l.customer_id.as_deref() else {
            continue;
        };
        if let Some(&other) = failed.get(c) {
            if !already.contains(&l.line) {
                out.push(Failing::of(
                    l,
                    "customer_units",
                    format!("the customer's units go up together, and line {other} cannot"),
                ));
            }
        }
    }
}
