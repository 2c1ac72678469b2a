//! The ECRI backtest: a company of facilities run day by day for a year, each under the street
//! engine (as in `pricing::backtest`), with a rent roll whose tenants react to increases
//! (docs/ecri.md, "Backtest").
//!
//! - The company: one facility per scenario of `pricing::backtest::market::SCENARIOS`, run side
//!   by side on one seed, so the engine can pool what the facilities learn.
//! - Each size's competitors, street rate and demand as in `pricing::backtest::market`; the
//!   street engine (`Policy::Engine` with the default settings) sets the street rates.
//! - History: each facility starts on 1 October, 92 days before the year, and runs them under
//!   the street engine with no increase (revenue not counted), so it has a history of
//!   move-outs when the year starts.
//! - The rent roll: every tenant has a rent, a move-in day and a last-increase day. At the start
//!   the facility holds `start_occupancy` of its units; each tenant moved in a time ago drawn
//!   from the stay (exponential, mean 400 days, at most 5 years), pays the starting street rate
//!   x (0.85 + 0.10 per year stayed, at most 3 years, +- 0.05), and 6 months or more in, was last
//!   increased at a random day of the last year (60 %) or never.
//! - Move-ins: Poisson with the mean of `market` (demand x units / 400 x season x the share the
//!   street rate wins), capped at the vacant units, at the day's street rate. Natural move-outs:
//!   each tenant's stay is drawn when it moves in (exponential, mean 400 days).
//! - Reaction (hidden from the policies): one family per run (`reaction`: `hazard`,
//!   `threshold`, `tenure`), its parameters drawn per facility and seed. A tenant given a notice
//!   moves out within 60 days (the day uniform) with the family's probability. An increase takes
//!   effect `notice_days` after the notice.
//! - Learning (the engine): as the service learns, from the records of the notices given (notice
//!   and effective dates, rents, the day's reference rate, the move-out date) through
//!   `evidence::increase_outcomes`, and from one 90-day window of the tenants not increased
//!   (`learning`).
//! - Revenue: the rent of every day of the year plus six months of the rent roll left at its
//!   end (tenants who will move out after a notice counted until they go, increases not yet in
//!   effect from the day they take effect).
//!
//! Common draws: a tenant's stay and its reactions come from its own numbers (the size's n-th
//! move-in has the same stay under every policy) and move-ins from one draw per size and day,
//! so policies compared on a seed differ by what they do, not by luck.
//!
//! Layout: `facility` (a facility's sizes, rent roll and day of trade), `policies` (the notices
//! each policy gives), `reaction` (the tenants' hidden answer to an increase), `learning` (the
//! engine's evidence, as the service builds it), `draws` (the seeded numbers), `seeds` (the
//! tuning and report seeds, kept apart), `stats` (means and intervals across seeds), `report`
//! (the policies compared in tables).

pub mod report;
pub mod seeds;
pub mod stats;

mod draws;
mod facility;
mod learning;
mod policies;
mod reaction;
mod table;
pub use learning::date_of;
pub use reaction::{Family, Notice, Reaction};

use crate::ecri::{EcriEngineSettings, Outcome, StayModel};
use crate::pricing::backtest::market::{Scenario, SizeMarket, SCENARIOS};
use crate::pricing::backtest::{start_date, DAYS};
use crate::pricing::settings::PricingSettings;
use chrono::Datelike;
use facility::Facility;

/// Days of rent counted after the year: six months.
pub const TAIL_DAYS: f64 = 365.25 / 2.0;
/// Days simulated before the year (from 1 October), under the street engine and with no
/// increase, so the facility has a history of move-outs when the year starts.
pub const WARM_UP_DAYS: u32 = 92;
/// Days within which a tenant who reacts to a notice moves out.
pub const REACTION_DAYS: u32 = 60;
/// Days over which a move-out counts as an outcome of a notice.
pub const OUTCOME_DAYS: i32 = 90;
const MONTH_DAYS: f64 = 365.25 / 12.0;

/// How rents of tenants in place are raised during a run.
#[derive(Debug, Clone, Copy)]
pub enum EcriPolicy<'a> {
    /// Never.
    None,
    /// A fixed rule, on the first of each month.
    Rule(FixedRule),
    /// The engine, on the first of each month, learning from the company's outcomes.
    Engine(&'a EcriEngineSettings),
}

/// Every tenant in place `months` since move-in and since the last increase gets `step_pct`,
/// with the new rent at most the street rate x (1 + `cap_over_street_pct` / 100) when set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedRule {
    pub step_pct: f64,
    pub months: f64,
    pub cap_over_street_pct: Option<f64>,
    pub notice_days: u32,
}

impl FixedRule {
    /// The rule of thumb: +10 % once a year.
    pub const RULE_OF_THUMB: FixedRule = FixedRule {
        step_pct: 10.0,
        months: 12.0,
        cap_over_street_pct: None,
        notice_days: 30,
    };
}

/// One facility over one run (its last year, when it runs several).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EcriResult {
    /// Rent of the year.
    pub year_revenue: f64,
    /// Six months of the rent roll left at the end.
    pub tail_revenue: f64,
    pub notices: u32,
    /// Sum of the notices' increases (%), for the mean.
    pub increase_pct_sum: f64,
    /// Notices whose 90 days ended within the year, the engine's predicted stays (sum of
    /// probabilities) and those who stayed.
    pub scored_notices: u32,
    pub predicted_stays: f64,
    pub realized_stays: u32,
    pub end_occupancy_pct: f64,
    /// Decision days the stop-loss held the facility.
    pub stop_loss_days: u32,
    pub sensitivity: f64,
    pub learned_sensitivity: f64,
    /// The same notice figures by quarter of the notice (the first on the prior alone, the
    /// later ones on what the engine has learned).
    pub by_quarter: [Quarter; 4],
    /// The same by the tenant's history at the notice ([`history_class`]): a first increase;
    /// raised before, the last increase 12 months or more before; under 12 months before.
    pub by_history: [Quarter; 3],
}

/// A quarter's notices: how many, their increases (%) summed, and of those scored (their 90
/// days ended within the year) the predicted stays (sum of probabilities) and the realized.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Quarter {
    pub notices: u32,
    pub increase_pct_sum: f64,
    pub scored: u32,
    pub predicted: f64,
    pub realized: u32,
    /// Of those scored, the engine's stay without the increase (sum of probabilities) and how
    /// many the simulator's own draws would have kept 90 days without it (a diagnosis the
    /// engine never sees: it splits the stay gap into the baseline's part and the reaction's).
    pub predicted_baseline: f64,
    pub natural: u32,
}

/// The class (0-2) of a tenant's history at a notice: no increase before; the last 12 months
/// or more before; under 12 months before (`stay::raised_recently`).
pub(crate) fn history_class(past_increases: u32, months_since_last_increase: Option<f64>) -> usize {
    if past_increases == 0 {
        0
    } else if crate::ecri::stay::raised_recently(months_since_last_increase) {
        2
    } else {
        1
    }
}

/// The quarter (0-3) of a day of the year (days before it: the first).
pub(crate) fn quarter(day: i32) -> usize {
    (date_of(day.max(0)).month0() / 3).min(3) as usize
}

impl EcriResult {
    pub fn revenue(&self) -> f64 {
        self.year_revenue + self.tail_revenue
    }
}

/// How many years a run lasts; only the last is counted (its rent, its notices, the six months
/// of the rent roll it leaves). Every earlier year runs under the same policy, so a policy that
/// learns is judged once it has learned, as a going concern, and a fixed rule on the roll its
/// own earlier years left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Years(u32);

impl Years {
    /// One year: the run as every figure before the option.
    pub const ONE: Years = Years(1);

    /// 1 to 3 years.
    pub fn new(years: u32) -> Result<Self, String> {
        if (1..=3).contains(&years) {
            Ok(Self(years))
        } else {
            Err(format!("years must be 1 to 3, not {years}"))
        }
    }

    pub fn get(self) -> u32 {
        self.0
    }

    /// The first day counted (day 0 is 1 January of the first year).
    pub(crate) fn counted_from(self) -> i32 {
        ((self.0 - 1) * DAYS) as i32
    }

    /// The day after the last simulated.
    pub(crate) fn end(self) -> i32 {
        (self.0 * DAYS) as i32
    }
}

/// Runs the company (one facility per scenario) on one seed, its tenants reacting as `family`,
/// under a policy for `years`; one result per facility, in `SCENARIOS` order.
pub fn simulate(
    seed: u64,
    family: Family,
    policy: EcriPolicy<'_>,
    years: Years,
) -> Vec<EcriResult> {
    simulate_scenarios(&SCENARIOS, seed, family, policy, years)
}

/// [`simulate`] with the company's facilities given.
pub fn simulate_scenarios(
    scenarios: &[Scenario],
    seed: u64,
    family: Family,
    policy: EcriPolicy<'_>,
    years: Years,
) -> Vec<EcriResult> {
    let street = PricingSettings::default();
    let mut company: Vec<Facility> = scenarios
        .iter()
        .enumerate()
        .map(|(i, s)| Facility::new(s, i, seed, family, years))
        .collect();
    let start = start_date();
    for morning in 0..WARM_UP_DAYS + DAYS * years.get() {
        let d = morning as i32 - WARM_UP_DAYS as i32;
        let date = start + chrono::Duration::days(i64::from(d));
        // The engine learns once a month, before the day's decisions.
        let models: Vec<(StayModel, Vec<Outcome>)> = match policy {
            EcriPolicy::Engine(settings) if date.day() == 1 && d >= 0 => {
                learning::learn_company(&company, settings, d)
            }
            _ => Vec::new(),
        };
        for (fi, f) in company.iter_mut().enumerate() {
            if date.day() == 1 {
                f.move_ins_mtd = 0;
            }
            for s in &mut f.sizes {
                s.market.move_competitors(morning, date);
                s.market.tenants = s.roll.iter().map(|t| t.rent).collect();
            }
            let mut markets: Vec<SizeMarket> = f.sizes.iter().map(|s| s.market.clone()).collect();
            f.street.morning(&markets);
            f.street
                .run(&street, morning, date, &mut markets, f.move_ins_mtd);
            for (s, m) in f.sizes.iter_mut().zip(markets) {
                s.market.street_rate = m.street_rate;
            }
            if date.day() == 1 && d >= 0 {
                match policy {
                    EcriPolicy::None => {}
                    EcriPolicy::Rule(rule) => f.apply_rule(&rule, d),
                    EcriPolicy::Engine(settings) => {
                        let (model, recent) = &models[fi];
                        f.apply_engine(settings, model, recent, d);
                    }
                }
            }
            f.trade(d);
        }
    }
    company
        .into_iter()
        .map(|mut f| {
            f.finish();
            f.result
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_is_classed_by_the_tenants_history() {
        assert_eq!(history_class(0, Some(3.0)), 0);
        assert_eq!(history_class(1, Some(6.0)), 2);
        assert_eq!(history_class(1, Some(12.0)), 1);
        assert_eq!(history_class(2, None), 1);
    }

    #[test]
    fn a_run_of_several_years_counts_its_last() {
        assert!(Years::new(0).is_err() && Years::new(4).is_err());
        let two = Years::new(2).unwrap();
        assert_eq!((two.counted_from(), two.end()), (365, 730));
        assert_eq!((Years::ONE.counted_from(), Years::ONE.end()), (0, 365));
        // A year's rent and notices, not two years': the second year's rent is of the order of
        // the first's (twice it when both were counted).
        let rule = EcriPolicy::Rule(FixedRule::RULE_OF_THUMB);
        let first = simulate(1, Family::Hazard, rule, Years::ONE);
        let second = simulate(1, Family::Hazard, rule, two);
        for (a, b) in first.iter().zip(&second) {
            assert!(a.notices > 0 && b.notices > 0);
            assert!(b.scored_notices <= b.notices);
            // Every counted notice is in one quarter and one history class.
            for r in [a, b] {
                let sum = |g: &[Quarter]| {
                    g.iter()
                        .map(|q| (q.notices, q.scored))
                        .fold((0, 0), |s, x| (s.0 + x.0, s.1 + x.1))
                };
                assert_eq!(sum(&r.by_quarter), (r.notices, r.scored_notices));
                assert_eq!(sum(&r.by_history), (r.notices, r.scored_notices));
            }
            let ratio = b.year_revenue / a.year_revenue;
            assert!((0.7..1.5).contains(&ratio), "{ratio}");
        }
    }
}
