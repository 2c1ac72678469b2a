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
//! - Reaction (hidden from the policies): a tenant given a notice of an increase x (a fraction)
//!   to a new rent r moves out within 60 days (the day uniform) with probability
//!   `1 - exp(-s (1.2 x^1.5 + 3 max(0, r / median - 1 - m)))`, the median the competitors' today,
//!   s the facility's sensitivity (e^(0.6 z), z standard normal, within 0.3-3) and m what moving
//!   costs its tenants (uniform 10-30 % of the median): both drawn per facility and seed. An
//!   increase takes effect `notice_days` after the notice.
//! - Revenue: the rent of every day of the year plus six months of the rent roll left at its
//!   end (tenants who will move out after a notice counted until they go, increases not yet in
//!   effect from the day they take effect).
//!
//! Common draws: a tenant's stay and its reactions come from its own numbers (the size's n-th
//! move-in has the same stay under every policy) and move-ins from one draw per size and day,
//! so policies compared on a seed differ by what they do, not by luck.

pub mod report;

use crate::analytics::ecri::{suggest as size_rule, Cohort, EcriSettings};
use crate::ecri::{
    decide_facility, learn, EcriEngineSettings, Outcome, SizeMarket as EngineMarket, StayModel,
    TenantInput,
};
use crate::pricing::backtest::market::{
    demand_share, Scenario, SizeMarket, SCENARIOS, SIZES, STAY_DAYS,
};
use crate::pricing::backtest::{start_date, StreetEngine, DAYS};
use crate::pricing::seasonality::NATIONAL_PRIOR;
use crate::pricing::settings::PricingSettings;
use chrono::Datelike;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, VecDeque};

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
    /// The per-size rule of `analytics::ecri` applied to each tenant, on the first of each
    /// month, with a 30-day notice.
    SizeRule(&'a EcriSettings),
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

/// What a facility's tenants do when their rent goes up: hidden from every policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reaction {
    pub sensitivity: f64,
    /// What moving costs, as a share of the competitor median.
    pub moving_cost: f64,
}

impl Reaction {
    /// The facility's reaction on a seed.
    pub fn draw(seed: u64, facility: usize) -> Self {
        let mut rng = StdRng::seed_from_u64(mix(&[seed, facility as u64, 0xec71]));
        // Box-Muller for one standard normal draw.
        let (u1, u2): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        Self {
            sensitivity: (0.6 * z).exp().clamp(0.3, 3.0),
            moving_cost: rng.gen_range(0.10..0.30),
        }
    }

    /// The chance a tenant moves out after a notice.
    pub fn move_out(&self, old_rent: f64, new_rent: f64, median: f64) -> f64 {
        let x = (new_rent / old_rent - 1.0).max(0.0);
        let over = (new_rent / median - 1.0 - self.moving_cost).max(0.0);
        1.0 - (-self.sensitivity * (1.2 * x.powf(1.5) + 3.0 * over)).exp()
    }
}

/// SplitMix64 over the parts: a number of its own for each (seed, facility, size, tenant, ...).
fn mix(parts: &[u64]) -> u64 {
    parts.iter().fold(0x853c_49e6_748f_ea9b, |h, &p| {
        let mut z = (h ^ p).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

fn uniform(parts: &[u64]) -> f64 {
    (mix(parts) >> 11) as f64 / (1u64 << 53) as f64
}

/// The Poisson count of mean `mean` whose cumulative probability first reaches `u`.
fn poisson_at(u: f64, mean: f64) -> u32 {
    if !(mean.is_finite() && mean > 0.0) {
        return 0;
    }
    let mut p = (-mean).exp();
    let mut cdf = p;
    let mut k = 0;
    while u > cdf && k < 10_000 {
        k += 1;
        p *= mean / f64::from(k);
        cdf += p;
    }
    k
}

#[derive(Debug, Clone)]
struct Tenant {
    serial: u32,
    rent: f64,
    move_in: i32,
    last_increase: Option<i32>,
    /// The day its natural stay ends.
    natural_leave: i32,
    /// The day it moves out after a notice.
    reaction_leave: Option<i32>,
    /// A notice in force: (effective day, new rent).
    pending: Option<(i32, f64)>,
    notices: u32,
}

#[derive(Debug, Clone)]
struct Size {
    market: SizeMarket,
    roll: Vec<Tenant>,
    next_serial: u32,
    /// The day each tenant (by serial) moved out.
    left_on: Vec<Option<i32>>,
    /// Move-ins and move-outs of each of the last 90 days.
    arrivals: VecDeque<u32>,
    departures: VecDeque<u32>,
}

/// A 90-day window: a notice, or a tenant not increased on a decision day.
#[derive(Debug, Clone, Copy)]
struct Window {
    size: usize,
    serial: u32,
    start: i32,
    increase_pct: f64,
    premium_pct: f64,
    /// The engine's stay probability (0..1) for a notice it gave.
    predicted: Option<f64>,
}

/// One facility over one run.
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
    /// Tenants not increased, their 90-day windows within the year and those who stayed.
    pub baseline_windows: u32,
    pub baseline_stays: u32,
    pub end_occupancy_pct: f64,
    /// Decision days the stop-loss held the facility.
    pub stop_loss_days: u32,
    pub sensitivity: f64,
    pub learned_sensitivity: f64,
}

impl EcriResult {
    pub fn revenue(&self) -> f64 {
        self.year_revenue + self.tail_revenue
    }
}

struct Facility {
    scenario: Scenario,
    index: usize,
    seed: u64,
    reaction: Reaction,
    sizes: Vec<Size>,
    street: StreetEngine,
    move_ins_mtd: u32,
    windows: Vec<Window>,
    result: EcriResult,
}

impl Facility {
    fn new(scenario: &Scenario, index: usize, seed: u64) -> Self {
        let first = -(WARM_UP_DAYS as i32);
        let start = start_date() + chrono::Duration::days(i64::from(first));
        let mut sizes = Vec::new();
        let mut rng = StdRng::seed_from_u64(mix(&[seed, index as u64, 0x5011]));
        for (i, (_, units, _)) in SIZES.iter().enumerate() {
            let market = SizeMarket::new(scenario, seed, i, start);
            let occupied = (f64::from(*units) * scenario.start_occupancy).round() as u32;
            let roll: Vec<Tenant> = (0..occupied)
                .map(|serial| {
                    let stayed = (-STAY_DAYS * rng.gen_range(1e-9..1.0f64).ln()).min(5.0 * 365.0);
                    let years = (stayed / 365.0).min(3.0);
                    let rent = (market.street_rate
                        * (0.85 + 0.10 * years + rng.gen_range(-0.05..0.05)))
                    .round();
                    let last_increase = (stayed > 182.0 && rng.gen_bool(0.6))
                        .then(|| first - rng.gen_range(0.0..stayed.min(365.0)) as i32);
                    Tenant {
                        serial,
                        rent,
                        move_in: first - stayed as i32,
                        last_increase,
                        natural_leave: first + natural_stay(seed, index, i, serial),
                        reaction_leave: None,
                        pending: None,
                        notices: 0,
                    }
                })
                .collect();
            sizes.push(Size {
                market,
                next_serial: occupied,
                left_on: vec![None; occupied as usize],
                roll,
                arrivals: VecDeque::with_capacity(91),
                departures: VecDeque::with_capacity(91),
            });
        }
        let units: u32 = SIZES.iter().map(|s| s.1).sum();
        let reaction = Reaction::draw(seed, index);
        Self {
            scenario: *scenario,
            index,
            seed,
            reaction,
            street: StreetEngine::new(scenario, units, SIZES.len()),
            sizes,
            move_ins_mtd: 0,
            windows: Vec::new(),
            result: EcriResult {
                sensitivity: reaction.sensitivity,
                ..EcriResult::default()
            },
        }
    }

    /// The 90-day outcomes known on `day`, from `since` on (windows that started then or later).
    fn outcomes(&self, day: i32, since: i32) -> Vec<Outcome> {
        self.windows
            .iter()
            .filter(|w| w.start >= since && w.start + OUTCOME_DAYS <= day)
            .map(|w| {
                let left = self.sizes[w.size].left_on[w.serial as usize]
                    .is_some_and(|d| d <= w.start + OUTCOME_DAYS);
                Outcome {
                    increase_pct: w.increase_pct,
                    premium_pct: w.premium_pct,
                    tenants: 1,
                    moved_out: u32::from(left),
                }
            })
            .collect()
    }

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

    /// Gives a notice: draws the tenant's reaction and records the window.
    fn notify(
        &mut self,
        size: usize,
        k: usize,
        day: i32,
        new_rent: f64,
        notice_days: u32,
        predicted: Option<f64>,
    ) {
        let (seed, index) = (self.seed, self.index);
        let s = &mut self.sizes[size];
        let median = s.market.market_median();
        let observed = s.market.observed_median();
        let t = &mut s.roll[k];
        let p = self.reaction.move_out(t.rent, new_rent, median);
        let key = [
            seed,
            index as u64,
            size as u64,
            u64::from(t.serial),
            u64::from(t.notices),
        ];
        if uniform(&[&key[..], &[1]].concat()) < p {
            let after = 1 + (uniform(&[&key[..], &[2]].concat()) * f64::from(REACTION_DAYS)) as i32;
            t.reaction_leave = Some(t.reaction_leave.map_or(day + after, |d| d.min(day + after)));
        }
        t.notices += 1;
        t.pending = Some((day + notice_days as i32, new_rent));
        self.windows.push(Window {
            size,
            serial: t.serial,
            start: day,
            increase_pct: (new_rent / t.rent - 1.0) * 100.0,
            premium_pct: (new_rent / observed - 1.0) * 100.0,
            predicted,
        });
        self.result.notices += 1;
        self.result.increase_pct_sum += (new_rent / t.rent - 1.0) * 100.0;
    }

    /// Records a 90-day window for every tenant in place not increased today.
    fn baseline_windows(&mut self, day: i32, min_months: f64) {
        for (i, s) in self.sizes.iter().enumerate() {
            for t in &s.roll {
                let months = f64::from(day - t.move_in) / MONTH_DAYS;
                if t.pending.is_none() && t.reaction_leave.is_none() && months >= min_months {
                    let observed = s.market.observed_median();
                    self.windows.push(Window {
                        size: i,
                        serial: t.serial,
                        start: day,
                        increase_pct: 0.0,
                        premium_pct: (t.rent / observed - 1.0) * 100.0,
                        predicted: None,
                    });
                }
            }
        }
    }

    fn apply_rule(&mut self, rule: &FixedRule, day: i32) {
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

    fn apply_size_rule(&mut self, settings: &EcriSettings, day: i32) {
        for size in 0..self.sizes.len() {
            let street = self.sizes[size].market.street_rate;
            for k in 0..self.sizes[size].roll.len() {
                let t = &self.sizes[size].roll[k];
                if t.pending.is_some() || t.reaction_leave.is_some() {
                    continue;
                }
                // Months since the last increase, else since move-in.
                let since = f64::from(day - t.last_increase.unwrap_or(t.move_in)) / MONTH_DAYS;
                let cohort = Cohort {
                    tenant_count: 1,
                    avg_rent: t.rent,
                    months_since_last_increase: Some(since),
                };
                let increase = size_rule(&cohort, street, settings).increase;
                if increase > 0.0 {
                    let new_rent = t.rent + increase;
                    self.notify(size, k, day, new_rent, 30, None);
                }
            }
        }
    }

    fn apply_engine(&mut self, settings: &EcriEngineSettings, model: &StayModel, day: i32) {
        let markets = self.engine_markets();
        let recent = self.outcomes(day, day - 180 - OUTCOME_DAYS);
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
                });
                at.push((i, k));
            }
        }
        let suggestions = decide_facility(&roll, &markets, model, &recent, settings);
        if suggestions
            .iter()
            .any(|s| s.binding_guardrail == Some(crate::ecri::Guardrail::StopLoss))
        {
            self.result.stop_loss_days += 1;
        }
        for (s, &(i, k)) in suggestions.iter().zip(&at) {
            if s.increase > 0.0 {
                self.notify(
                    i,
                    k,
                    day,
                    s.new_rent,
                    settings.notice_days,
                    Some(s.stay_probability / 100.0),
                );
            }
        }
        self.result.learned_sensitivity = model.sensitivity;
    }

    /// Move-outs, move-ins, increases taking effect and the day's rent.
    fn trade(&mut self, day: i32) {
        let date = start_date() + chrono::Duration::days(i64::from(day));
        let season = NATIONAL_PRIOR[date.month0() as usize];
        let (seed, index, scenario) = (self.seed, self.index, self.scenario);
        for (i, s) in self.sizes.iter_mut().enumerate() {
            let left_on = &mut s.left_on;
            let before = s.roll.len();
            s.roll.retain(|t| {
                let leaves = t.natural_leave <= day || t.reaction_leave.is_some_and(|d| d <= day);
                if leaves {
                    left_on[t.serial as usize] = Some(day);
                }
                !leaves
            });
            let departed = (before - s.roll.len()) as u32;
            let mean = scenario.demand * f64::from(s.market.units) / STAY_DAYS
                * season
                * demand_share(s.market.street_rate, s.market.market_median());
            let u = uniform(&[seed, index as u64, i as u64, day as u64, 0xa7]);
            let vacant = s.market.units.saturating_sub(s.roll.len() as u32);
            let arriving = poisson_at(u, mean).min(vacant);
            for _ in 0..arriving {
                let serial = s.next_serial;
                s.next_serial += 1;
                s.left_on.push(None);
                s.roll.push(Tenant {
                    serial,
                    rent: s.market.street_rate,
                    move_in: day,
                    last_increase: None,
                    natural_leave: day + natural_stay(seed, index, i, serial),
                    reaction_leave: None,
                    pending: None,
                    notices: 0,
                });
            }
            if s.arrivals.len() == 90 {
                s.arrivals.pop_front();
                s.departures.pop_front();
            }
            s.departures.push_back(departed);
            s.arrivals.push_back(arriving);
            self.move_ins_mtd += arriving;
            for t in &mut s.roll {
                if let Some((effective, new_rent)) = t.pending {
                    if effective <= day {
                        t.rent = new_rent;
                        t.last_increase = Some(effective);
                        t.pending = None;
                    }
                }
            }
            if day >= 0 {
                self.result.year_revenue +=
                    s.roll.iter().map(|t| t.rent).sum::<f64>() * 12.0 / 365.0;
            }
        }
    }

    fn finish(&mut self) {
        let end = DAYS as i32;
        let tail_end = f64::from(end) + TAIL_DAYS;
        let mut tail = 0.0;
        let mut units = 0u32;
        let mut occupied = 0usize;
        for s in &self.sizes {
            units += s.market.units;
            occupied += s.roll.len();
            for t in &s.roll {
                let stop = t
                    .reaction_leave
                    .map_or(tail_end, |d| f64::from(d).min(tail_end));
                let (old_until, new_rent) = match t.pending {
                    Some((effective, new_rent)) => (f64::from(effective).min(stop), new_rent),
                    None => (stop, t.rent),
                };
                let old_days = (old_until - f64::from(end)).max(0.0);
                let new_days = (stop - old_until).max(0.0);
                tail += (t.rent * old_days + new_rent * new_days) * 12.0 / 365.25;
            }
        }
        self.result.tail_revenue = tail;
        self.result.end_occupancy_pct = occupied as f64 / f64::from(units) * 100.0;
        for w in &self.windows {
            if w.start < 0 || w.start + OUTCOME_DAYS > end {
                continue;
            }
            let stayed = self.sizes[w.size].left_on[w.serial as usize]
                .is_none_or(|d| d > w.start + OUTCOME_DAYS);
            if w.increase_pct > 0.0 {
                self.result.scored_notices += 1;
                self.result.predicted_stays += w.predicted.unwrap_or(0.0);
                self.result.realized_stays += u32::from(stayed);
            } else {
                self.result.baseline_windows += 1;
                self.result.baseline_stays += u32::from(stayed);
            }
        }
    }
}

/// Days a tenant (the size's n-th) stays: exponential, mean 400 days.
fn natural_stay(seed: u64, facility: usize, size: usize, serial: u32) -> i32 {
    let u = uniform(&[
        seed,
        facility as u64,
        size as u64,
        u64::from(serial),
        0x57a7,
    ]);
    (-STAY_DAYS * (1.0 - u).max(1e-12).ln()).ceil() as i32
}

/// Runs the company (one facility per scenario) on one seed under a policy; one result per
/// facility, in `SCENARIOS` order.
pub fn simulate(seed: u64, policy: EcriPolicy<'_>) -> Vec<EcriResult> {
    simulate_scenarios(&SCENARIOS, seed, policy)
}

/// [`simulate`] with the company's facilities given.
pub fn simulate_scenarios(
    scenarios: &[Scenario],
    seed: u64,
    policy: EcriPolicy<'_>,
) -> Vec<EcriResult> {
    let street = PricingSettings::default();
    let mut company: Vec<Facility> = scenarios
        .iter()
        .enumerate()
        .map(|(i, s)| Facility::new(s, i, seed))
        .collect();
    let start = start_date();
    for morning in 0..WARM_UP_DAYS + DAYS {
        let d = morning as i32 - WARM_UP_DAYS as i32;
        let date = start + chrono::Duration::days(i64::from(d));
        // The engine learns once a month, before the day's decisions.
        let models: Vec<StayModel> = match policy {
            EcriPolicy::Engine(settings) if date.day() == 1 && d >= 0 => {
                let known: Vec<Vec<Outcome>> =
                    company.iter().map(|f| f.outcomes(d, i32::MIN)).collect();
                (0..company.len())
                    .map(|i| {
                        let others: Vec<Outcome> = known
                            .iter()
                            .enumerate()
                            .filter(|(j, _)| *j != i)
                            .flat_map(|(_, o)| o.iter().copied())
                            .collect();
                        learn(&settings.stay_prior, &others, &known[i])
                    })
                    .collect()
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
            if date.day() == 1 && d < 0 {
                if let EcriPolicy::Engine(settings) = policy {
                    f.baseline_windows(d, settings.min_months_since_move_in);
                }
            } else if date.day() == 1 {
                match policy {
                    EcriPolicy::None => {}
                    EcriPolicy::Rule(rule) => f.apply_rule(&rule, d),
                    EcriPolicy::SizeRule(settings) => f.apply_size_rule(settings, d),
                    EcriPolicy::Engine(settings) => {
                        f.apply_engine(settings, &models[fi], d);
                        f.baseline_windows(d, settings.min_months_since_move_in);
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
