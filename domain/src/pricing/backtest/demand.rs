//! How a simulated size's move-ins answer its street rate against the competitor median: the
//! demand families of the backtest, one chosen per run (`--family`).
//!
//! - `logistic`: 2 / (1 + e^(s (x - 1))), x the rate over the median, s twice the elasticity at
//!   the median (drawn per size in the wide market). The engine's own form: its price response
//!   (`pricing::response`, docs/pricing.md "The price response") reads demand through this very
//!   curve, with an elasticity of 3.
//! - `kinked`: piecewise linear in x, 1 at the median, 1 + b (1 - x) below it and 1 - a (x - 1)
//!   above it, capped at [`kinked::CAP`] and floored at 0, with a shallow slope below
//!   (b drawn in [`kinked::BELOW`], 0.5-1.5) and a steep one above (a in [`kinked::ABOVE`],
//!   3-7). Customers who find a size below the market gain little from it (they were coming
//!   anyway, and a unit 10 % cheaper than the street wins 5-15 % more of them, not 29 % as the
//!   logistic of elasticity 3 says); a size above the market loses them fast, and none at all
//!   past 1 + 1 / a (1.14 to 1.33 times the median). The engine was not built on it: it assumes
//!   the logistic's symmetric answer, so it expects a cut to fill what a cut here barely fills,
//!   reads a size priced below the median as having less demand than it has, and where b < 1
//!   the rent a day's move-ins pay rises up to the median (x (1 + b (1 - x)) grows while
//!   x < (1 + b) / 2b), where the logistic's peaks at 0.78 of it.
//!
//! Both are functions of the rate over the median and of parameters drawn once per size and
//! seed, never of the size's past rates: the optimal policy's dynamic programme
//! (`super::optimal`) stays exact for either.

use super::market::demand_share_at;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A family of demand curves: the shape of the move-ins' answer to the rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    Logistic,
    Kinked,
}

impl Family {
    pub const ALL: [Family; 2] = [Family::Logistic, Family::Kinked];

    pub fn name(self) -> &'static str {
        match self {
            Family::Logistic => "logistic",
            Family::Kinked => "kinked",
        }
    }

    /// The family of a name (`logistic`, `kinked`).
    pub fn parse(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// The ranges the `kinked` family draws its slopes from, and its cap.
pub mod kinked {
    /// The share gained per unit of the rate below the median (a rate at 0.9 of it wins
    /// 1 + 0.1 b of the median's move-ins).
    pub const BELOW: (f64, f64) = (0.5, 1.5);
    /// The share lost per unit of the rate above the median.
    pub const ABOVE: (f64, f64) = (3.0, 7.0);
    /// The most a rate however low wins, against the median's move-ins.
    pub const CAP: f64 = 1.5;
}

/// One size's demand curve: its family and the parameters drawn for it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Curve {
    /// 2 / (1 + e^(sensitivity (x - 1))); `sensitivity` is twice the elasticity at the median.
    Logistic { sensitivity: f64 },
    /// 1 + below (1 - x) under the median, 1 - above (x - 1) over it, within 0 and
    /// [`kinked::CAP`].
    Kinked { below: f64, above: f64 },
}

impl Curve {
    /// The share of the market's move-ins (1 at the median) a rate wins against the median.
    pub fn share(&self, rate: f64, median: f64) -> f64 {
        match *self {
            Curve::Logistic { sensitivity } => demand_share_at(rate, median, sensitivity),
            Curve::Kinked { below, above } => {
                let x = rate / median;
                let share = if x < 1.0 {
                    1.0 + below * (1.0 - x)
                } else {
                    1.0 - above * (x - 1.0)
                };
                share.clamp(0.0, kinked::CAP)
            }
        }
    }

    pub fn family(&self) -> Family {
        match self {
            Curve::Logistic { .. } => Family::Logistic,
            Curve::Kinked { .. } => Family::Kinked,
        }
    }
}

/// The `kinked` curves of a seed's four sizes (`tag` the scenario's), from a generator of their
/// own: drawing them changes none of the seed's other draws.
pub fn draw_kinked(seed: u64, tag: u64) -> [Curve; 4] {
    let mut rng = StdRng::seed_from_u64(seed.wrapping_mul(2_654_435_761) ^ tag ^ 0x5eed_0005);
    std::array::from_fn(|_| Curve::Kinked {
        below: rng.gen_range(kinked::BELOW.0..=kinked::BELOW.1),
        above: rng.gen_range(kinked::ABOVE.0..=kinked::ABOVE.1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::backtest::market::{SizeParams, PRICE_SENSITIVITY, SCENARIOS};

    const KINK: Curve = Curve::Kinked {
        below: 1.0,
        above: 5.0,
    };

    #[test]
    fn families_parse_by_name() {
        for f in Family::ALL {
            assert_eq!(Family::parse(f.name()), Some(f));
        }
        assert_eq!(Family::parse("linear"), None);
        assert_eq!(KINK.family(), Family::Kinked);
    }

    #[test]
    fn the_kinked_share_is_one_at_the_median_shallow_below_and_steep_above() {
        assert!((KINK.share(100.0, 100.0) - 1.0).abs() < 1e-12);
        // 10 % below: 1 + 1 x 0.1; 10 % above: 1 - 5 x 0.1.
        assert!((KINK.share(90.0, 100.0) - 1.1).abs() < 1e-12);
        assert!((KINK.share(110.0, 100.0) - 0.5).abs() < 1e-12);
        // No move-in past 1 + 1/5, and at most the cap however low the rate.
        assert_eq!(KINK.share(121.0, 100.0), 0.0);
        assert_eq!(KINK.share(140.0, 100.0), 0.0);
        assert!((KINK.share(20.0, 100.0) - kinked::CAP).abs() < 1e-12);
        // The kink: the slope just below the median is a fifth of the one just above.
        let h = 1e-6;
        let below = (KINK.share(100.0 - h, 100.0) - 1.0) / h;
        let above = (1.0 - KINK.share(100.0 + h, 100.0)) / h;
        assert!((below - 0.01).abs() < 1e-6 && (above - 0.05).abs() < 1e-6);
        // The logistic of the engine's elasticity answers a cut as much as a raise.
        let logistic = Curve::Logistic {
            sensitivity: PRICE_SENSITIVITY,
        };
        let (cut, raise) = (logistic.share(90.0, 100.0), logistic.share(110.0, 100.0));
        assert!((cut - 1.0 - (1.0 - raise)).abs() < 1e-12 && cut > 1.29);
    }

    #[test]
    fn every_drawn_kinked_share_falls_with_the_rate() {
        for seed in 16..40 {
            for curve in draw_kinked(seed, 7) {
                let Curve::Kinked { below, above } = curve else {
                    panic!("{curve:?}")
                };
                assert!((0.5..=1.5).contains(&below) && (3.0..=7.0).contains(&above));
                let shares: Vec<f64> = (30..=150)
                    .map(|k| curve.share(f64::from(k), 100.0))
                    .collect();
                assert!(shares.windows(2).all(|w| w[1] <= w[0]), "{curve:?}");
                assert!(shares.iter().all(|s| (0.0..=kinked::CAP).contains(s)));
            }
        }
    }

    #[test]
    fn the_kinked_family_changes_no_other_draw_of_a_seed() {
        for s in &SCENARIOS {
            for seed in [16, 17, 116] {
                let logistic = SizeParams::wide(s, seed);
                assert_eq!(SizeParams::wide_in(s, seed, Family::Logistic), logistic);
                let kinked = SizeParams::wide_in(s, seed, Family::Kinked);
                for (k, l) in kinked.iter().zip(&logistic) {
                    assert_eq!(k.curve.family(), Family::Kinked);
                    assert_eq!(l.curve.family(), Family::Logistic);
                    assert_eq!(
                        SizeParams {
                            curve: l.curve,
                            ..*k
                        },
                        *l
                    );
                }
                // Each size draws its own slopes.
                assert_ne!(kinked[0].curve, kinked[1].curve);
            }
        }
    }
}
