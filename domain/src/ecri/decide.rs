//! The decision for one tenant (or cohort), and for a facility's whole rent roll.
//!
//! Per tenant, over the horizon H (months) and the notice n (months), with the facility's
//! monthly baseline move-out hazard h (from its 90-day baseline) and A(t) = (1 - e^(-ht)) / h
//! the months a tenant is expected to pay within t:
//! - staying, the tenant pays the increase from the end of the notice: a = inc x (A(H) - A(n));
//! - a move-out the increase causes happens when it takes effect and costs
//!   c = max(0, rent x (A(H) - A(n)) - street x (A(H) - A(min(H, n + D)))): the rent that stops,
//!   less what the unit earns once re-let at the street rate of its tier after D months empty.
//!   D ([`SizeMarket::expected_vacant_months`]), at most H, is how long a vacant unit of the
//!   size and tier takes to re-let: its vacant units over its gross move-ins a month, shrunk
//!   toward a prior of [`RELET_PRIOR_MONTHS`] weighing [`RELET_PRIOR_WEIGHT_MONTHS`] months of
//!   evidence. A move-out is never counted as a gain, even where the street rate is above the
//!   rent (an increase is not a tool to push a tenant out);
//! - with `next_increase_pct` > 0, c also counts that share of the next increase's expected
//!   gain (its notice `min_months_since_increase` after this one takes effect, weighed the same
//!   way for the tenant as it will then be): a tenant who leaves cannot be raised again;
//! - expected gain = (1 - extra) x a - extra x c, extra the stay model's extra move-out.
//!
//! The new rent is searched over whole currency amounts within every guardrail; the one with
//! the largest expected gain is suggested if that gain is positive, otherwise none.
//!
//! Layout: `plan` (eligibility and the figures of one tenant), `search` (the best new rent),
//! `explain` (the suggestion and its reasons), `facility` (the stop-loss and the customer
//! rule), `edit` (a new rent chosen by hand).

use super::settings::EcriEngineSettings;
use super::stay::StayModel;
use crate::values::round2;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod edit;
mod explain;
mod facility;
mod plan;
mod ramp;
mod search;
mod step_test;
#[cfg(test)]
mod tests;
pub use edit::{reprice, Refused};
pub use facility::{decide_facility, stop_loss};

/// Days in an average month.
const MONTH_DAYS: f64 = 365.25 / 12.0;

/// The months a vacant unit takes to re-let before a size's own figures speak: about 1.5 (an
/// industry figure: 40 move-ins a month against 60 vacant units re-let each in about 1.5
/// months).
pub const RELET_PRIOR_MONTHS: f64 = 1.5;

/// How much the prior weighs, in months of the size's own move-ins: one month against the
/// three of the pace's window, so the size's own figures carry three quarters of the estimate.
pub const RELET_PRIOR_WEIGHT_MONTHS: f64 = 1.0;

/// The occupancy (%) from which a size counts as full: its move-ins are held by its vacant
/// units, so a vacated unit re-lets at the gross pace.
pub const FULL_OCCUPANCY_PCT: f64 = 95.0;

/// The months the move-in pace is counted over (the 90 days before the roll's date).
pub const PACE_MONTHS: f64 = 90.0 / MONTH_DAYS;

/// One tenant of the rent roll, or a cohort of tenants who share a rent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TenantInput {
    pub tenant_id: String,
    pub size: String,
    /// The unit's tier (`climate`, `drive-up`, ...), where known: its market is the tier's
    /// ([`market_for`]).
    #[serde(default)]
    pub tier: Option<String>,
    /// Monthly rent paid now.
    pub rent: f64,
    /// None when unknown.
    pub months_since_move_in: Option<f64>,
    /// Months since the latest increase in force, whichever record knows of it (the CRM's
    /// last increase date, the roll's own upward rent changes, the approved notices in force);
    /// None when never increased.
    pub months_since_last_increase: Option<f64>,
    /// The effective date of an approved increase not yet in force: the tenant is held
    /// (`months_since_increase`) until it is.
    #[serde(default)]
    pub pending_increase: Option<NaiveDate>,
    /// How many increases of the tenant are known (in force).
    #[serde(default)]
    pub past_increases: u32,
    /// The rent in force 12 months before (at move-in when the tenant came since); None when
    /// unknown, taken as the rent now. Guardrail `twelve_month_cap`.
    #[serde(default)]
    pub rent_12_months_ago: Option<f64>,
    /// The rent in force on the settings' `cap_base_date` (at move-in when the tenant came
    /// since); None when unknown, taken as the rent now. Guardrail `emergency_cap`.
    #[serde(default)]
    pub rent_at_cap_base: Option<f64>,
    /// The customer renting the unit, where one customer rents several.
    pub customer_id: Option<String>,
    /// Staff and system flags (`business`, `delinquent`, `do_not_increase`, ...).
    pub flags: Vec<String>,
    /// 1 for a tenant, N for a cohort of N tenants at this rent.
    pub tenant_count: u32,
}

/// What the engine knows of a size's market, or of one tier of the size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SizeMarket {
    /// Today's street rate (what a vacated unit re-lets at).
    pub street_rate: f64,
    /// Whether these are one tier's figures (else the size's, all tiers together).
    #[serde(default)]
    pub of_tier: bool,
    pub competitor_low: Option<f64>,
    pub competitor_median: Option<f64>,
    pub competitor_high: Option<f64>,
    /// Units of the size.
    pub units: u32,
    /// Occupied share of the units (%).
    pub occupancy_pct: f64,
    /// Gross move-ins per month lately (over [`PACE_MONTHS`]).
    pub move_ins_per_month: f64,
    /// Move-outs per month lately, where known (shown, not weighed: a vacancy re-lets at the
    /// gross move-in pace whatever the net).
    pub move_outs_per_month: Option<f64>,
}

/// The key of a tier's market in the map [`decide_facility`] takes: `size/tier` (the tier
/// lower-cased and trimmed); the size's own market is keyed by the size alone.
pub fn market_key(size: &str, tier: &str) -> String {
    format!("{size}/{}", tier.trim().to_lowercase())
}

/// The market a tenant is weighed against: its size and tier's when known, else its size's.
pub fn market_for<'a>(
    markets: &'a BTreeMap<String, SizeMarket>,
    t: &TenantInput,
) -> Option<&'a SizeMarket> {
    t.tier
        .as_deref()
        .filter(|tier| !tier.trim().is_empty())
        .and_then(|tier| markets.get(&market_key(&t.size, tier)))
        .or_else(|| markets.get(&t.size))
}

impl SizeMarket {
    /// The rent a tenant compares theirs with: the competitor median, else the street rate.
    pub fn reference_rate(&self) -> f64 {
        self.competitor_median
            .filter(|m| m.is_finite() && *m > 0.0)
            .unwrap_or(self.street_rate)
    }

    /// Months a unit vacated by an increase stays empty, at most `horizon`: in a size that is
    /// not full ([`FULL_OCCUPANCY_PCT`]) move-ins come from demand, not from vacant units, so
    /// one vacancy more re-lets only once the size runs out of vacant units at its net fill
    /// pace (move-ins less move-outs a month): V / net, the horizon when the size does not fill
    /// (or its move-outs are unknown and it is not full: then the gross pace,
    /// [`Self::expected_vacant_months`]). Never less than the gross pace's months.
    pub fn marginal_vacant_months(&self, horizon: f64) -> f64 {
        let gross = self.expected_vacant_months(horizon);
        let Some(outs) = self.move_outs_per_month.filter(|o| o.is_finite()) else {
            return gross;
        };
        if self.occupancy_pct >= FULL_OCCUPANCY_PCT {
            return gross;
        }
        let vacant = (f64::from(self.units) * (1.0 - self.occupancy_pct / 100.0)).max(1.0);
        let net = self.move_ins_per_month.max(0.0) - outs.max(0.0);
        let marginal = if net > 1e-9 { vacant / net } else { horizon };
        marginal.max(gross).min(horizon)
    }

    /// Months a unit vacated today is expected to stay empty, at most `horizon`: how long a
    /// vacant unit takes to re-let, V / I for V vacant units (at least the one vacated) and I
    /// gross move-ins a month, as the posterior of a re-let rate per vacant unit with the prior
    /// 1 / [`RELET_PRIOR_MONTHS`] weighing [`RELET_PRIOR_WEIGHT_MONTHS`] months against the
    /// [`PACE_MONTHS`] of the pace: D = V (T + W) / (I T + W V / D0).
    pub fn expected_vacant_months(&self, horizon: f64) -> f64 {
        let vacant = (f64::from(self.units) * (1.0 - self.occupancy_pct / 100.0)).max(1.0);
        let ins = self.move_ins_per_month.max(0.0);
        let (t, w) = (PACE_MONTHS, RELET_PRIOR_WEIGHT_MONTHS);
        let months = vacant * (t + w) / (ins * t + w * vacant / RELET_PRIOR_MONTHS);
        if months.is_finite() {
            months.min(horizon)
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
    /// The jurisdiction's cap over the rent in force on `cap_base_date` (before an emergency).
    EmergencyCap,
    /// The new rent at most the rent of 12 months before x (1 + `cap_12_months_pct`).
    TwelveMonthCap,
    MaxPremiumOverStreet,
    MinimumIncrease,
    CustomerUnits,
    /// The facility's model still rests on the prior: a share of its increases goes first.
    Ramp,
    /// The facility's model cannot yet tell what the round figures cost: a share of the
    /// increases past them is held just under them.
    StepTest,
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
            Self::EmergencyCap => "emergency_cap",
            Self::TwelveMonthCap => "twelve_month_cap",
            Self::MaxPremiumOverStreet => "max_premium_over_street",
            Self::MinimumIncrease => "minimum_increase",
            Self::CustomerUnits => "customer_units",
            Self::Ramp => "ramp",
            Self::StepTest => "step_test",
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

/// The reasons whose two-decimal figures are not amounts (`sensitivity`: `1.25 x the prior`,
/// `the company's 1.00`): their text is read as it is written.
const WITHOUT_AMOUNTS: &[&str] = &["sensitivity"];

/// The text of the reason `name` with its amounts written as money of `currency`
/// (`crate::prose`): how a reason is read, whatever run or batch stored it.
pub fn reason_with_money(name: &str, text: &str, currency: crate::values::Currency) -> String {
    if WITHOUT_AMOUNTS.contains(&name) {
        text.to_owned()
    } else {
        crate::prose::with_money(text, currency)
    }
}

impl Reason {
    /// Its text with the amounts as money of `currency` ([`reason_with_money`]).
    pub fn text_in(&self, currency: crate::values::Currency) -> String {
        reason_with_money(&self.name, &self.text, currency)
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
    /// net of the expected move-outs and the months their units stand empty (and of the share
    /// of the next increase those move-outs forgo that `next_increase_pct` counts).
    pub expected_gain: f64,
    /// The guardrail that held the increase back or capped it; none when the stay model chose.
    pub binding_guardrail: Option<Guardrail>,
    pub reasons: Vec<Reason>,
}

/// The suggestion for one tenant (or cohort), without the facility-level guardrails (the
/// stop-loss and the customer's other units: [`decide_facility`]).
pub fn decide(
    t: &TenantInput,
    m: &SizeMarket,
    model: &StayModel,
    s: &EcriEngineSettings,
) -> Suggestion {
    match plan::plan(t, m, model, s) {
        Err((g, why)) => explain::held(t, model, g, why),
        Ok(p) => suggest(&p, s),
    }
}

/// The engine's own suggestion for an eligible tenant: the best new rent of its plan.
fn suggest(p: &plan::Plan<'_>, s: &EcriEngineSettings) -> Suggestion {
    let (r, binding, reasons) = search::best(p);
    explain::suggestion(p, r, binding, s, reasons)
}
