//! The seasons of the wide market's facilities, and the year of history each simulated facility
//! has before the scored year.
//!
//! A real market's season is not the national prior: a sun-belt market peaks in winter, a
//! college town fills in May, some markets hardly move. Each seed draws its facility's season
//! from a family wider than the prior, from a generator of its own (the other draws of the
//! seed are unchanged), one of four shapes with equal chance:
//! - the prior's shape shifted by -3 to +3 months (0 is the prior's own timing);
//! - inverted (sun belt): the prior's swing turned over, peaking in December-January;
//! - college town: a sharp May peak (students storing for the summer) and a smaller one in
//!   August-September, quiet in June-July and the winter;
//! - flat: every month 1.
//!
//! The swing of the first three is scaled by a draw in 0.6-1.6 of the shape's own, and every
//! season averages 1. The engine never sees the draw: it learns the season from the facility's
//! move-ins ([`crate::pricing::seasonality::learn`]), those of the history year first.

use super::market::{SizeMarket, SizeParams};
use super::DAYS;
use crate::pricing::seasonality::NATIONAL_PRIOR;
use chrono::{Datelike, NaiveDate};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The college town's shape before scaling (January first).
const COLLEGE_TOWN: [f64; 12] = [
    0.85, 0.85, 0.90, 1.00, 1.60, 0.90, 0.85, 1.20, 1.15, 0.95, 0.85, 0.90,
];
/// The range of the swing's scale.
const AMPLITUDE: (f64, f64) = (0.6, 1.6);

/// The shapes of the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The prior's shape, its months moved by this many (positive: later).
    Shifted(i32),
    Inverted,
    CollegeTown,
    Flat,
}

/// A shape scaled: 1 + amplitude x (value - 1) per month, then averaged to 1.
pub fn season(shape: Shape, amplitude: f64) -> [f64; 12] {
    let base: [f64; 12] = match shape {
        Shape::Shifted(k) => {
            std::array::from_fn(|m| NATIONAL_PRIOR[(m as i32 - k).rem_euclid(12) as usize])
        }
        Shape::Inverted => NATIONAL_PRIOR.map(|v| 2.0 - v),
        Shape::CollegeTown => COLLEGE_TOWN,
        Shape::Flat => [1.0; 12],
    };
    let mean = base.iter().sum::<f64>() / 12.0;
    base.map(|v| 1.0 + amplitude * (v / mean - 1.0))
}

/// The shape and scale of a seed's facility (`tag` the scenario's).
pub fn draw_shape(seed: u64, tag: u64) -> (Shape, f64) {
    let mut rng = StdRng::seed_from_u64(seed.wrapping_mul(2_654_435_761) ^ tag ^ 0x5eed_0004);
    let shape = match rng.gen_range(0..4) {
        0 => Shape::Shifted(rng.gen_range(-3..=3)),
        1 => Shape::Inverted,
        2 => Shape::CollegeTown,
        _ => Shape::Flat,
    };
    (shape, rng.gen_range(AMPLITUDE.0..=AMPLITUDE.1))
}

/// The season of a seed's facility.
pub fn draw(seed: u64, tag: u64) -> [f64; 12] {
    let (shape, amplitude) = draw_shape(seed, tag);
    season(shape, amplitude)
}

/// The random streams of the history year: far from any seed or replica a report runs on.
fn history_streams(streams: u64) -> u64 {
    (1 << 42) + streams
}

/// The facility's move-ins in the year before the scored one, per calendar month: what the
/// engine learns its season from (`(month 1..=12, move-ins, 1)`, every month full). The year is
/// the same market (its parameters, its competitors) at the starting rates, from the starting
/// occupancy, on random streams of its own; the scored year still starts where the scenario
/// says, so the history changes what the engine knows, not where the facility stands.
pub fn history_year(params: &[SizeParams], streams: u64, start: NaiveDate) -> Vec<(u32, f64, u32)> {
    let first = start
        .with_year(start.year() - 1)
        .expect("the year before the start");
    let mut markets: Vec<SizeMarket> = params
        .iter()
        .enumerate()
        .map(|(i, p)| SizeMarket::drawn(p, history_streams(streams), i, first))
        .collect();
    let mut months = [0.0; 12];
    for day in 0..DAYS {
        let date = first + chrono::Days::new(u64::from(day));
        for m in &mut markets {
            m.move_competitors(day, date);
            months[date.month0() as usize] += f64::from(m.trade(date));
        }
    }
    (1..=12).map(|m| (m, months[m as usize - 1], 1)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::backtest::market::{Scenario, SCENARIOS};

    fn mean(s: &[f64; 12]) -> f64 {
        s.iter().sum::<f64>() / 12.0
    }

    fn peak(s: &[f64; 12]) -> usize {
        (0..12).max_by(|&a, &b| s[a].total_cmp(&s[b])).unwrap()
    }

    #[test]
    fn every_shape_averages_one_and_peaks_where_it_says() {
        let shifted = season(Shape::Shifted(2), 1.0);
        assert_eq!(peak(&shifted), 7, "{shifted:?}");
        assert!((shifted[7] - 1.15).abs() < 1e-9);
        let prior = season(Shape::Shifted(0), 1.0);
        assert!(prior
            .iter()
            .zip(NATIONAL_PRIOR)
            .all(|(a, b)| (a - b).abs() < 1e-9));
        let sun = season(Shape::Inverted, 1.0);
        assert_eq!(peak(&sun), 0);
        assert!((sun[5] - 0.85).abs() < 1e-9);
        let college = season(Shape::CollegeTown, 1.5);
        assert_eq!(peak(&college), 4);
        assert_eq!(season(Shape::Flat, 1.3), [1.0; 12]);
        for s in [shifted, sun, college, season(Shape::Inverted, 1.6)] {
            assert!((mean(&s) - 1.0).abs() < 1e-9, "{s:?}");
        }
        // Scaled by 1.6, the prior's June (+15 %) is +24 %.
        assert!((season(Shape::Shifted(0), 1.6)[5] - 1.24).abs() < 1e-9);
    }

    #[test]
    fn the_draws_cover_the_family_and_a_seed_draws_one_season_for_its_sizes() {
        let shapes: Vec<Shape> = (16..116).map(|seed| draw_shape(seed, 7).0).collect();
        for want in [Shape::Inverted, Shape::CollegeTown, Shape::Flat] {
            let n = shapes.iter().filter(|s| **s == want).count();
            assert!((10..45).contains(&n), "{want:?}: {n}");
        }
        assert!(shapes
            .iter()
            .any(|s| matches!(s, Shape::Shifted(k) if *k != 0)));
        let params = SizeParams::wide(&SCENARIOS[0], 20);
        assert!(params.iter().all(|p| p.season == params[0].season));
        assert_ne!(
            params[0].season,
            SizeParams::wide(&SCENARIOS[0], 21)[0].season
        );
    }

    #[test]
    fn the_history_year_shows_the_markets_season_in_its_move_ins() {
        // A market with an inverted season at twice the prior's swing and demand well below
        // the units (so no size fills and turns move-ins away): the history's winter months
        // take more move-ins than its summer months.
        let scenario = Scenario {
            name: "t",
            demand: 0.6,
            start_occupancy: 0.5,
            start_rate_spread: 0.0,
        };
        let params: Vec<SizeParams> = (0..4)
            .map(|_| SizeParams {
                season: season(Shape::Inverted, 2.0),
                ..SizeParams::fixed(&scenario)
            })
            .collect();
        let start = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
        let year = history_year(&params, 3, start);
        assert_eq!(year.len(), 12);
        let at = |m: usize| year[m].1;
        let (winter, summer) = (at(0) + at(11), at(5) + at(6));
        assert!(winter > summer * 1.3, "{year:?}");
        assert!(year.iter().all(|m| m.2 == 1));
    }
}
