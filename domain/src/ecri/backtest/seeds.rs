//! The seeds of the backtest, split once and for all: seeds below [`FIRST_REPORT_SEED`] are the
//! tuning pool (what anything is tuned on: the fixed rules of each run, and the engine's
//! defaults, chosen on [`ENGINE_TUNING_SEEDS`]), seeds from it on are report seeds. A
//! [`TuneSeeds`] holds only tuning seeds and a [`ReportSeeds`] only report seeds, so a report
//! can never be made on a seed anything was tuned on.

use std::fmt;
use std::ops::RangeInclusive;

/// The first seed reported on; every seed below it is a tuning seed.
pub const FIRST_REPORT_SEED: u64 = 101;
/// The seeds the engine's default settings were chosen on.
pub const ENGINE_TUNING_SEEDS: RangeInclusive<u64> = 1..=5;

/// Why a set of seeds is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeedError {
    /// A tuning seed asked for as a report seed.
    TuningSeedReported(u64),
    /// A report seed asked for as a tuning seed.
    ReportSeedTuned(u64),
    /// The same seed twice.
    Repeated(u64),
    /// Fewer seeds than needed (`needed`).
    TooFew { needed: usize, given: usize },
}

impl fmt::Display for SeedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SeedError::TuningSeedReported(s) => write!(
                f,
                "seed {s} is a tuning seed (seeds below {FIRST_REPORT_SEED} are tuned on): \
                 report seeds start at {FIRST_REPORT_SEED}"
            ),
            SeedError::ReportSeedTuned(s) => write!(
                f,
                "seed {s} is a report seed: tuning seeds are below {FIRST_REPORT_SEED}"
            ),
            SeedError::Repeated(s) => write!(f, "seed {s} is given twice"),
            SeedError::TooFew { needed, given } => {
                write!(f, "{given} seed(s) given, at least {needed} needed")
            }
        }
    }
}

impl std::error::Error for SeedError {}

fn distinct(seeds: &[u64]) -> Result<(), SeedError> {
    let mut seen = std::collections::BTreeSet::new();
    match seeds.iter().find(|s| !seen.insert(**s)) {
        Some(s) => Err(SeedError::Repeated(*s)),
        None => Ok(()),
    }
}

/// Seeds the fixed rules are tuned on: all below [`FIRST_REPORT_SEED`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TuneSeeds(Vec<u64>);

impl TuneSeeds {
    pub fn new(seeds: Vec<u64>) -> Result<Self, SeedError> {
        if seeds.is_empty() {
            return Err(SeedError::TooFew {
                needed: 1,
                given: 0,
            });
        }
        if let Some(s) = seeds.iter().find(|s| **s >= FIRST_REPORT_SEED) {
            return Err(SeedError::ReportSeedTuned(*s));
        }
        distinct(&seeds)?;
        Ok(Self(seeds))
    }

    /// The engine's own tuning seeds, 1-5.
    pub fn engine() -> Self {
        Self(ENGINE_TUNING_SEEDS.collect())
    }

    pub fn seeds(&self) -> &[u64] {
        &self.0
    }
}

/// Seeds reported on: all from [`FIRST_REPORT_SEED`] on, at least two (for an interval); or,
/// made by [`ReportSeeds::tuning`] to choose the engine's settings, seeds of the tuning pool
/// that every table then names as such.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportSeeds {
    seeds: Vec<u64>,
    held_out: bool,
}

impl ReportSeeds {
    pub fn new(seeds: Vec<u64>) -> Result<Self, SeedError> {
        if let Some(s) = seeds.iter().find(|s| **s < FIRST_REPORT_SEED) {
            return Err(SeedError::TuningSeedReported(*s));
        }
        Self::checked(seeds, true)
    }

    /// `count` seeds from `first` on.
    pub fn range(first: u64, count: u64) -> Result<Self, SeedError> {
        Self::new((first..first.saturating_add(count)).collect())
    }

    /// `count` seeds of the tuning pool from `first` on, to choose settings on: every one
    /// below [`FIRST_REPORT_SEED`], and the report says they are not held out.
    pub fn tuning(first: u64, count: u64) -> Result<Self, SeedError> {
        let seeds: Vec<u64> = (first..first.saturating_add(count)).collect();
        if let Some(s) = seeds.iter().find(|s| **s >= FIRST_REPORT_SEED) {
            return Err(SeedError::ReportSeedTuned(*s));
        }
        Self::checked(seeds, false)
    }

    fn checked(seeds: Vec<u64>, held_out: bool) -> Result<Self, SeedError> {
        if seeds.len() < 2 {
            return Err(SeedError::TooFew {
                needed: 2,
                given: seeds.len(),
            });
        }
        distinct(&seeds)?;
        Ok(Self { seeds, held_out })
    }

    pub fn seeds(&self) -> &[u64] {
        &self.seeds
    }

    /// Whether these are report seeds (nothing was tuned on them) rather than tuning ones.
    pub fn held_out(&self) -> bool {
        self.held_out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tuning_seed_cannot_be_a_report_seed_nor_the_reverse() {
        assert_eq!(
            ReportSeeds::range(3, 10),
            Err(SeedError::TuningSeedReported(3))
        );
        // One tuning seed among report seeds is enough to refuse the set.
        assert_eq!(
            ReportSeeds::new(vec![101, 102, 5]),
            Err(SeedError::TuningSeedReported(5))
        );
        assert_eq!(
            ReportSeeds::range(95, 10),
            Err(SeedError::TuningSeedReported(95))
        );
        for s in ENGINE_TUNING_SEEDS {
            assert!(ReportSeeds::new(vec![s, 200]).is_err());
        }
        assert_eq!(
            TuneSeeds::new(vec![1, 2, 101]),
            Err(SeedError::ReportSeedTuned(101))
        );
        let report = ReportSeeds::range(101, 10).unwrap();
        assert_eq!(report.seeds(), (101..=110).collect::<Vec<_>>().as_slice());
        let tune = TuneSeeds::engine();
        assert_eq!(tune.seeds(), &[1, 2, 3, 4, 5]);
        assert!(tune.seeds().iter().all(|s| !report.seeds().contains(s)));
        assert!(report.held_out());
        // Tuning runs take tuning seeds only, and say so.
        let tuning = ReportSeeds::tuning(1, 5).unwrap();
        assert!(!tuning.held_out());
        assert_eq!(
            ReportSeeds::tuning(99, 3),
            Err(SeedError::ReportSeedTuned(101))
        );
        let message = SeedError::TuningSeedReported(3).to_string();
        assert!(message.contains("seed 3 is a tuning seed"), "{message}");
    }

    #[test]
    fn seeds_are_distinct_and_a_report_has_two_at_least() {
        assert_eq!(
            ReportSeeds::new(vec![101]),
            Err(SeedError::TooFew {
                needed: 2,
                given: 1
            })
        );
        assert_eq!(
            ReportSeeds::new(vec![101, 101]),
            Err(SeedError::Repeated(101))
        );
        assert_eq!(TuneSeeds::new(vec![2, 2]), Err(SeedError::Repeated(2)));
        assert!(TuneSeeds::new(Vec::new()).is_err());
    }
}
