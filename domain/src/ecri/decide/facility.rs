//! The guardrails that look past one tenant to the facility: the stop-loss, which holds every
//! increase while the facility's increased tenants leave well above the others, and the
//! customer rule, which raises all of a customer's units by the same percent or none.

use super::explain::{held, suggestion};
use super::plan::{evaluate, plan, Plan};
use super::{market_for, reason, suggest, Guardrail, Reason, SizeMarket, Suggestion, TenantInput};
use crate::ecri::settings::EcriEngineSettings;
use crate::ecri::stay::{Outcome, StayModel};
use std::collections::BTreeMap;

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

/// The suggestions for a facility's rent roll: [`decide`](super::decide) per tenant, then the
/// stop-loss (over `recent`, the facility's latest 90-day outcomes), the customer rule (all
/// units of a customer by the same percent, or none), the step test (while the model cannot
/// tell what the round figures cost, a share of the increases past them held just under) and
/// the ramp (while the facility's model rests on the prior, a share of its increases first). `markets` is keyed by size, and by
/// [`market_key`](super::market_key) for a tier: a tenant is weighed against its tier's market
/// when there is one, else its size's ([`market_for`]); one with neither gets `no_street_rate`.
pub fn decide_facility(
    roll: &[TenantInput],
    markets: &BTreeMap<String, SizeMarket>,
    model: &StayModel,
    recent: &[Outcome],
    s: &EcriEngineSettings,
) -> Vec<Suggestion> {
    let plans = facility_plans(roll, markets, model, recent, s);
    let mut out: Vec<Suggestion> = roll
        .iter()
        .zip(&plans)
        .map(|(t, p)| match p {
            Err((g, why)) => held(t, model, *g, why.clone()),
            Ok(p) => suggest(p, s),
        })
        .collect();
    if s.raise_customer_units_together {
        for units in customer_units(roll).values().filter(|u| u.len() > 1) {
            raise_together(units, roll, &plans, model, s, &mut out);
        }
    }
    super::step_test::hold_under(roll, &plans, model, s, &mut out);
    super::ramp::hold_back(roll, model, s, &mut out);
    out
}

/// Each tenant's plan, or the guardrail that holds it: its own eligibility first, then the
/// stop-loss for every tenant that passed.
fn facility_plans<'a>(
    roll: &'a [TenantInput],
    markets: &BTreeMap<String, SizeMarket>,
    model: &'a StayModel,
    recent: &[Outcome],
    s: &'a EcriEngineSettings,
) -> Vec<Result<Plan<'a>, (Guardrail, Reason)>> {
    let stop = stop_loss(recent, s);
    let no_market = SizeMarket {
        street_rate: 0.0,
        of_tier: false,
        competitor_low: None,
        competitor_median: None,
        competitor_high: None,
        units: 0,
        occupancy_pct: 0.0,
        move_ins_per_month: 0.0,
        move_outs_per_month: None,
    };
    let market = |t: &TenantInput| market_for(markets, t).unwrap_or(&no_market);
    roll.iter()
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
        .collect()
}

/// The roll's positions of each customer's units, by customer id.
fn customer_units(roll: &[TenantInput]) -> BTreeMap<&str, Vec<usize>> {
    let mut customers: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, t) in roll.iter().enumerate() {
        if let Some(c) = t.customer_id.as_deref() {
            customers.entry(c).or_default().push(i);
        }
    }
    customers
}

/// Applies the customer rule to one customer's `units` (positions in the roll) when any of
/// them is increased: held all when one cannot be increased now, else all by the one percent
/// that earns most in total (none when no percent pays).
fn raise_together(
    units: &[usize],
    roll: &[TenantInput],
    plans: &[Result<Plan<'_>, (Guardrail, Reason)>],
    model: &StayModel,
    s: &EcriEngineSettings,
    out: &mut [Suggestion],
) {
    if units.iter().all(|&i| out[i].increase == 0.0) {
        return;
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
        return;
    };
    let top = common_increase(&together);
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

/// One percent for every unit: the best total gain over 0.5 % steps, as (percent, total gain,
/// each unit's new rent); none when no step keeps every unit within its guardrails.
fn common_increase(together: &[&Plan<'_>]) -> Option<(f64, f64, Vec<f64>)> {
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
    top
}
