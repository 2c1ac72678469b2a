//! The simulated market of the backtest: one facility of four sizes over a year, day by day.
//!
//! - Competitors: five per size, spread around the size's market median, each drifting by a
//!   bounded random walk (at most 3 % either way) and observed once a week.
//! - Move-ins: Poisson, with a mean of `demand` x units / 400 a day (the move-ins that hold
//!   `demand` x units occupied against the move-outs below), times the national seasonality
//!   prior of the month (the wide market: the season drawn for the facility), times the share a rate wins against the competitor median:
//!   2 / (1 + e^(6 x (rate / median - 1))), 1 at the median, an elasticity of -3 there
//!   (the `logistic` family of [`super::demand`]; the wide market can run the `kinked` one).
//!   A size that is full turns the excess away.
//! - Move-outs: each tenant leaves with a chance of 1 in 400 a day (Poisson with a mean of
//!   occupied / 400, the leavers drawn at random).
//! - Every tenant pays the street rate it moved in at, for as long as it stays.
//!
//! Each size draws from its own generator, seeded from the run's seed, so two policies on one
//! seed see the same competitors and the same random stream.
//!
//! The wide market ([`SizeParams::wide`]) draws each size's market per seed instead: its
//! demand, its elasticity, its starting occupancy and rate, how far its competitors drift and
//! where the whole market heads over the year. The engine's defaults up to 2026.11.5 were tuned
//! on the fixed parameters above; the wide market checks them on markets nobody tuned on.

use super::super::band::CompetitorObservation;
use super::super::seasonality::NATIONAL_PRIOR;
use super::demand::{draw_kinked, Curve, Family};
use crate::values::round2;
use chrono::{Datelike, NaiveDate};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Days a tenant stays on average (move-outs at 1 in 400 a day).
pub const STAY_DAYS: f64 = 400.0;
/// How fast the share of demand falls with the rate against the competitor median.
pub const PRICE_SENSITIVITY: f64 = 6.0;
/// Largest drift of a competitor's rate from where it started.
pub const COMPETITOR_DRIFT: f64 = 0.03;
const COMPETITOR_SPREAD: [f64; 5] = [-0.12, -0.05, 0.0, 0.05, 0.12];

/// The sizes of the simulated facility: size, units, market median at the start.
pub const SIZES: [(&str, u32, f64); 4] = [
    ("5x5", 60, 60.0),
    ("5x10", 90, 95.0),
    ("10x10", 120, 140.0),
    ("10x20", 60, 230.0),
];

/// A market situation the backtest runs the policies through.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scenario {
    pub name: &'static str,
    /// Share of the units the market keeps occupied at the competitor median (1.0 fills all).
    pub demand: f64,
    /// Occupancy at the start, the same for every size.
    pub start_occupancy: f64,
    /// Street rates at the start are the median times a draw in 1 +- this.
    pub start_rate_spread: f64,
}

pub const SCENARIOS: [Scenario; 4] = [
    Scenario {
        name: "stabilized",
        demand: 0.95,
        start_occupancy: 0.90,
        start_rate_spread: 0.10,
    },
    Scenario {
        name: "lease_up",
        demand: 1.6,
        start_occupancy: 0.30,
        start_rate_spread: 0.10,
    },
    Scenario {
        name: "high_demand",
        demand: 1.3,
        start_occupancy: 0.92,
        start_rate_spread: 0.10,
    },
    Scenario {
        name: "weak_demand",
        demand: 0.7,
        start_occupancy: 0.80,
        start_rate_spread: 0.10,
    },
];

/// Share of the market's move-ins a rate wins against the competitor median.
pub fn demand_share(rate: f64, median: f64) -> f64 {
    demand_share_at(rate, median, PRICE_SENSITIVITY)
}

/// [`demand_share`] for another sensitivity (twice the elasticity at the median).
pub fn demand_share_at(rate: f64, median: f64, sensitivity: f64) -> f64 {
    2.0 / (1.0 + (sensitivity * (rate / median - 1.0)).exp())
}

/// One size's market in one run of the wide market, drawn per seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizeParams {
    /// Share of the units the market keeps occupied at the competitor median.
    pub demand: f64,
    /// How the move-ins answer the rate against the median ([`super::demand`]): the logistic
    /// with `PRICE_SENSITIVITY` in the fixed market, with a drawn one in the wide market, or
    /// the drawn curve of another family.
    pub curve: Curve,
    pub start_occupancy: f64,
    /// The starting street rate against the starting median.
    pub start_position: f64,
    /// Largest drift of each competitor's random walk.
    pub drift: f64,
    /// The whole market's move over the year (0.05: every competitor 5 % dearer by December).
    pub trend: f64,
    /// The market's season: each month's move-in pace (January first, averaging 1). The
    /// national prior in the fixed market; drawn from a wider family in the wide one
    /// ([`super::seasons`]), the same for every size of a facility. The engine never sees it.
    pub season: [f64; 12],
}

/// How widely the wide market varies each size from the scenario's figures.
pub mod wide {
    /// The scenario's demand times a draw in this range.
    pub const DEMAND: (f64, f64) = (0.8, 1.2);
    /// The move-in elasticity at the median (3 in the fixed market).
    pub const ELASTICITY: (f64, f64) = (2.0, 5.0);
    /// The scenario's starting occupancy plus or minus this.
    pub const START_OCCUPANCY: f64 = 0.06;
    /// The starting rate against the median (0.9-1.1 in the fixed market).
    pub const START_POSITION: (f64, f64) = (0.8, 1.2);
    /// Largest drift of each competitor (3 % in the fixed market).
    pub const DRIFT: (f64, f64) = (0.02, 0.08);
    /// The whole market's move over the year, either way (none in the fixed market).
    pub const TREND: f64 = 0.06;
}

impl SizeParams {
    /// The fixed market's parameters of a scenario (the starting rate is drawn by the size's
    /// own generator, as it always was).
    pub fn fixed(scenario: &Scenario) -> Self {
        Self {
            demand: scenario.demand,
            curve: Curve::Logistic {
                sensitivity: PRICE_SENSITIVITY,
            },
            start_occupancy: scenario.start_occupancy,
            start_position: 1.0,
            drift: COMPETITOR_DRIFT,
            trend: 0.0,
            season: NATIONAL_PRIOR,
        }
    }

    /// Every size's market of a scenario on a seed of the wide market, from a generator of its
    /// own (the random streams of the run are the size's, as in the fixed market).
    pub fn wide(scenario: &Scenario, seed: u64) -> [Self; 4] {
        let tag = scenario_tag(scenario);
        let mut rng = StdRng::seed_from_u64(seed.wrapping_mul(2_654_435_761) ^ tag ^ 0x5eed_0003);
        let season = super::seasons::draw(seed, tag);
        let mut within = |(lo, hi): (f64, f64)| rng.gen_range(lo..=hi);
        std::array::from_fn(|_| Self {
            demand: scenario.demand * within(wide::DEMAND),
            curve: Curve::Logistic {
                sensitivity: 2.0 * within(wide::ELASTICITY),
            },
            start_occupancy: (scenario.start_occupancy
                + within((-wide::START_OCCUPANCY, wide::START_OCCUPANCY)))
            .clamp(0.0, 1.0),
            start_position: within(wide::START_POSITION),
            drift: within(wide::DRIFT),
            trend: within((-wide::TREND, wide::TREND)),
            season,
        })
    }

    /// [`Self::wide`] with each size's demand curve of `family`: the logistic's as drawn, or
    /// the family's own curves, drawn from a generator of their own
    /// ([`super::demand::draw_kinked`]), every other draw of the seed unchanged (the logistic's
    /// elasticity is still drawn, and left unused).
    pub fn wide_in(scenario: &Scenario, seed: u64, family: Family) -> [Self; 4] {
        let mut params = Self::wide(scenario, seed);
        if family == Family::Kinked {
            let curves = draw_kinked(seed, scenario_tag(scenario));
            for (p, curve) in params.iter_mut().zip(curves) {
                p.curve = curve;
            }
        }
        params
    }
}

/// A number of the scenario's name, which its draws of the wide market are seeded with.
fn scenario_tag(scenario: &Scenario) -> u64 {
    scenario
        .name
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))
}

/// A Poisson draw (Knuth's method; the means here are small).
pub fn poisson(rng: &mut StdRng, mean: f64) -> u32 {
    if !(mean.is_finite() && mean > 0.0) {
        return 0;
    }
    let limit = (-mean).exp();
    let mut p = 1.0;
    let mut k = 0;
    loop {
        p *= rng.gen::<f64>();
        if p <= limit {
            return k;
        }
        k += 1;
    }
}

/// The median of five rates: the third once sorted.
fn middle(mut rates: [f64; 5]) -> f64 {
    rates.sort_by(f64::total_cmp);
    rates[2]
}

/// One size's market and the facility's tenants of that size.
#[derive(Debug, Clone)]
pub struct SizeMarket {
    pub size: &'static str,
    pub units: u32,
    /// The rate each tenant pays.
    pub tenants: Vec<f64>,
    pub street_rate: f64,
    /// Competitors' rates today.
    pub competitors: [f64; 5],
    /// Each competitor's latest observation: (date, rate).
    pub observed: [(NaiveDate, f64); 5],
    start_median: f64,
    drift: [f64; 5],
    demand_rng: StdRng,
    market_rng: StdRng,
    params: SizeParams,
}

impl SizeMarket {
    pub fn new(scenario: &Scenario, seed: u64, index: usize, start: NaiveDate) -> Self {
        Self::build(
            &SizeParams::fixed(scenario),
            Some(scenario),
            seed,
            index,
            start,
        )
    }

    /// A size of the wide market: its parameters drawn by [`SizeParams::wide`], its random
    /// streams from `seed` (another seed gives the same market with other draws).
    pub fn drawn(params: &SizeParams, seed: u64, index: usize, start: NaiveDate) -> Self {
        Self::build(params, None, seed, index, start)
    }

    fn build(
        params: &SizeParams,
        scenario: Option<&Scenario>,
        seed: u64,
        index: usize,
        start: NaiveDate,
    ) -> Self {
        let (size, units, median) = SIZES[index];
        let stream = seed
            .wrapping_mul(1_000_003)
            .wrapping_add(index as u64 * 7_919);
        let mut market_rng = StdRng::seed_from_u64(stream ^ 0x5eed_0001);
        let demand_rng = StdRng::seed_from_u64(stream ^ 0x5eed_0002);
        let position = match scenario {
            // The fixed market draws the starting rate from the size's own stream.
            Some(s) => {
                let spread = s.start_rate_spread;
                1.0 + market_rng.gen_range(-spread..=spread)
            }
            None => params.start_position,
        };
        let street_rate = (median * position).round();
        let occupied = (f64::from(units) * params.start_occupancy).round() as usize;
        let competitors = std::array::from_fn(|i| median * (1.0 + COMPETITOR_SPREAD[i]));
        Self {
            size,
            units,
            tenants: vec![street_rate; occupied],
            street_rate,
            competitors,
            observed: std::array::from_fn(|i| (start, competitors[i])),
            start_median: median,
            drift: [0.0; 5],
            demand_rng,
            market_rng,
            params: *params,
        }
    }

    /// The size's market parameters.
    pub fn params(&self) -> &SizeParams {
        &self.params
    }

    pub fn start_median(&self) -> f64 {
        self.start_median
    }

    pub fn occupancy_pct(&self) -> f64 {
        self.tenants.len() as f64 / f64::from(self.units) * 100.0
    }

    /// The competitors' median today (of five: the third).
    pub fn market_median(&self) -> f64 {
        middle(self.competitors)
    }

    /// The median of the competitor rates last observed (to the cent, as the engine sees
    /// them): what a policy that prices against the market can know of it.
    pub fn observed_median(&self) -> f64 {
        middle(self.observed.map(|(_, rate)| round2(rate)))
    }

    /// The competitor observations the engine sees today.
    pub fn observations(&self) -> Vec<(String, CompetitorObservation)> {
        self.observed
            .iter()
            .enumerate()
            .map(|(i, (on, rate))| {
                (
                    self.size.to_owned(),
                    CompetitorObservation {
                        competitor: format!("Competitor {}", i + 1),
                        rate: round2(*rate),
                        promo: None,
                        observed_on: *on,
                        tier: None,
                    },
                )
            })
            .collect()
    }

    /// Moves competitors (once a week each, on a day of its own) and records what was seen.
    pub fn move_competitors(&mut self, day: u32, date: NaiveDate) {
        for (i, spread) in COMPETITOR_SPREAD.iter().enumerate() {
            if !(day as usize + i).is_multiple_of(7) {
                continue;
            }
            let step = self.market_rng.gen_range(-0.01..=0.01);
            let bound = self.params.drift;
            self.drift[i] = (self.drift[i] + step).clamp(-bound, bound);
            let trend = 1.0 + self.params.trend * f64::from(day) / 365.0;
            self.competitors[i] =
                self.start_median * (1.0 + spread) * (1.0 + self.drift[i]) * trend;
            self.observed[i] = (date, self.competitors[i]);
        }
    }

    /// One day of move-outs and move-ins at today's street rate; returns the move-ins. The
    /// demand is the size's own (the scenario's in the fixed market).
    pub fn trade(&mut self, date: NaiveDate) -> u32 {
        let leaving = poisson(&mut self.demand_rng, self.tenants.len() as f64 / STAY_DAYS)
            .min(self.tenants.len() as u32);
        for _ in 0..leaving {
            let i = self.demand_rng.gen_range(0..self.tenants.len());
            self.tenants.swap_remove(i);
        }
        let season = self.params.season[date.month0() as usize];
        let mean = self.params.demand * f64::from(self.units) / STAY_DAYS
            * season
            * self
                .params
                .curve
                .share(self.street_rate, self.market_median());
        let vacant = self.units.saturating_sub(self.tenants.len() as u32);
        let arriving = poisson(&mut self.demand_rng, mean).min(vacant);
        self.tenants
            .extend(std::iter::repeat_n(self.street_rate, arriving as usize));
        arriving
    }

    /// Rent of one day: monthly rents over an average month.
    pub fn daily_rent(&self) -> f64 {
        self.tenants.iter().sum::<f64>() * 12.0 / 365.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_is_one_at_the_median_and_falls_with_the_rate() {
        assert!((demand_share(100.0, 100.0) - 1.0).abs() < 1e-12);
        // 10 % above: 2 / (1 + e^0.6) = 0.7087.
        assert!((demand_share(110.0, 100.0) - 0.7087).abs() < 1e-4);
        // 10 % below: 2 / (1 + e^-0.6) = 1.2913.
        assert!((demand_share(90.0, 100.0) - 1.2913).abs() < 1e-4);
    }

    #[test]
    fn poisson_draws_average_their_mean() {
        let mut rng = StdRng::seed_from_u64(7);
        let n = 20_000;
        let total: u32 = (0..n).map(|_| poisson(&mut rng, 2.5)).sum();
        let mean = f64::from(total) / f64::from(n);
        assert!((mean - 2.5).abs() < 0.05, "{mean}");
        assert_eq!(poisson(&mut rng, 0.0), 0);
    }

    #[test]
    fn a_size_at_a_steady_rate_heads_for_demand_times_units() {
        // Demand 0.8 at the median, street at the median: occupancy heads for 80 % from 50 %;
        // over a year the gap shrinks by e^(-365/400) to 40 % of itself: 80 - 30 x 0.40 = 68 %
        // expected, averaged over 20 seeds (one seed is off by about 10 points either way).
        let s = Scenario {
            name: "t",
            demand: 0.8,
            start_occupancy: 0.5,
            start_rate_spread: 0.0,
        };
        let start: NaiveDate = "2026-01-01".parse().unwrap();
        let mean = (1..=20)
            .map(|seed| {
                let mut m = SizeMarket::new(&s, seed, 2, start);
                m.street_rate = m.market_median();
                for day in 0..365 {
                    m.trade(start + chrono::Days::new(day));
                }
                m.occupancy_pct()
            })
            .sum::<f64>()
            / 20.0;
        assert!((64.0..72.0).contains(&mean), "{mean}");
    }
}
