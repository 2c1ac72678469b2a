//! The decision for one tenant (or cohort), and for a facility's whole rent roll.
//!
//! Per tenant, over the horizon H (months) and the notice n (months), with the facility's
//! monthly baseline move-out hazard h (from its 90-day baseline) and A(t) = (1 - e^(-ht)) / h
//! the months a tenant is expected to pay within t:
//! - staying, the tenant pays the increase from the end of the notice: a = inc x (A(H) - A(n));
//! - a move-out the increase causes happens when it takes effect and costs
//!   c = max(0, rent x (A(H) - A(n)) - street x (A(H) - A(min(H, n + D)))): the rent that stops,
//!   less what the unit earns once re-let at street after D months empty. D, the expected
//!   months empty ([`SizeMarket::expected_vacant_months`]), at most H: move-ins do not come
//!   because a unit is free, so a vacancy is made up only once the size fills to capacity: at
//!   the size's net fill pace (move-ins less move-outs per month) after the vacancies already
//!   there, (vacant + 1) / net pace; never while the size is not filling; within one move-in
//!   when the size is full (demand is being turned away). A move-out is never counted as a gain, even where the
//!   street rate is above the rent (an increase is not a tool to push a tenant out);
//! - expected gain = (1 - extra) x a - extra x c, extra the stay model's extra move-out.
//!
//! The new rent is searched over whole currency amounts within every guardrail; the one with
//! the largest expected gain is suggested if that gain is positive, otherwise none.

use super::settings::EcriEngineSettings;
use super::stay::{Outcome, StayModel};
use crate::values::round2;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod edit;
pub use edit::{reprice, Refused};

/// Days in an average month.
const MONTH_DAYS: f64 = 365.25 / 12.0;

/// One tenant of the rent roll, or a cohort of tenants who share a rent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TenantInput {
    pub tenant_id: String,
    pub size: String,
    /// Monthly rent paid now.
    pub rent: f64,
    /// None when unknown.
    pub months_since_move_in: Option<f64>,
    /// None when never increased.
    pub months_since_last_increase: Option<f64>,
    /// The customer renting the unit, where one customer rents several.
    pub customer_id: Option<String>,
    /// Staff and system flags (`business`, `delinquent`, `do_not_increase`, ...).
    pub flags: Vec<String>,
    /// 1 for a tenant, N for a cohort of N tenants at this rent.
    pub tenant_count: u32,
}

/// What the engine knows of a size's market.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SizeMarket {
    /// Today's street rate (what a vacated unit re-lets at).
    pub street_rate: f64,
    pub competitor_low: Option<f64>,
    pub competitor_median: Option<f64>,
    pub competitor_high: Option<f64>,
    /// Units of the size.
    pub units: u32,
    /// Occupied share of the units (%).
    pub occupancy_pct: f64,
    /// Move-ins per month lately.
    pub move_ins_per_month: f64,
    /// Move-outs per month lately, where known.
    pub move_outs_per_month: Option<f64>,
}

impl SizeMarket {
    /// The rent a tenant compares theirs with: the competitor median, else the street rate.
    pub fn reference_rate(&self) -> f64 {
        self.competitor_median
            .filter(|m| m.is_finite() && *m > 0.0)
            .unwrap_or(self.street_rate)
    }

    /// Months a unit vacated today is expected to stay empty, at most `horizon`: 1 / move-ins
    /// per month when the size is full (under one unit vacant); (vacant + 1) / (move-ins -
    /// move-outs per month) while it fills (move-outs taken as 0 when unknown); the horizon when
    /// it is not filling.
    pub fn expected_vacant_months(&self, horizon: f64) -> f64 {
        let vacant = (f64::from(self.units) * (1.0 - self.occupancy_pct / 100.0)).max(0.0);
        let outs = self.move_outs_per_month.unwrap_or(0.0);
        let net = self.move_ins_per_month - outs;
        if vacant < 1.0 && self.move_ins_per_month > 0.0 {
            (1.0 / self.move_ins_per_month).min(horizon)
        } else if net > 0.0 {
            ((vacant + 1.0) / net).min(horizon)
        } else {
            horizon
        }
    }
}

/// The guardrails, each a named setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Guardrail {
    /// No street rate for the size: nothing to weigh a move-out against.
    NoStreetRate,
    ExcludedFlag,
    MonthsSinceMoveIn,
    MonthsSinceIncrease,
    StopLoss,
    MaxStep,
    JurisdictionCap,
    MaxPremiumOverStreet,
    MinimumIncrease,
    CustomerUnits,
}

impl Guardrail {
    pub fn name(self) -> &'static str {
        match self {
            Self::NoStreetRate => "no_street_rate",
            Self::ExcludedFlag => "excluded_flag",
            Self::MonthsSinceMoveIn => "months_since_move_in",
            Self::MonthsSinceIncrease => "months_since_increase",
            Self::StopLoss => "stop_loss",
            Self::MaxStep => "max_step",
            Self::JurisdictionCap => "jurisdiction_cap",
            Self::MaxPremiumOverStreet => "max_premium_over_street",
            Self::MinimumIncrease => "minimum_increase",
            Self::CustomerUnits => "customer_units",
        }
    }
}

/// One reason behind a suggestion: a named figure and what it means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    pub name: String,
    pub value: f64,
    pub text: String,
}

fn reason(name: &str, value: f64, text: String) -> Reason {
    Reason {
        name: name.to_owned(),
        value: round2(value),
        text,
    }
}

/// The suggestion for one tenant (or cohort).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    pub tenant_id: String,
    pub tenant_count: u32,
    pub current_rent: f64,
    /// The rent after the increase (the current rent when none).
    pub new_rent: f64,
    /// Per tenant, per month; 0 when none.
    pub increase: f64,
    pub increase_pct: f64,
    /// Chance (%) each tenant is still in place 90 days after the notice (with no notice when
    /// there is no increase).
    pub stay_probability: f64,
    /// Expected revenue over the horizon against no increase, for all the cohort's tenants,
    /// net of the expected move-outs and the months their units stand empty.
    pub expected_gain: f64,
    /// The guardrail that held the increase back or capped it; none when the stay model chose.
    pub binding_guardrail: Option<Guardrail>,
    pub reasons: Vec<Reason>,
}

/// A tenant that passed the eligibility guardrails, with what its decision needs.
#[derive(Debug, Clone)]
struct Plan<'a> {
    tenant: &'a TenantInput,
    model: &'a StayModel,
    street: f64,
    reference: f64,
    /// Months the tenant pays the new rent if staying, A(H) - A(n).
    pay_months: f64,
    /// What a move-out the increase causes costs, per tenant (>= 0).
    move_out_cost: f64,
    vacant_months: f64,
    /// Lowest and highest whole new rent within the guardrails (first > last: none).
    first: f64,
    last: f64,
    /// The cap that sets `last`.
    cap: Guardrail,
    minimum: f64,
}

/// The expected gain of one new rent, per tenant: (gain, extra move-out, increase %, premium %).
fn evaluate(p: &Plan<'_>, new_rent: f64) -> (f64, f64, f64, f64) {
    let rent = p.tenant.rent;
    let increase_pct = (new_rent / rent - 1.0) * 100.0;
    let premium_pct = (new_rent / p.reference - 1.0) * 100.0;
    let extra = p.model.extra_move_out(increase_pct, premium_pct);
    let gain = (1.0 - extra) * (new_rent - rent) * p.pay_months - extra * p.move_out_cost;
    (gain, extra, increase_pct, premium_pct)
}

/// Months a tenant pays within `t` months at a monthly move-out hazard `h`.
fn paid_months(t: f64, h: f64) -> f64 {
    if h < 1e-9 {
        t
    } else {
        (1.0 - (-h * t).exp()) / h
    }
}

fn plan<'a>(
    t: &'a TenantInput,
    m: &SizeMarket,
    model: &'a StayModel,
    s: &EcriEngineSettings,
) -> Result<Plan<'a>, (Guardrail, Reason)> {
    if !(m.street_rate.is_finite() && m.street_rate > 0.0 && t.rent.is_finite() && t.rent > 0.0) {
        return Err((
            Guardrail::NoStreetRate,
            reason(
                "no_street_rate",
                m.street_rate,
                format!(
                    "no street rate for {}: a move-out cannot be weighed",
                    t.size
                ),
            ),
        ));
    }
    if let Some(flag) = s.excludes(&t.flags) {
        return Err((
            Guardrail::ExcludedFlag,
            reason(
                "excluded_flag",
                0.0,
                format!("flagged `{flag}`: never increased"),
            ),
        ));
    }
    // Unknown move-in: a known last increase shows the tenant has stayed at least that long.
    let tenure = t.months_since_move_in.or(t.months_since_last_increase);
    match tenure {
        Some(months) if months >= s.min_months_since_move_in => {}
        _ => {
            return Err((
                Guardrail::MonthsSinceMoveIn,
                reason(
                    "months_since_move_in",
                    tenure.unwrap_or(0.0),
                    match tenure {
                        Some(months) => format!(
                            "moved in {months:.1} months ago, under the {:.0} months required",
                            s.min_months_since_move_in
                        ),
                        None => "move-in date unknown".to_owned(),
                    },
                ),
            ))
        }
    }
    if let Some(months) = t.months_since_last_increase {
        if months < s.min_months_since_increase {
            return Err((
                Guardrail::MonthsSinceIncrease,
                reason(
                    "months_since_increase",
                    months,
                    format!(
                        "last increased {months:.1} months ago, under the {:.0} months required",
                        s.min_months_since_increase
                    ),
                ),
            ));
        }
    }
    let rent = t.rent;
    let (max_rent, cap) = edit::caps(t, m, s)
        .into_iter()
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .expect("two caps at least");
    let minimum = (rent * s.min_increase_pct / 100.0).min(s.min_increase_amount);
    let h = -(1.0 - model.baseline).max(1e-9).ln() / (90.0 / MONTH_DAYS);
    let horizon = s.horizon_months;
    let notice = (f64::from(s.notice_days) / MONTH_DAYS).min(horizon);
    let vacant_months = m.expected_vacant_months(horizon);
    let pay_months = paid_months(horizon, h) - paid_months(notice, h);
    let relet_months =
        paid_months(horizon, h) - paid_months((notice + vacant_months).min(horizon), h);
    let move_out_cost = (rent * pay_months - m.street_rate * relet_months).max(0.0);
    // Whole currency; the small allowances keep 100 x 1.1 = 110.00000000000001 whole.
    let first = (rent + minimum - 1e-9).ceil().max(rent.floor() + 1.0);
    let last = (max_rent + 1e-9).floor();
    Ok(Plan {
        tenant: t,
        model,
        street: m.street_rate,
        reference: m.reference_rate(),
        pay_months,
        move_out_cost,
        vacant_months,
        first,
        last,
        cap,
        minimum,
    })
}

/// The suggestion of a plan at a new rent (None: no increase).
fn suggestion(
    p: &Plan<'_>,
    new_rent: Option<f64>,
    binding: Option<Guardrail>,
    s: &EcriEngineSettings,
    mut reasons: Vec<Reason>,
) -> Suggestion {
    let t = p.tenant;
    let n = f64::from(t.tenant_count);
    let rent = t.rent;
    let model = p.model;
    reasons.push(reason(
        "sensitivity",
        model.sensitivity,
        format!(
            "the facility's move-out sensitivity is {:.2} x the prior ({:.0} % from its own {} increased tenants, the rest from the company's {:.2}); tenants not increased leave at {:.1} % in 90 days",
            model.sensitivity,
            model.evidence_weight * 100.0,
            model.increased_tenants,
            model.company_sensitivity,
            model.baseline * 100.0
        ),
    ));
    reasons.push(reason(
        "move_out_cost",
        p.move_out_cost,
        format!(
            "a move-out would leave the unit empty about {:.0} days, then re-let at the street rate {:.2}: {:.2} lost over {:.0} months",
            p.vacant_months * MONTH_DAYS,
            p.street,
            p.move_out_cost,
            s.horizon_months
        ),
    ));
    reasons.push(reason(
        "rent_against_street",
        (rent / p.street - 1.0) * 100.0,
        format!(
            "the rent {:.2} is {:+.1} % against the street rate {:.2}",
            rent,
            (rent / p.street - 1.0) * 100.0,
            p.street
        ),
    ));
    let (new_rent, gain, extra, increase_pct, premium_pct) = match new_rent {
        Some(r) => {
            let (gain, extra, inc, prem) = evaluate(p, r);
            (r, gain, extra, inc, prem)
        }
        None => (rent, 0.0, 0.0, 0.0, (rent / p.reference - 1.0) * 100.0),
    };
    let stay = (1.0 - model.baseline) * (1.0 - extra);
    reasons.push(reason(
        "stay_probability",
        stay * 100.0,
        if new_rent > rent {
            format!(
                "{:.1} % expected to stay 90 days at +{increase_pct:.1} % ({:.1} % extra move-outs), the new rent {premium_pct:+.1} % against the market {:.2}",
                stay * 100.0,
                extra * 100.0,
                p.reference
            )
        } else {
            format!("{:.1} % expected to stay 90 days with no increase", stay * 100.0)
        },
    ));
    reasons.push(reason(
        "expected_gain",
        gain * n,
        format!(
            "{:+.2} expected over {:.0} months against no increase{}",
            gain * n,
            s.horizon_months,
            if n > 1.0 {
                format!(" ({n:.0} tenants)")
            } else {
                String::new()
            }
        ),
    ));
    Suggestion {
        tenant_id: t.tenant_id.clone(),
        tenant_count: t.tenant_count,
        current_rent: round2(rent),
        new_rent: round2(new_rent),
        increase: round2(new_rent - rent),
        increase_pct: round2(increase_pct),
        stay_probability: round2(stay * 100.0),
        expected_gain: round2(gain * n),
        binding_guardrail: binding,
        reasons,
    }
}

fn held(t: &TenantInput, model: &StayModel, guardrail: Guardrail, why: Reason) -> Suggestion {
    Suggestion {
        tenant_id: t.tenant_id.clone(),
        tenant_count: t.tenant_count,
        current_rent: round2(t.rent),
        new_rent: round2(t.rent),
        increase: 0.0,
        increase_pct: 0.0,
        stay_probability: round2((1.0 - model.baseline) * 100.0),
        expected_gain: 0.0,
        binding_guardrail: Some(guardrail),
        reasons: vec![why],
    }
}

/// The best whole new rent of a plan and the guardrail that bound it.
fn best(p: &Plan<'_>) -> (Option<f64>, Option<Guardrail>, Vec<Reason>) {
    let mut top: Option<(f64, f64)> = None;
    let mut r = p.first;
    while r <= p.last {
        let (gain, ..) = evaluate(p, r);
        if top.is_none_or(|(_, g)| gain > g) {
            top = Some((r, gain));
        }
        r += 1.0;
    }
    let rent = p.tenant.rent;
    let cap_reason = |r: f64| {
        reason(
            p.cap.name(),
            r,
            format!("{} holds the new rent at {r:.2} at most", p.cap.name()),
        )
    };
    match top {
        Some((r, gain)) if gain > 0.0 => {
            // The cap binds when the gain still grows past it.
            let binds = r == p.last && evaluate(p, r + 1.0).0 > gain;
            if binds {
                (Some(r), Some(p.cap), vec![cap_reason(r)])
            } else {
                (Some(r), None, Vec::new())
            }
        }
        _ => {
            // Would an increase under the minimum, or over the cap, have paid?
            let mut below = rent.floor() + 1.0;
            while below < p.first {
                if evaluate(p, below).0 > 0.0 {
                    return (
                        None,
                        Some(Guardrail::MinimumIncrease),
                        vec![reason(
                            "minimum_increase",
                            p.minimum,
                            format!(
                                "only an increase under the minimum of {:.2} would pay",
                                p.minimum
                            ),
                        )],
                    );
                }
                below += 1.0;
            }
            if p.first > p.last {
                let beyond = p.first.max(p.last + 1.0);
                if evaluate(p, beyond).0 > 0.0 || p.last < rent {
                    return (None, Some(p.cap), vec![cap_reason(p.last.max(rent))]);
                }
                return (
                    None,
                    Some(Guardrail::MinimumIncrease),
                    vec![reason(
                        "minimum_increase",
                        p.minimum,
                        format!(
                            "{} leaves room for less than the minimum increase of {:.2}",
                            p.cap.name(),
                            p.minimum
                        ),
                    )],
                );
            }
            (
                None,
                None,
                vec![reason(
                    "no_increase_pays",
                    0.0,
                    "no increase within the guardrails is expected to earn more than the move-outs it causes cost".to_owned(),
                )],
            )
        }
    }
}

/// The suggestion for one tenant (or cohort), without the facility-level guardrails (the
/// stop-loss and the customer's other units: [`decide_facility`]).
pub fn decide(
    t: &TenantInput,
    m: &SizeMarket,
    model: &StayModel,
    s: &EcriEngineSettings,
) -> Suggestion {
    match plan(t, m, model, s) {
        Err((g, why)) => held(t, model, g, why),
        Ok(p) => {
            let (r, binding, reasons) = best(&p);
            suggestion(&p, r, binding, s, reasons)
        }
    }
}

/// The stop-loss: Some((increased rate, baseline rate, outcomes)) in % when a facility's
/// increased tenants moved out within 90 days more than `stop_loss_excess_move_out_pts` above
/// its tenants not increased, over its recent outcomes.
pub fn stop_loss(recent: &[Outcome], s: &EcriEngineSettings) -> Option<(f64, f64, u32)> {
    let sum = |increased: bool| {
        recent
            .iter()
            .filter(|o| o.increased() == increased)
            .fold((0u32, 0u32), |(n, k), o| {
                (
                    n.saturating_add(o.tenants),
                    k.saturating_add(o.moved_out.min(o.tenants)),
                )
            })
    };
    let (n_inc, k_inc) = sum(true);
    let (n_base, k_base) = sum(false);
    if n_inc < s.stop_loss_min_outcomes {
        return None;
    }
    let inc = f64::from(k_inc) / f64::from(n_inc) * 100.0;
    let base = if n_base > 0 {
        f64::from(k_base) / f64::from(n_base) * 100.0
    } else {
        0.0
    };
    (inc - base > s.stop_loss_excess_move_out_pts).then_some((inc, base, n_inc))
}

/// The suggestions for a facility's rent roll: [`decide`] per tenant, then the stop-loss
/// (over `recent`, the facility's latest 90-day outcomes) and the customer rule (all units of a
/// customer by the same percent, or none). `markets` is keyed by size; a tenant whose size has
/// no market gets `no_street_rate`.
pub fn decide_facility(
    roll: &[TenantInput],
    markets: &BTreeMap<String, SizeMarket>,
    model: &StayModel,
    recent: &[Outcome],
    s: &EcriEngineSettings,
) -> Vec<Suggestion> {
    let stop = stop_loss(recent, s);
    let no_market = SizeMarket {
        street_rate: 0.0,
        competitor_low: None,
        competitor_median: None,
        competitor_high: None,
        units: 0,
        occupancy_pct: 0.0,
        move_ins_per_month: 0.0,
        move_outs_per_month: None,
    };
    let market = |t: &TenantInput| markets.get(&t.size).unwrap_or(&no_market);
    let plans: Vec<Result<Plan<'_>, (Guardrail, Reason)>> = roll
        .iter()
        .map(|t| match plan(t, market(t), model, s) {
            Ok(_) if stop.is_some() => {
                let (inc, base, n) = stop.expect("checked");
                Err((
                    Guardrail::StopLoss,
                    reason(
                        "stop_loss",
                        inc - base,
                        format!(
                            "increases held: {inc:.1} % of the facility's last {n} increased tenants moved out within 90 days, against {base:.1} % of those not increased"
                        ),
                    ),
                ))
            }
            other => other,
        })
        .collect();
    let mut out: Vec<Suggestion> = roll
        .iter()
        .zip(&plans)
        .map(|(t, p)| match p {
            Err((g, why)) => held(t, model, *g, why.clone()),
            Ok(p) => {
                let (r, binding, reasons) = best(p);
                suggestion(p, r, binding, s, reasons)
            }
        })
        .collect();
    if !s.raise_customer_units_together {
        return out;
    }
    let mut customers: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, t) in roll.iter().enumerate() {
        if let Some(c) = t.customer_id.as_deref() {
            customers.entry(c).or_default().push(i);
        }
    }
    for units in customers.values().filter(|u| u.len() > 1) {
        if units.iter().all(|&i| out[i].increase == 0.0) {
            continue;
        }
        let together = units
            .iter()
            .map(|&i| plans[i].as_ref().ok())
            .collect::<Option<Vec<_>>>();
        let group_reason = |text: String| reason("customer_units", units.len() as f64, text);
        let Some(together) = together else {
            for &i in units {
                if out[i].increase > 0.0 {
                    let t = &roll[i];
                    out[i] = held(
                        t,
                        model,
                        Guardrail::CustomerUnits,
                        group_reason(format!(
                            "another of the customer's {} units cannot be increased now",
                            units.len()
                        )),
                    );
                }
            }
            continue;
        };
        // One percent for every unit: the best total gain over 0.5 % steps.
        let mut top: Option<(f64, f64, Vec<f64>)> = None;
        let mut pct = 0.5;
        while pct <= 100.0 {
            let rents: Option<Vec<f64>> = together
                .iter()
                .map(|p| {
                    let r = (p.tenant.rent * (1.0 + pct / 100.0) + 1e-9).floor();
                    (r >= p.first && r <= p.last).then_some(r)
                })
                .collect();
            if let Some(rents) = rents {
                let total: f64 = together
                    .iter()
                    .zip(&rents)
                    .map(|(p, &r)| evaluate(p, r).0 * f64::from(p.tenant.tenant_count))
                    .sum();
                if top.as_ref().is_none_or(|(_, g, _)| total > *g) {
                    top = Some((pct, total, rents));
                }
            }
            pct += 0.5;
        }
        for (k, &i) in units.iter().enumerate() {
            let p = together[k];
            let why = group_reason(format!(
                "the customer's {} units are increased together",
                units.len()
            ));
            out[i] = match &top {
                Some((pct, total, rents)) if *total > 0.0 => {
                    let own = out[i].new_rent;
                    let binding = (own != rents[k]).then_some(Guardrail::CustomerUnits);
                    let mut reasons = vec![why];
                    reasons[0].text.push_str(&format!(" by {pct:.1} %"));
                    suggestion(p, Some(rents[k]), binding, s, reasons)
                }
                _ => suggestion(p, None, Some(Guardrail::CustomerUnits), s, vec![why]),
            };
        }
    }
    out
}
