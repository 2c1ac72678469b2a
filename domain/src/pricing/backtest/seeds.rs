//! The seeds of the pricing backtest, split once and for all: [`TUNING_SEEDS`] are the seeds
//! the engine's settings were chosen on (of the wide market and of the fixed one), every other
//! seed is held out. A report on held-out seeds refuses a tuning seed
//! ([`HeldOutSeeds::new`]), so no figure called held out can come from a seed anything was
//! tuned on.

use std::fmt;
use std::ops::RangeInclusive;

/// The seeds the engine's settings were tuned on (engine 2026.11.7's on the wide market's 1-15
/// and the fixed market's 1-15; earlier versions on subsets of them).
pub const TUNING_SEEDS: RangeInclusive<u64> = 1..=15;

/// Why a set of seeds cannot be reported as held out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeldOutError {
    /// A tuning seed among them.
    TuningSeed(u64),
    /// The same seed twice.
    Repeated(u64),
    /// Fewer than two seeds: no interval across seeds.
    TooFew(usize),
}

impl fmt::Display for HeldOutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeldOutError::TuningSeed(s) => write!(
                f,
                "seed {s} is a tuning seed (seeds {}-{} were tuned on), not a held-out one",
                TUNING_SEEDS.start(),
                TUNING_SEEDS.end()
            ),
            HeldOutError::Repeated(s) => write!(f, "seed {s} is given twice"),
            HeldOutError::TooFew(n) => {
                write!(f, "{n} seed(s) given, at least 2 needed for an interval")
            }
        }
    }
}

impl std::error::Error for HeldOutError {}

/// Seeds none of the engine's settings were tuned on, at least two of them, each once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldOutSeeds(Vec<u64>);

impl HeldOutSeeds {
    pub fn new(seeds: Vec<u64>) -> Result<Self, HeldOutError> {
        if let Some(s) = seeds.iter().find(|s| TUNING_SEEDS.contains(s)) {
            return Err(HeldOutError::TuningSeed(*s));
        }
        if seeds.len() < 2 {
            return Err(HeldOutError::TooFew(seeds.len()));
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(s) = seeds.iter().find(|s| !seen.insert(**s)) {
            return Err(HeldOutError::Repeated(*s));
        }
        Ok(Self(seeds))
    }

    /// `count` seeds from `first` on.
    pub fn range(first: u64, count: u64) -> Result<Self, HeldOutError> {
        Self::new((first..first.saturating_add(count)).collect())
    }

    pub fn seeds(&self) -> &[u64] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tuning_seed_is_never_held_out() {
        for s in TUNING_SEEDS {
            assert_eq!(
                HeldOutSeeds::new(vec![200, s]),
                Err(HeldOutError::TuningSeed(s))
            );
        }
        // The range that reaches into the tuning seeds is refused at its first tuning seed.
        assert_eq!(
            HeldOutSeeds::range(10, 100),
            Err(HeldOutError::TuningSeed(10))
        );
        let held = HeldOutSeeds::range(16, 100).unwrap();
        assert_eq!(held.seeds().first(), Some(&16));
        assert_eq!(held.seeds().last(), Some(&115));
        let message = HeldOutError::TuningSeed(3).to_string();
        assert_eq!(
            message,
            "seed 3 is a tuning seed (seeds 1-15 were tuned on), not a held-out one"
        );
    }

    #[test]
    fn held_out_seeds_are_distinct_and_at_least_two() {
        assert_eq!(HeldOutSeeds::new(vec![116]), Err(HeldOutError::TooFew(1)));
        assert_eq!(
            HeldOutSeeds::new(vec![116, 117, 116]),
            Err(HeldOutError::Repeated(116))
        );
    }
}
