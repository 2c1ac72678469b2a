//! The seeded draws behind the simulation. Each number comes from the seed and what it is
//! for (facility, size, tenant, day...), not from a shared stream, so two policies run on one
//! seed see the same stays and the same move-ins and differ only by what they do.

use crate::pricing::backtest::market::STAY_DAYS;

/// SplitMix64 over the parts: a number of its own for each (seed, facility, size, tenant, ...).
pub(super) fn mix(parts: &[u64]) -> u64 {
    parts.iter().fold(0x853c_49e6_748f_ea9b, |h, &p| {
        let mut z = (h ^ p).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

/// A uniform draw in [0, 1) of its own for the parts.
pub(super) fn uniform(parts: &[u64]) -> f64 {
    (mix(parts) >> 11) as f64 / (1u64 << 53) as f64
}

/// The Poisson count of mean `mean` whose cumulative probability first reaches `u`.
pub(super) fn poisson_at(u: f64, mean: f64) -> u32 {
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

/// Days a tenant (the size's n-th) stays: exponential, mean 400 days.
pub(super) fn natural_stay(seed: u64, facility: usize, size: usize, serial: u32) -> i32 {
    let u = uniform(&[
        seed,
        facility as u64,
        size as u64,
        u64::from(serial),
        0x57a7,
    ]);
    (-STAY_DAYS * (1.0 - u).max(1e-12).ln()).ceil() as i32
}
