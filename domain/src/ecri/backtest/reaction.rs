//! How a facility's tenants answer a rent increase. It lives apart from the policies because
//! it is the hidden truth they are scored against: no policy reads it, only the simulation.

use super::draws::mix;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

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
