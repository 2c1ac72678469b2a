//! How a facility's tenants answer a rent increase. It lives apart from the policies because
//! it is the hidden truth they are scored against: no policy reads it, only the simulation.
//!
//! Three families, one chosen per run, each with parameters drawn per facility and seed:
//!
//! - `hazard`: a hazard convex in the increase plus a premium beyond what moving costs:
//!   `1 - exp(-s (1.2 x^1.5 + 3 max(0, r / median - 1 - m)))`. Closest to the engine's own
//!   curve (the same two drivers and a kink at the moving cost).
//! - `threshold`: tenants react little to an increase below round figures and sharply above:
//!   below both the facility's amount (one of $10, $15, $20) and percent (one of 8, 10, 12 %)
//!   `1 - exp(-s (0.1 x + 3 over))`, above either `1 - exp(-s (0.2 + 1.5 x + 3 over))` (a jump
//!   of 18 points at least at s = 1), `over` the premium beyond the moving cost as above.
//! - `tenure`: long-stayers tolerate more and a second increase within a year costs more:
//!   `1 - exp(-s (1.5 x T R + 3 over))`, T = 0.4 + 1.6 e^(-months since move-in / 12) (2 for a
//!   new tenant, 0.6 after two years), R = 3 when the tenant's last increase took effect less
//!   than 12 months before the notice, else 1, times (1 + 0.25 per past increase, at most 4).
//!
//! s, the facility's sensitivity, is e^(0.6 z) (z standard normal, within 0.3-3) and m, what
//! moving costs its tenants, uniform 10-30 % of the competitors' median: both drawn as before
//! the families existed, so the `hazard` family's runs are the earlier backtest's.

use super::draws::mix;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A family of reactions: the shape of the tenants' answer to an increase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    Hazard,
    Threshold,
    Tenure,
}

impl Family {
    pub const ALL: [Family; 3] = [Family::Hazard, Family::Threshold, Family::Tenure];

    pub fn name(self) -> &'static str {
        match self {
            Family::Hazard => "hazard",
            Family::Threshold => "threshold",
            Family::Tenure => "tenure",
        }
    }

    /// The family of a name (`hazard`, `threshold`, `tenure`).
    pub fn parse(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// What the reaction of one tenant depends on: the increase, the market, the tenant's history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Notice {
    pub old_rent: f64,
    pub new_rent: f64,
    /// The competitors' median that day (the truth, not the observed one).
    pub median: f64,
    pub months_since_move_in: f64,
    /// Months since the tenant's last increase took effect; None when never increased.
    pub months_since_last_increase: Option<f64>,
    /// Increases the tenant had before this one.
    pub past_increases: u32,
}

/// What a facility's tenants do when their rent goes up: hidden from every policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reaction {
    pub family: Family,
    pub sensitivity: f64,
    /// What moving costs, as a share of the competitor median.
    pub moving_cost: f64,
    /// `threshold`: the increase (currency) and the increase (%) tenants take with little
    /// reaction.
    pub threshold_amount: f64,
    pub threshold_pct: f64,
}

impl Reaction {
    /// The facility's reaction on a seed, of the family given.
    pub fn draw(seed: u64, facility: usize, family: Family) -> Self {
        let mut rng = StdRng::seed_from_u64(mix(&[seed, facility as u64, 0xec71]));
        // Box-Muller for one standard normal draw.
        let (u1, u2): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        let sensitivity = (0.6 * z).exp().clamp(0.3, 3.0);
        let moving_cost = rng.gen_range(0.10..0.30);
        let mut other = StdRng::seed_from_u64(mix(&[seed, facility as u64, 0x7e5d]));
        Self {
            family,
            sensitivity,
            moving_cost,
            threshold_amount: [10.0, 15.0, 20.0][other.gen_range(0..3)],
            threshold_pct: [8.0, 10.0, 12.0][other.gen_range(0..3)],
        }
    }

    /// The chance a tenant moves out after a notice.
    pub fn move_out(&self, n: &Notice) -> f64 {
        let x = (n.new_rent / n.old_rent - 1.0).max(0.0);
        if x <= 0.0 {
            return 0.0;
        }
        let over = (n.new_rent / n.median - 1.0 - self.moving_cost).max(0.0);
        let load = match self.family {
            Family::Hazard => 1.2 * x.powf(1.5),
            Family::Threshold => {
                let amount = n.new_rent - n.old_rent;
                // A hair of tolerance: $10 on $100 is 10 %, not over it.
                if amount > self.threshold_amount + 1e-6 || x * 100.0 > self.threshold_pct + 1e-6 {
                    0.2 + 1.5 * x
                } else {
                    0.1 * x
                }
            }
            Family::Tenure => {
                let tenure = 0.4 + 1.6 * (-n.months_since_move_in.max(0.0) / 12.0).exp();
                let again = if n.months_since_last_increase.is_some_and(|m| m < 12.0) {
                    3.0
                } else {
                    1.0
                };
                let history = 1.0 + 0.25 * f64::from(n.past_increases.min(4));
                1.5 * x * tenure * again * history
            }
        };
        1.0 - (-self.sensitivity * (load + 3.0 * over)).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reaction(family: Family) -> Reaction {
        Reaction {
            family,
            sensitivity: 1.0,
            moving_cost: 0.2,
            threshold_amount: 10.0,
            threshold_pct: 10.0,
        }
    }

    fn notice(old: f64, new: f64) -> Notice {
        Notice {
            old_rent: old,
            new_rent: new,
            median: 150.0,
            months_since_move_in: 24.0,
            months_since_last_increase: None,
            past_increases: 0,
        }
    }

    #[test]
    fn hazard_is_convex_in_the_increase_and_rises_past_the_moving_cost() {
        let r = reaction(Family::Hazard);
        assert_eq!(r.move_out(&notice(100.0, 100.0)), 0.0);
        let p10 = r.move_out(&notice(100.0, 110.0));
        let p20 = r.move_out(&notice(100.0, 120.0));
        assert!((p10 - (1.0 - (-1.2f64 * 0.1f64.powf(1.5)).exp())).abs() < 1e-12);
        // Convex: twice the increase more than doubles the move-outs.
        assert!(p20 > 2.0 * p10 * 1.3, "{p10} {p20}");
        // The same 10 % from a rent already 20 % over the median: past the moving cost.
        let over = r.move_out(&notice(180.0, 198.0));
        assert!(over > p10 + 0.1, "{p10} {over}");
    }

    #[test]
    fn threshold_tenants_barely_move_below_the_round_figures_and_sharply_above() {
        let r = reaction(Family::Threshold);
        // $9 and 9 %: under both.
        let below = r.move_out(&notice(100.0, 109.0));
        // $12 and 6 % on a larger unit: over the amount.
        let amount = r.move_out(&notice(200.0, 212.0));
        // $7 and 11.7 % on a small unit: over the percent.
        let pct = r.move_out(&notice(60.0, 67.0));
        assert!(below < 0.01, "{below}");
        assert!(amount > 0.2 && pct > 0.2, "{amount} {pct}");
        // A dollar across the line multiplies the move-outs.
        let at = r.move_out(&notice(100.0, 110.0));
        let across = r.move_out(&notice(100.0, 111.0));
        assert!(across > 20.0 * at, "{at} {across}");
    }

    #[test]
    fn tenure_long_stayers_tolerate_more_and_a_second_increase_within_a_year_costs_more() {
        let r = reaction(Family::Tenure);
        let at = |months: f64, last: Option<f64>, past: u32| {
            r.move_out(&Notice {
                months_since_move_in: months,
                months_since_last_increase: last,
                past_increases: past,
                ..notice(100.0, 110.0)
            })
        };
        let new_tenant = at(6.0, None, 0);
        let long_stayer = at(48.0, None, 0);
        assert!(new_tenant > 2.5 * long_stayer, "{new_tenant} {long_stayer}");
        let second_within_year = at(24.0, Some(7.0), 1);
        let second_after_year = at(24.0, Some(14.0), 1);
        assert!(
            second_within_year > 2.5 * second_after_year,
            "{second_within_year} {second_after_year}"
        );
        assert!(at(24.0, Some(14.0), 3) > second_after_year);
    }

    #[test]
    fn families_parse_by_name_and_share_the_drawn_sensitivity() {
        for f in Family::ALL {
            assert_eq!(Family::parse(f.name()), Some(f));
        }
        assert_eq!(Family::parse("logistic"), None);
        let a = Reaction::draw(7, 2, Family::Hazard);
        let b = Reaction::draw(7, 2, Family::Tenure);
        assert_eq!(a.sensitivity, b.sensitivity);
        assert!((0.3..=3.0).contains(&a.sensitivity));
        assert!([10.0, 15.0, 20.0].contains(&a.threshold_amount));
        assert!([8.0, 10.0, 12.0].contains(&a.threshold_pct));
    }
}
