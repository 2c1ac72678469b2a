//! The simulated market of the backtest: one facility of four sizes over a year, day by day.
//!
//! - Competitors: five per size, spread around the size's market median, each drifting by a
//!   bounded random walk (at most 3 % either way) and observed once a week.
//! - Move-ins: Poisson, with a mean of `demand` x units / 400 a day (the move-ins that hold
//!   `demand` x units occupied against the move-outs below), times the national seasonality
//!   prior of the month, times the share a rate wins against the competitor median:
//!   2 / (1 + e^(6 x (rate / median - 1))), 1 at the median, an elasticity of -3 there.
//!   A size that is full turns the excess away.
//! - Move-outs: each tenant leaves with a chance of 1 in 400 a day (Poisson with a mean of
//!   occupied / 400, the leavers drawn at random).
//! - Every tenant pays the street rate it moved in at, for as long as it stays.
//!
//! Each size draws from its own generator, seeded from the run's seed, so two policies on one
//! seed see the same competitors and the same random stream.

use super::super::band::CompetitorObservation;
use super::super::seasonality::NATIONAL_PRIOR;
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
    2.0 / (1.0 + (PRICE_SENSITIVITY * (rate / median - 1.0)).exp())
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
}

impl SizeMarket {
    pub fn new(scenario: &Scenario, seed: u64, index: usize, start: NaiveDate) -> Self {
        let (size, units, median) = SIZES[index];
        let stream = seed
            .wrapping_mul(1_000_003)
            .wrapping_add(index as u64 * 7_919);
        let mut market_rng = StdRng::seed_from_u64(stream ^ 0x5eed_0001);
        let demand_rng = StdRng::seed_from_u64(stream ^ 0x5eed_0002);
        let spread = scenario.start_rate_spread;
        let street_rate = (median * (1.0 + market_rng.gen_range(-spread..=spread))).round();
        let occupied = (f64::from(units) * scenario.start_occupancy).round() as usize;
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
        }
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
            self.drift[i] = (self.drift[i] + step).clamp(-COMPETITOR_DRIFT, COMPETITOR_DRIFT);
            self.competitors[i] = self.start_median * (1.0 + spread) * (1.0 + self.drift[i]);
            self.observed[i] = (date, self.competitors[i]);
        }
    }

    /// One day of move-outs and move-ins at today's street rate; returns the move-ins.
    pub fn trade(&mut self, scenario: &Scenario, date: NaiveDate) -> u32 {
        let leaving = poisson(&mut self.demand_rng, self.tenants.len() as f64 / STAY_DAYS)
            .min(self.tenants.len() as u32);
        for _ in 0..leaving {
            let i = self.demand_rng.gen_range(0..self.tenants.len());
            self.tenants.swap_remove(i);
        }
        let season = NATIONAL_PRIOR[date.month0() as usize];
        let mean = scenario.demand * f64::from(self.units) / STAY_DAYS
            * season
            * demand_share(self.street_rate, self.market_median());
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
                    m.trade(&s, start + chrono::Days::new(day));
                }
                m.occupancy_pct()
            })
            .sum::<f64>()
            / 20.0;
        assert!((64.0..72.0).contains(&mean), "{mean}");
    }
}
