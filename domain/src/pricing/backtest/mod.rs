//! The backtest: the engine's pure core run day by day for a year against the simulated market
//! of `market`, next to a static policy (the starting rates, never changed) and the best fixed
//! rate per size (found by trying fixed rates from 0.60 to 1.40 times the starting median on
//! the same seeds with the true demand). Deterministic: every draw comes from seeded
//! generators.

pub mod demand;
pub mod market;
pub mod optimal;
pub mod reference;
pub mod report;
pub mod seasons;
pub mod seeds;
pub mod wide;
pub mod wide_sizes;
pub mod wide_table;

use super::engine::{recommend, DayReading, EarlierReading, FacilityInput, Mode, UnitTypeInput};
use super::seasonality::{learn, SeasonalIndex, NATIONAL_PRIOR};
use super::settings::PricingSettings;
use chrono::{Datelike, NaiveDate};
use market::{Scenario, SizeMarket, SizeParams, SIZES, STAY_DAYS};

/// Fixed rates tried for the best fixed rate, as multiples of the starting median.
pub const FIXED_GRID: std::ops::RangeInclusive<u32> = 30..=70;
const FIXED_STEP: f64 = 0.02;
/// Days simulated.
pub const DAYS: u32 = 365;
/// Facility occupancy (%) under which a facility enters lease-up, and at which it leaves it.
pub const LEASE_UP_ENTER_PCT: f64 = 60.0;
pub const LEASE_UP_EXIT_PCT: f64 = 70.0;

/// How rates are set during a run.
#[derive(Debug, Clone, Copy)]
pub enum Policy<'a> {
    /// The starting street rates, never changed.
    Static,
    /// One rate all year: this multiple of the size's starting median.
    Fixed(f64),
    /// The engine's recommendation applied every day, as an operator who takes them all.
    Engine(&'a PricingSettings),
    /// A reference, not a product: once a week, each size's rate is the observed competitor
    /// median times `base + per_point x (occupancy - pivot) / 100 + season x (index - 1)`.
    /// Swept over a grid with hindsight (`reference::reference_rules`), it shows how much any
    /// simple occupancy-and-season policy can earn in this market.
    Rule(Rule),
    /// A reference, not a product: on the first of each month, each size's rate is its starting
    /// median times this month's multiple (`[size][month0]`, sizes in `SIZES` order). Tuned
    /// with hindsight (`reference::best_schedules`), it bounds what knowing the season and the
    /// year's demand in advance can earn.
    Schedule(&'a [[f64; 12]]),
    /// A reference, not a product: every day, each size's rate is the observed competitor
    /// median times the multiple the optimal policy of `optimal` (dynamic programming with the
    /// true demand, not the draws) picks for the day and the size's tenants. What the best
    /// possible street-rate policy earns in this market.
    Optimal(&'a optimal::OptimalPolicy),
}

/// The weekly occupancy-and-season rule of [`Policy::Rule`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    pub base: f64,
    pub per_point: f64,
    pub pivot: f64,
    pub season: f64,
}

/// One size over one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SizeResult {
    pub revenue: f64,
    pub end_occupancy_pct: f64,
    pub mean_occupancy_pct: f64,
    pub changes: u32,
    /// Changes in the opposite direction of the change before.
    pub reversals: u32,
    /// Cuts recommended while the size was at or above 93 % occupancy.
    pub cuts_when_full: u32,
    /// Changes the floor guardrail clipped.
    pub floor_binds: u32,
    /// Lowest and highest street rate against the competitor median that day.
    pub min_ratio: f64,
    pub max_ratio: f64,
    /// Tenants at the end of the year, and the sum of their monthly rates.
    pub end_tenants: u32,
    pub end_rent_roll: f64,
    /// Days the size began in each band of occupancy ([`occupancy_band`]), and the sum of its
    /// street rate over the competitor median on those days.
    pub band_days: [u32; 3],
    pub band_ratio: [f64; 3],
}

/// The band of a size's occupancy in the morning: 0 under 85 % (units to fill), 1 from 85 % to
/// under 93 % (about the band the engine aims at), 2 at 93 % and over (full or nearly).
pub fn occupancy_band(occupancy_pct: f64) -> usize {
    if occupancy_pct < 85.0 {
        0
    } else if occupancy_pct < 93.0 {
        1
    } else {
        2
    }
}

/// The move-in target an operator would set: the move-ins that hold the facility at 90 %.
pub fn monthly_target(total_units: u32) -> f64 {
    (f64::from(total_units) * 0.9 * 30.4 / STAY_DAYS).round()
}

/// One change of a size's street rate made by [`StreetEngine::run`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreetChange {
    /// Index of the size in `SIZES`.
    pub size: usize,
    /// Against the direction of the change before.
    pub reversal: bool,
    /// A cut while the size was at or above 93 % occupancy.
    pub cut_when_full: bool,
    /// The `floor` guardrail clipped it.
    pub floor_bound: bool,
}

/// The street engine as an operator who takes every recommendation runs it over the year: what
/// it remembers between days (each morning's occupancy and rate, the last change of each size
/// and its direction, the facility's mode). Shared by this backtest and the ECRI backtest,
/// which runs it under its rent increases.
#[derive(Debug, Clone)]
pub struct StreetEngine {
    target: f64,
    mode: Mode,
    last_change: Vec<Option<NaiveDate>>,
    last_direction: Vec<f64>,
    /// Each morning's (occupancy, street rate) per size, for the engine's earlier reading.
    history: Vec<Vec<(f64, f64)>>,
    /// Each day's move-ins per size.
    move_ins: Vec<Vec<u32>>,
    facility_occupancy: f64,
    /// When the engine learns its season (as the service does): the facility's move-ins per
    /// calendar month so far. Without it, the national prior.
    season: Option<SeasonTally>,
}

/// The facility's move-ins per calendar month, `[month0] = (move-ins, full months)`: the
/// history year's and each full month of the run; and the month under way (its month, its
/// move-ins so far, and whether the run saw it from its first day).
#[derive(Debug, Clone)]
struct SeasonTally {
    months: [(f64, u32); 12],
    current: Option<(u32, f64, bool)>,
}

impl SeasonTally {
    /// Closes the month under way when `date` starts another.
    fn turn(&mut self, date: NaiveDate) {
        match self.current {
            Some((m, _, _)) if m == date.month0() => {}
            previous => {
                if let Some((m, total, true)) = previous {
                    let month = &mut self.months[m as usize];
                    *month = (month.0 + total, month.1 + 1);
                }
                self.current = Some((date.month0(), 0.0, date.day() == 1));
            }
        }
    }

    fn index(&self, date: NaiveDate) -> SeasonalIndex {
        let months: Vec<(u32, f64, u32)> = (0..12)
            .map(|i| (i as u32 + 1, self.months[i].0, self.months[i].1))
            .collect();
        learn(&months).index(date.month0())
    }
}

impl StreetEngine {
    pub fn new(scenario: &Scenario, total_units: u32, sizes: usize) -> Self {
        Self::starting(scenario.start_occupancy * 100.0, total_units, sizes)
    }

    /// The engine of a facility that starts at this occupancy (%).
    pub fn starting(occupancy_pct: f64, total_units: u32, sizes: usize) -> Self {
        Self {
            target: monthly_target(total_units),
            mode: if occupancy_pct < LEASE_UP_ENTER_PCT {
                Mode::LeaseUp
            } else {
                Mode::Stabilized
            },
            last_change: vec![None; sizes],
            last_direction: vec![0.0; sizes],
            history: Vec::with_capacity(DAYS as usize),
            move_ins: Vec::with_capacity(DAYS as usize),
            facility_occupancy: 0.0,
            season: None,
        }
    }

    /// The engine learning its season from the facility's move-ins, as the service does: those
    /// of its history (`(month 1..=12, move-ins, full months)`) and of each full month it runs.
    pub fn learning_season(mut self, history: &[(u32, f64, u32)]) -> Self {
        let mut months = [(0.0, 0); 12];
        for &(m, total, n) in history.iter().filter(|h| (1..=12).contains(&h.0)) {
            let month = &mut months[m as usize - 1];
            *month = (month.0 + total, month.1 + n);
        }
        self.season = Some(SeasonTally {
            months,
            current: None,
        });
        self
    }

    /// Records the morning's occupancy and rates and updates the facility's mode; called every
    /// day before any rate is set.
    pub fn morning(&mut self, markets: &[SizeMarket]) {
        let units: u32 = markets.iter().map(|m| m.units).sum();
        let occupied: usize = markets.iter().map(|m| m.tenants.len()).sum();
        self.facility_occupancy = occupied as f64 / f64::from(units) * 100.0;
        if self.facility_occupancy < LEASE_UP_ENTER_PCT {
            self.mode = Mode::LeaseUp;
        } else if self.facility_occupancy >= LEASE_UP_EXIT_PCT {
            self.mode = Mode::Stabilized;
        }
        self.history.push(
            markets
                .iter()
                .map(|m| (m.occupancy_pct(), m.street_rate))
                .collect(),
        );
    }

    /// Records the day's move-ins per size (after the trading of the day).
    pub fn evening(&mut self, move_ins: Vec<u32>) {
        if let Some((_, total, _)) = self.season.as_mut().and_then(|s| s.current.as_mut()) {
            *total += f64::from(move_ins.iter().sum::<u32>());
        }
        self.move_ins.push(move_ins);
    }

    /// Runs the engine on the day's figures and applies every recommendation that changes a
    /// rate; returns the changes made.
    pub fn run(
        &mut self,
        settings: &PricingSettings,
        day: u32,
        date: NaiveDate,
        markets: &mut [SizeMarket],
        move_ins_mtd: u32,
    ) -> Vec<StreetChange> {
        let seasonality = match self.season.as_mut() {
            Some(tally) => {
                tally.turn(date);
                tally.index(date)
            }
            None => SeasonalIndex {
                index: NATIONAL_PRIOR[date.month0() as usize],
                own_data: false,
            },
        };
        let back = u32::try_from(settings.occupancy_trend_days).unwrap_or(u32::MAX);
        let earlier = day
            .checked_sub(back)
            .and_then(|d| self.history.get(d as usize));
        let input = FacilityInput {
            as_of: date,
            mode: self.mode,
            occupancy_pct: Some(self.facility_occupancy),
            move_ins_mtd: Some(f64::from(move_ins_mtd)),
            move_ins_target_monthly: Some(self.target),
            seasonality,
            history_days: 365,
            unit_types: markets
                .iter()
                .zip(&self.last_change)
                .enumerate()
                .map(|(i, (m, changed))| UnitTypeInput {
                    size: m.size.to_owned(),
                    tier: "standard".to_owned(),
                    street_rate: m.street_rate,
                    occupancy_pct: Some(m.occupancy_pct()),
                    total_units: Some(m.units),
                    last_rate_change: *changed,
                    last_change_raised: (self.last_direction[i] != 0.0)
                        .then_some(self.last_direction[i] > 0.0),
                    earlier: earlier.map(|e| EarlierReading {
                        days_ago: back,
                        occupancy_pct: Some(e[i].0),
                        street_rate: e[i].1,
                    }),
                    history: self
                        .history
                        .iter()
                        .enumerate()
                        .take(day as usize)
                        .map(|(d, h)| DayReading {
                            days_ago: day - d as u32,
                            occupancy_pct: h[i].0,
                            street_rate: h[i].1,
                            move_ins: self.move_ins.get(d).map(|m| f64::from(m[i])),
                        })
                        .collect(),
                })
                .collect(),
            promotions: Vec::new(),
            competitors: markets.iter().flat_map(SizeMarket::observations).collect(),
        };
        let mut changes = Vec::new();
        for (i, rec) in recommend(&input, settings).into_iter().enumerate() {
            let m = &mut markets[i];
            if rec.recommended_rate == m.street_rate {
                continue;
            }
            let direction = (rec.recommended_rate - m.street_rate).signum();
            changes.push(StreetChange {
                size: i,
                reversal: direction * self.last_direction[i] < 0.0,
                cut_when_full: direction < 0.0 && m.occupancy_pct() >= 93.0,
                floor_bound: rec.guardrails.iter().any(|g| g.name == "floor"),
            });
            self.last_direction[i] = direction;
            self.last_change[i] = Some(date);
            m.street_rate = rec.recommended_rate;
        }
        changes
    }
}

/// The first day simulated.
pub fn start_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 1, 1).expect("a valid date")
}

/// Runs one scenario on one seed under a policy; one result per size, in `SIZES` order.
pub fn simulate(scenario: &Scenario, seed: u64, policy: Policy<'_>) -> Vec<SizeResult> {
    let start = start_date();
    let markets: Vec<SizeMarket> = (0..SIZES.len())
        .map(|i| SizeMarket::new(scenario, seed, i, start))
        .collect();
    let mut street = StreetEngine::new(scenario, units_of(&markets), markets.len());
    if let Policy::Engine(_) = policy {
        let params = [SizeParams::fixed(scenario); SIZES.len()];
        street = street.learning_season(&seasons::history_year(&params, seed, start));
    }
    run(markets, street, policy)
}

/// Runs one facility of the wide market (each size's parameters drawn per seed by
/// [`SizeParams::wide`]) under a policy, its random streams from `streams`.
pub fn simulate_wide(params: &[SizeParams], streams: u64, policy: Policy<'_>) -> Vec<SizeResult> {
    let start = start_date();
    let markets: Vec<SizeMarket> = params
        .iter()
        .enumerate()
        .map(|(i, p)| SizeMarket::drawn(p, streams, i, start))
        .collect();
    let units = units_of(&markets);
    let occupied: usize = markets.iter().map(|m| m.tenants.len()).sum();
    let mut street = StreetEngine::starting(
        occupied as f64 / f64::from(units) * 100.0,
        units,
        markets.len(),
    );
    if let Policy::Engine(_) = policy {
        street = street.learning_season(&seasons::history_year(params, streams, start));
    }
    run(markets, street, policy)
}

fn units_of(markets: &[SizeMarket]) -> u32 {
    markets.iter().map(|m| m.units).sum()
}

fn run(
    mut markets: Vec<SizeMarket>,
    mut street: StreetEngine,
    policy: Policy<'_>,
) -> Vec<SizeResult> {
    let start = start_date();
    let mut results = vec![
        SizeResult {
            min_ratio: f64::MAX,
            max_ratio: f64::MIN,
            ..SizeResult::default()
        };
        markets.len()
    ];
    if let Policy::Fixed(m) = policy {
        for market in &mut markets {
            market.street_rate = (market.start_median() * m).round();
        }
    }
    let mut move_ins_mtd = 0u32;

    for day in 0..DAYS {
        let date = start + chrono::Days::new(u64::from(day));
        if date.day() == 1 {
            move_ins_mtd = 0;
        }
        for m in &mut markets {
            m.move_competitors(day, date);
        }
        street.morning(&markets);
        if let Policy::Schedule(schedule) = policy {
            if date.day() == 1 {
                for (m, months) in markets.iter_mut().zip(schedule) {
                    m.street_rate = (m.start_median() * months[date.month0() as usize]).round();
                }
            }
        }
        if let Policy::Rule(rule) = policy {
            if day % 7 == 0 {
                let index = NATIONAL_PRIOR[date.month0() as usize];
                for m in &mut markets {
                    let multiple = rule.base
                        + rule.per_point * (m.occupancy_pct() - rule.pivot) / 100.0
                        + rule.season * (index - 1.0);
                    m.street_rate = (m.observed_median() * multiple.max(0.1)).round();
                }
            }
        }
        if let Policy::Optimal(table) = policy {
            for (i, m) in markets.iter_mut().enumerate() {
                let multiple = table.multiple(i, day, m.tenants.len());
                m.street_rate = (m.observed_median() * multiple).round();
            }
        }
        if let Policy::Engine(settings) = policy {
            for change in street.run(settings, day, date, &mut markets, move_ins_mtd) {
                let r = &mut results[change.size];
                r.changes += 1;
                r.reversals += u32::from(change.reversal);
                r.cuts_when_full += u32::from(change.cut_when_full);
                r.floor_binds += u32::from(change.floor_bound);
            }
        }
        let mut today = Vec::with_capacity(markets.len());
        for (m, r) in markets.iter_mut().zip(&mut results) {
            let ratio = m.street_rate / m.market_median();
            r.min_ratio = r.min_ratio.min(ratio);
            r.max_ratio = r.max_ratio.max(ratio);
            let band = occupancy_band(m.occupancy_pct());
            r.band_days[band] += 1;
            r.band_ratio[band] += ratio;
            let arrived = m.trade(date);
            today.push(arrived);
            move_ins_mtd += arrived;
            r.revenue += m.daily_rent();
            r.mean_occupancy_pct += m.occupancy_pct() / f64::from(DAYS);
        }
        street.evening(today);
    }
    for (m, r) in markets.iter().zip(&mut results) {
        r.end_occupancy_pct = m.occupancy_pct();
        r.end_tenants = m.tenants.len() as u32;
        r.end_rent_roll = m.tenants.iter().sum();
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use market::SCENARIOS;

    #[test]
    fn a_run_is_the_same_on_the_same_seed_and_differs_on_another() {
        let s = &SCENARIOS[0];
        let settings = PricingSettings::default();
        let a = simulate(s, 3, Policy::Engine(&settings));
        assert_eq!(a, simulate(s, 3, Policy::Engine(&settings)));
        assert_ne!(a, simulate(s, 4, Policy::Engine(&settings)));
    }

    #[test]
    fn a_rule_at_the_median_follows_the_observed_median_within_a_week_of_drift() {
        let rule = Rule {
            base: 1.0,
            per_point: 0.0,
            pivot: 90.0,
            season: 0.0,
        };
        for r in simulate(&SCENARIOS[0], 1, Policy::Rule(rule)) {
            // Competitors move at most 1 % a week and are seen within a week; rates round to
            // whole units (at 60, half a unit is 0.8 %).
            assert!(r.min_ratio > 0.97 && r.max_ratio < 1.03, "{r:?}");
            assert_eq!(
                r.changes, 0,
                "a rule's weekly reset is not an engine change"
            );
        }
        // Occupancy above the pivot raises the rate: with a slope of 3 and a pivot of 80, a
        // size 92 % occupied at the start is priced about 1.36 times the median.
        let steep = Rule {
            per_point: 3.0,
            pivot: 80.0,
            ..rule
        };
        let high = simulate(&SCENARIOS[2], 1, Policy::Rule(steep));
        assert!(high.iter().all(|r| r.max_ratio > 1.3), "{high:?}");
    }

    #[test]
    fn a_flat_schedule_is_the_fixed_rate_and_a_seasonal_one_moves_monthly() {
        let s = &SCENARIOS[1];
        let flat = vec![[0.94; 12]; SIZES.len()];
        assert_eq!(
            simulate(s, 2, Policy::Schedule(&flat)),
            simulate(s, 2, Policy::Fixed(0.94))
        );
        // Dearer in the summer months only: 10 % above the flat rate, seen against a competitor
        // median that drifts (at most 3 %) in the meantime.
        let mut summer = flat.clone();
        for months in &mut summer {
            months[5..8].fill(0.94 * 1.1);
        }
        for (hot, cold) in simulate(s, 2, Policy::Schedule(&summer))
            .iter()
            .zip(simulate(s, 2, Policy::Fixed(0.94)))
        {
            assert!(hot.max_ratio > cold.max_ratio * 1.05, "{hot:?} {cold:?}");
        }
    }

    #[test]
    fn on_seeds_1_to_5_the_engine_meets_the_aims_it_was_tuned_to() {
        // The figures of docs/pricing.md ("Backtest"): in every scenario at least the static
        // policy's revenue, no cut on a size at 93 % or more, at most 4 reversals a size and
        // year.
        let settings = PricingSettings::default();
        for s in &SCENARIOS {
            let (mut engine, mut fixed) = (0.0, 0.0);
            for seed in 1..=5 {
                let runs = simulate(s, seed, Policy::Engine(&settings));
                for r in &runs {
                    assert_eq!(r.cuts_when_full, 0, "{} seed {seed}: {r:?}", s.name);
                    assert!(r.reversals <= 4, "{} seed {seed}: {r:?}", s.name);
                }
                engine += runs.iter().map(|r| r.revenue).sum::<f64>();
                fixed += simulate(s, seed, Policy::Static)
                    .iter()
                    .map(|r| r.revenue)
                    .sum::<f64>();
            }
            assert!(engine >= fixed, "{}: {engine} < {fixed}", s.name);
        }
    }

    #[test]
    fn on_held_out_seeds_6_to_15_stabilized_facilities_earn_at_least_the_static_policy() {
        // Engine 2026.11.3 earned 0.1 % less than the static policy here; 2026.11.4's wider
        // tolerance and lighter trend stop it chasing a few weeks' noise.
        let settings = PricingSettings::default();
        let revenue = |policy: Policy<'_>| {
            (6..=15)
                .flat_map(|seed| simulate(&SCENARIOS[0], seed, policy))
                .map(|r| r.revenue)
                .sum::<f64>()
        };
        let (engine, fixed) = (revenue(Policy::Engine(&settings)), revenue(Policy::Static));
        assert!(engine >= fixed, "{engine} < {fixed}");
    }

    #[test]
    fn holding_a_size_under_its_band_where_it_fills_earns_more_and_fills_weak_demand() {
        // Engine 2026.11.5's `fill_first` against the same engine with it off (2026.11.4), weak
        // demand on seeds 1-5: docs/pricing.md has +3.6 % against +2.5 % over static, ending
        // at 86.9 % against 84.5 % occupancy.
        let weak = &SCENARIOS[3];
        // With the price response of then (2026.11.6's: the trend window's two readings), which
        // this rule was measured with; the daily history's response fills weak demand itself.
        let on = PricingSettings::previous_engine();
        let off = PricingSettings {
            fill_first_pp_per_week: 0.0,
            ..on
        };
        // Revenue summed and the facility's end occupancy averaged over the seeds.
        let run = |s: &PricingSettings| {
            (1..=5).fold((0.0, 0.0), |(revenue, end), seed| {
                let runs = simulate(weak, seed, Policy::Engine(s));
                (
                    revenue + runs.iter().map(|r| r.revenue).sum::<f64>(),
                    end + report::facility_occupancy(&runs) / 5.0,
                )
            })
        };
        let ((rev_on, end_on), (rev_off, end_off)) = (run(&on), run(&off));
        assert!(rev_on > rev_off * 1.005, "{rev_on} against {rev_off}");
        assert!(end_on > end_off + 1.5, "{end_on} % against {end_off} %");
    }

    #[test]
    fn the_static_policy_never_changes_a_rate() {
        for r in simulate(&SCENARIOS[3], 2, Policy::Static) {
            assert_eq!((r.changes, r.reversals), (0, 0));
        }
    }
}
