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
//!
//! Layout: `plan` (eligibility and the figures of one tenant), `search` (the best new rent),
//! `explain` (the suggestion and its reasons), `facility` (the stop-loss and the customer
//! rule), `edit` (a new rent chosen by hand).

use super::settings::EcriEngineSettings;
use super::stay::StayModel;
use crate::values::round2;
use serde::{Deserialize, Serialize};

mod edit;
mod explain;
mod facility;
mod plan;
mod search;
pub use edit::{reprice, Refused};
pub use facility::{decide_facility, stop_loss};

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
