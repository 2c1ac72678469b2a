//! The 12-month move-in pace profile (index, average 1.0).
//!
//! Pace of a calendar month = move-ins / facility-days over every year of history. A month is
//! "own data" when it has at least `min_facility_days`; the others take the national prior.
//! So that own and prior months share one scale, the own paces are scaled to the prior's level
//! on the same months: raw_m = pace_m x mean_own(prior) / mean_own(pace); prior months keep the
//! prior; then all twelve are divided by their mean, so the profile averages 1.0.
//! The de-seasonalised base pace (the pace at index 1.0) is mean(raw) x mean_own(pace) /
//! mean_own(prior), so the expected pace of month m is base x index_m.

use serde::Serialize;

/// The pricing engine's national move-in prior (January first, averaging 1.0), so the engine
/// and the analytics read one seasonality.
pub use crate::pricing::seasonality::NATIONAL_PRIOR;

/// The national prior, normalised to average 1.0 (a no-op for the values above; kept so a
/// change of the prior cannot break the profile's average).
pub fn national_prior() -> [f64; 12] {
    let mean = NATIONAL_PRIOR.iter().sum::<f64>() / 12.0;
    NATIONAL_PRIOR.map(|v| v / mean)
}

/// Move-ins and facility-days of one calendar month (1 to 12), summed over the years.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MonthTotals {
    pub move_ins: f64,
    pub facility_days: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[schema(as = SeasonalityBasis)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    Own,
    Prior,
}

#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
#[schema(as = SeasonalityMonth)]
pub struct MonthIndex {
    /// Calendar month, 1 to 12.
    pub month: u32,
    /// Demand index of the month (1.0 is an average month).
    pub index: f64,
    /// `own` (from the company's data) or `prior` (the industry prior).
    pub basis: Basis,
    /// Own move-ins per facility-day; null for prior months.
    pub pace: Option<f64>,
    /// Facility-days of own data in the month.
    pub facility_days: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub months: Vec<MonthIndex>,
    pub own_months: usize,
    pub prior_months: usize,
    /// Move-ins per facility-day at index 1.0; None without own data.
    pub base_pace: Option<f64>,
}

pub fn profile(totals: &[MonthTotals; 12], min_facility_days: f64) -> Profile {
    let prior = national_prior();
    let own: Vec<bool> = totals
        .iter()
        .map(|t| t.facility_days >= min_facility_days && t.facility_days > 0.0)
        .collect();
    let pace = |m: usize| totals[m].move_ins / totals[m].facility_days;
    let own_idx: Vec<usize> = (0..12).filter(|&m| own[m]).collect();
    let mean_own_pace = if own_idx.is_empty() {
        0.0
    } else {
        own_idx.iter().map(|&m| pace(m)).sum::<f64>() / own_idx.len() as f64
    };
    // No move-ins at all in the own months says nothing about their shape: use the prior.
    let usable = !own_idx.is_empty() && mean_own_pace > 0.0;
    let mean_own_prior = if usable {
        own_idx.iter().map(|&m| prior[m]).sum::<f64>() / own_idx.len() as f64
    } else {
        1.0
    };
    let raw: Vec<f64> = (0..12)
        .map(|m| {
            if usable && own[m] {
                pace(m) * mean_own_prior / mean_own_pace
            } else {
                prior[m]
            }
        })
        .collect();
    let mean_raw = raw.iter().sum::<f64>() / 12.0;
    let months = (0..12)
        .map(|m| {
            let is_own = usable && own[m];
            MonthIndex {
                month: m as u32 + 1,
                index: raw[m] / mean_raw,
                basis: if is_own { Basis::Own } else { Basis::Prior },
                pace: is_own.then(|| pace(m)),
                facility_days: totals[m].facility_days,
            }
        })
        .collect();
    let own_months = if usable { own_idx.len() } else { 0 };
    Profile {
        months,
        own_months,
        prior_months: 12 - own_months,
        base_pace: usable.then(|| mean_raw * mean_own_pace / mean_own_prior),
    }
}

/// This month's pace against the profile: expected = base pace x index of the month;
/// vs_profile_pct = pace / expected - 1, in percent.
#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
#[schema(as = SeasonalityReading)]
pub struct Reading {
    /// The current calendar month, 1 to 12.
    pub month: u32,
    /// Its demand index.
    pub index: f64,
    /// Move-ins per facility-day this month.
    pub pace: f64,
    /// Pace the profile expects for the month.
    pub expected_pace: Option<f64>,
    /// Pace against the expected pace, percent above (+) or below (-).
    pub vs_profile_pct: Option<f64>,
}

pub fn reading(p: &Profile, month: u32, pace: f64) -> Reading {
    let index = p
        .months
        .get(month.saturating_sub(1) as usize)
        .map_or(1.0, |m| m.index);
    let expected = p.base_pace.map(|b| b * index);
    Reading {
        month,
        index,
        pace,
        expected_pace: expected,
        vs_profile_pct: expected
            .filter(|e| *e > 0.0)
            .map(|e| (pace / e - 1.0) * 100.0),
    }
}

/// The soft advisory: describes past pace only; never an instruction.
pub fn advisory(r: &Reading, own_months: usize) -> String {
    let tail =
        "This describes past move-in pace only; it is not a forecast or a price instruction.";
    match r.vs_profile_pct {
        Some(v) if v >= 10.0 => format!(
            "Move-in pace this month is {v:.0}% above what the seasonal profile suggests (profile from {own_months} months of own data). {tail}"
        ),
        Some(v) if v <= -10.0 => format!(
            "Move-in pace this month is {:.0}% below what the seasonal profile suggests (profile from {own_months} months of own data). {tail}",
            -v
        ),
        Some(_) => format!(
            "Move-in pace this month is in line with the seasonal profile (within 10%). {tail}"
        ),
        None => format!(
            "Not enough own history to compare this month's pace; the profile is the national prior. {tail}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn no_data_is_the_prior() {
        let p = profile(&[MonthTotals::default(); 12], 20.0);
        assert_eq!(p.own_months, 0);
        assert_eq!(p.base_pace, None);
        let prior = national_prior();
        for (m, want) in p.months.iter().zip(prior) {
            assert!(close(m.index, want));
            assert_eq!(m.basis, Basis::Prior);
        }
    }

    #[test]
    fn full_own_year_by_hand() {
        // Twelve own months, 100 facility-days each; 2 move-ins a day in the first six months
        // and 1 in the last six: mean pace 1.5, so indexes 2/1.5 = 1.333 and 1/1.5 = 0.667.
        let mut t = [MonthTotals::default(); 12];
        for (m, x) in t.iter_mut().enumerate() {
            *x = MonthTotals {
                move_ins: if m < 6 { 200.0 } else { 100.0 },
                facility_days: 100.0,
            };
        }
        let p = profile(&t, 20.0);
        assert_eq!(p.own_months, 12);
        assert!(close(p.months[0].index, 4.0 / 3.0));
        assert!(close(p.months[11].index, 2.0 / 3.0));
        // Base pace 1.5; July's expected pace 1.5 x 0.667 = 1; a July pace of 1.2 is +20 %.
        assert!(close(p.base_pace.unwrap(), 1.5));
        let r = reading(&p, 7, 1.2);
        assert!(close(r.vs_profile_pct.unwrap(), 20.0));
    }

    #[test]
    fn missing_months_take_the_prior_on_the_same_scale() {
        // Own data only for January and July, with the prior's own ratio: the profile is
        // exactly the prior.
        let prior = national_prior();
        let mut t = [MonthTotals::default(); 12];
        t[0] = MonthTotals {
            move_ins: prior[0] * 300.0,
            facility_days: 300.0,
        };
        t[6] = MonthTotals {
            move_ins: prior[6] * 300.0,
            facility_days: 300.0,
        };
        t[3] = MonthTotals {
            move_ins: 5.0,
            facility_days: 10.0,
        }; // below the minimum: prior
        let p = profile(&t, 20.0);
        assert_eq!((p.own_months, p.prior_months), (2, 10));
        assert_eq!(p.months[3].basis, Basis::Prior);
        for (m, want) in p.months.iter().zip(prior) {
            assert!(close(m.index, want), "{m:?} {want}");
        }
    }

    proptest! {
        #[test]
        fn profile_averages_one(
            data in proptest::collection::vec((0.0f64..500.0, 0.0f64..400.0), 12),
        ) {
            let mut t = [MonthTotals::default(); 12];
            for (i, (mi, days)) in data.iter().enumerate() {
                t[i] = MonthTotals { move_ins: *mi, facility_days: *days };
            }
            let p = profile(&t, 20.0);
            let mean = p.months.iter().map(|m| m.index).sum::<f64>() / 12.0;
            prop_assert!((mean - 1.0).abs() < 1e-9);
            prop_assert!(p.months.iter().all(|m| m.index >= 0.0 && m.index.is_finite()));
            prop_assert_eq!(p.own_months + p.prior_months, 12);
        }
    }
}
