//! The notices each policy gives on a decision day. The policies only choose who is increased
//! and to what rent: the notice itself, and the tenant's reaction to it, go through
//! `Facility::notify` so that every policy is scored by the same rules.

use super::facility::Facility;
use super::{FixedRule, MONTH_DAYS};
use crate::ecri::{
    decide_facility, EcriEngineSettings, Guardrail, Outcome, SizeMarket as EngineMarket, StayModel,
    TenantInput,
};
use std::collections::BTreeMap;

impl Facility {
    /// What the engine knows of each size's market today, keyed by size.
    fn engine_markets(&self) -> BTreeMap<String, EngineMarket> {
        self.sizes
            .iter()
            .map(|s| {
                let observed: Vec<f64> = s
                    .market
                    .observations()
                    .iter()
                    .map(|(_, o)| o.rate)
                    .collect();
                let arrivals: u32 = s.arrivals.iter().sum();
                let departures: u32 = s.departures.iter().sum();
                let days = s.arrivals.len().max(1) as f64;
                (
                    s.market.size.to_owned(),
                    EngineMarket {
                        street_rate: s.market.street_rate,
                        of_tier: false,
                        competitor_low: observed.iter().copied().reduce(f64::min),
                        competitor_median: Some(s.market.observed_median()),
                        competitor_high: observed.iter().copied().reduce(f64::max),
                        units: s.market.units,
                        occupancy_pct: s.roll.len() as f64 / f64::from(s.market.units) * 100.0,
                        move_ins_per_month: f64::from(arrivals) / days * MONTH_DAYS,
                        move_outs_per_month: Some(f64::from(departures) / days * MONTH_DAYS),
                    },
                )
            })
            .collect()
    }

    /// A fixed rule: every tenant in place long enough since move-in and since the last
    /// increase gets the rule's step, within its cap over the street rate.
    pub(super) fn apply_rule(&mut self, rule: &FixedRule, day: i32) {
        for size in 0..self.sizes.len() {
            let street = self.sizes[size].market.street_rate;
            for k in 0..self.sizes[size].roll.len() {
                let t = &self.sizes[size].roll[k];
                if t.pending.is_some() || t.reaction_leave.is_some() {
                    continue;
                }
                let since_in = f64::from(day - t.move_in) / MONTH_DAYS;
                let since_up = t.last_increase.map(|d| f64::from(day - d) / MONTH_DAYS);
                if since_in < rule.months || since_up.is_some_and(|m| m < rule.months) {
                    continue;
                }
                let mut new_rent = (t.rent * (1.0 + rule.step_pct / 100.0)).floor();
                if let Some(cap) = rule.cap_over_street_pct {
                    new_rent = new_rent.min((street * (1.0 + cap / 100.0)).floor());
                }
                if new_rent >= t.rent + 1.0 {
                    self.notify(size, k, day, new_rent, rule.notice_days, None);
                }
            }
        }
    }

    /// The engine over the facility's rent roll, with `model` learned from the company and the
    /// `recent` outcomes the stop-loss sees.
    pub(super) fn apply_engine(
        &mut self,
        settings: &EcriEngineSettings,
        model: &StayModel,
        recent: &[Outcome],
        day: i32,
    ) {
        let markets = self.engine_markets();
        let mut roll = Vec::new();
        let mut at = Vec::new();
        for (i, s) in self.sizes.iter().enumerate() {
            for (k, t) in s.roll.iter().enumerate() {
                if t.pending.is_some() || t.reaction_leave.is_some() {
                    continue;
                }
                roll.push(TenantInput {
                    tenant_id: format!("{i}-{}", t.serial),
                    size: s.market.size.to_owned(),
                    rent: t.rent,
                    months_since_move_in: Some(f64::from(day - t.move_in) / MONTH_DAYS),
                    months_since_last_increase: t
                        .last_increase
                        .map(|d| f64::from(day - d) / MONTH_DAYS),
                    customer_id: None,
                    flags: Vec::new(),
                    tenant_count: 1,
                    tier: None,
                    pending_increase: None,
                    past_increases: t.increases,
                    rent_12_months_ago: None,
                    rent_at_cap_base: None,
                });
                at.push((i, k));
            }
        }
        let suggestions = decide_facility(&roll, &markets, model, recent, settings);
        let baseline_stays: Vec<f64> = roll
            .iter()
            .map(|t| {
                1.0 - model
                    .for_tenant_since(
                        t.months_since_move_in,
                        t.past_increases,
                        t.months_since_last_increase,
                    )
                    .baseline
            })
            .collect();
        if suggestions
            .iter()
            .any(|s| s.binding_guardrail == Some(Guardrail::StopLoss))
        {
            self.result.stop_loss_days += 1;
        }
        for (j, (s, &(i, k))) in suggestions.iter().zip(&at).enumerate() {
            if s.increase > 0.0 {
                self.notify(
                    i,
                    k,
                    day,
                    s.new_rent,
                    settings.notice_days,
                    Some((s.stay_probability / 100.0, baseline_stays[j])),
                );
            }
        }
        self.result.learned_sensitivity = model.sensitivity;
    }
}
