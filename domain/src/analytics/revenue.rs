//! Revenue per available unit and per available square foot, on street rates before
//! concessions (promotions are not subtracted), from the figures derived at ingest:
//!
//! - RevPAU = actual rent / total units (currency per unit per month);
//! - RevPAF = actual rent / rentable sq ft (currency per sq ft per month);
//! - rent gap = street rent of the occupied units - actual rent; rent_gap_pct = rent gap /
//!   actual rent x 100: how far the tenants in place pay under today's street rates (negative
//!   above them), the same meaning as the ECRI report's `rent_gap_pct` (street / in-place - 1);
//! - revenue gap = GPR - actual rent; revenue_gap_pct = revenue gap / GPR x 100: the loss to
//!   vacancy and to the rent gap together;
//! - economic occupancy = actual rent / GPR x 100;
//! - actual_rent_coverage_pct: the share of occupied units whose rent was sent (the rest is
//!   estimated, see `crate::sync::derive`).
//!
//! Each figure is null when an input is missing or zero, and says when an input was estimated.

use crate::values::{round2, round4};
use serde::Serialize;

/// One snapshot's (or one month's latest snapshot's) stock figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    pub total_units: Option<i64>,
    pub occupied_units: Option<i64>,
    pub units_estimated: bool,
    pub rentable_sqft: Option<f64>,
    pub rentable_sqft_estimated: bool,
    pub gross_potential_rent: Option<f64>,
    pub actual_rent: Option<f64>,
    pub actual_rent_estimated: bool,
    pub actual_rent_coverage_pct: Option<f64>,
    pub occupied_potential_rent: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Revenue {
    /// Revenue per available unit: actual rent / total units, per month.
    pub revpau: Option<f64>,
    /// Revenue per available square foot: actual rent / rentable sq ft, per month.
    pub revpaf: Option<f64>,
    /// Street rate x units, per month.
    pub gross_potential_rent: Option<f64>,
    /// Rent of the occupied units, per month.
    pub actual_rent: Option<f64>,
    /// Street rent of the occupied units - actual rent: what the tenants in place pay under
    /// today's street rates, per month (negative when they pay above).
    pub rent_gap: Option<f64>,
    /// Rent gap / actual rent, percent (street against in-place rent, as in the ECRI report).
    pub rent_gap_pct: Option<f64>,
    /// Gross potential rent - actual rent: the loss to vacancy and to the rent gap, per month.
    pub revenue_gap: Option<f64>,
    /// Revenue gap / gross potential rent, percent.
    pub revenue_gap_pct: Option<f64>,
    /// Actual rent / gross potential rent, percent.
    pub economic_occupancy_pct: Option<f64>,
    /// Units counted.
    pub total_units: Option<i64>,
    /// Rentable square feet counted.
    pub rentable_sqft: Option<f64>,
    /// True when unit counts were estimated.
    pub units_estimated: bool,
    /// True when the area was estimated.
    pub rentable_sqft_estimated: bool,
    /// True when the actual rent was estimated (in whole or in part).
    pub actual_rent_estimated: bool,
    /// Occupied units whose rent was sent, percent; the rest was estimated. Null when unknown
    /// (occupied units not known, or a record stored before coverage was recorded).
    pub actual_rent_coverage_pct: Option<f64>,
}

pub fn revenue(f: &Figures) -> Revenue {
    let positive = |v: Option<f64>| v.filter(|x| *x > 0.0);
    let units = positive(f.total_units.map(|u| u as f64));
    let sqft = positive(f.rentable_sqft);
    let gpr = f.gross_potential_rent;
    let actual = f.actual_rent;
    let revenue_gap = gpr.zip(actual).map(|(g, a)| g - a);
    let rent_gap = f.occupied_potential_rent.zip(actual).map(|(p, a)| p - a);
    Revenue {
        revpau: actual.zip(units).map(|(a, u)| round2(a / u)),
        // Per square foot the figures are small (about 1 to 2 a month): four decimals.
        revpaf: actual.zip(sqft).map(|(a, s)| round4(a / s)),
        gross_potential_rent: gpr.map(round2),
        actual_rent: actual.map(round2),
        rent_gap: rent_gap.map(round2),
        rent_gap_pct: rent_gap
            .zip(positive(actual))
            .map(|(g, a)| round2(g / a * 100.0)),
        revenue_gap: revenue_gap.map(round2),
        revenue_gap_pct: revenue_gap
            .zip(positive(gpr))
            .map(|(g, p)| round2(g / p * 100.0)),
        economic_occupancy_pct: actual
            .zip(positive(gpr))
            .map(|(a, p)| round2(a / p * 100.0)),
        total_units: f.total_units,
        rentable_sqft: f.rentable_sqft,
        units_estimated: f.units_estimated,
        rentable_sqft_estimated: f.rentable_sqft_estimated,
        actual_rent_estimated: f.actual_rent_estimated,
        actual_rent_coverage_pct: f.actual_rent_coverage_pct,
    }
}

/// Sums figures over facilities (a company month, a portfolio). Only facilities with both a
/// unit count and an actual rent take part, so every ratio has numerator and denominator from
/// the same facilities; a total is estimated when any part was.
pub fn sum(all: &[Figures]) -> Figures {
    let all: Vec<&Figures> = all
        .iter()
        .filter(|f| f.total_units.is_some() && f.actual_rent.is_some())
        .collect();
    let opt_sum_i =
        |get: fn(&Figures) -> Option<i64>| all.iter().filter_map(|f| get(f)).reduce(|a, b| a + b);
    let opt_sum_f =
        |get: fn(&Figures) -> Option<f64>| all.iter().filter_map(|f| get(f)).reduce(|a, b| a + b);
    Figures {
        total_units: opt_sum_i(|f| f.total_units),
        occupied_units: opt_sum_i(|f| f.occupied_units),
        units_estimated: all.iter().any(|f| f.units_estimated),
        // Area only when every facility has one, so RevPAF is not inflated by missing areas.
        rentable_sqft: if all.iter().all(|f| f.rentable_sqft.is_some()) {
            opt_sum_f(|f| f.rentable_sqft)
        } else {
            None
        },
        rentable_sqft_estimated: all.iter().any(|f| f.rentable_sqft_estimated),
        gross_potential_rent: opt_sum_f(|f| f.gross_potential_rent),
        actual_rent: opt_sum_f(|f| f.actual_rent),
        actual_rent_estimated: all.iter().any(|f| f.actual_rent_estimated),
        // Weighted by occupied units; only when every facility has both.
        actual_rent_coverage_pct: all
            .iter()
            .map(|f| Some((f.actual_rent_coverage_pct?, f.occupied_units? as f64)))
            .collect::<Option<Vec<(f64, f64)>>>()
            .and_then(|parts| {
                let occupied: f64 = parts.iter().map(|p| p.1).sum();
                (occupied > 0.0)
                    .then(|| round2(parts.iter().map(|p| p.0 * p.1).sum::<f64>() / occupied))
            }),
        // Only when every facility has it, so the gap compares like with like.
        occupied_potential_rent: if all.iter().all(|f| f.occupied_potential_rent.is_some()) {
            opt_sum_f(|f| f.occupied_potential_rent)
        } else {
            None
        },
    }
}

/// Ranks best first: by RevPAF, then RevPAU; facilities without either come last.
pub fn rank_key(r: &Revenue) -> (u8, f64, f64) {
    match (r.revpaf, r.revpau) {
        (Some(f), u) => (0, -f, -u.unwrap_or(0.0)),
        (None, Some(u)) => (1, 0.0, -u),
        (None, None) => (2, 0.0, 0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        // 150 units, 7,500 sq ft, GPR 10,000, actual 8,115, street rent of the occupied units
        // 8,500: RevPAU 54.10, RevPAF 1.082, revenue gap 1,885 (18.85 % of GPR), rent gap 385
        // (385 / 8,115 = 4.74 % under street), economic occupancy 81.15 %.
        let r = revenue(&Figures {
            total_units: Some(150),
            occupied_units: Some(125),
            rentable_sqft: Some(7_500.0),
            rentable_sqft_estimated: true,
            gross_potential_rent: Some(10_000.0),
            actual_rent: Some(8_115.0),
            occupied_potential_rent: Some(8_500.0),
            ..Figures::default()
        });
        assert_eq!(r.revpau, Some(54.1));
        assert_eq!(r.revpaf, Some(1.082));
        assert_eq!(r.revenue_gap, Some(1_885.0));
        assert_eq!(r.revenue_gap_pct, Some(18.85));
        assert_eq!(r.rent_gap, Some(385.0));
        assert_eq!(r.rent_gap_pct, Some(4.74));
        assert_eq!(r.economic_occupancy_pct, Some(81.15));
        assert!(r.rentable_sqft_estimated);
        // Every tenant at exactly street: no rent gap, however much is vacant.
        let r = revenue(&Figures {
            total_units: Some(100),
            occupied_units: Some(80),
            gross_potential_rent: Some(10_000.0),
            actual_rent: Some(8_000.0),
            occupied_potential_rent: Some(8_000.0),
            ..Figures::default()
        });
        assert_eq!((r.rent_gap_pct, r.revenue_gap_pct), (Some(0.0), Some(20.0)));
    }

    #[test]
    fn missing_inputs_give_nulls_not_zeroes() {
        let r = revenue(&Figures {
            actual_rent: Some(100.0),
            total_units: Some(0),
            ..Figures::default()
        });
        assert_eq!((r.revpau, r.revpaf, r.rent_gap), (None, None, None));
    }

    #[test]
    fn sums_only_complete_facilities() {
        // A: 100 units, 8,000 rent, 10,000 sq ft; B: 50 units, 3,000 rent, 5,000 sq ft
        // (estimated); C has rent but no units: left out. RevPAU 11,000 / 150 = 73.33,
        // RevPAF 11,000 / 15,000 = 0.7333.
        let a = Figures {
            total_units: Some(100),
            actual_rent: Some(8_000.0),
            rentable_sqft: Some(10_000.0),
            ..Figures::default()
        };
        let b = Figures {
            total_units: Some(50),
            actual_rent: Some(3_000.0),
            rentable_sqft: Some(5_000.0),
            rentable_sqft_estimated: true,
            ..Figures::default()
        };
        let c = Figures {
            actual_rent: Some(9_999.0),
            ..Figures::default()
        };
        let r = revenue(&sum(&[a, b, c]));
        assert_eq!(r.revpau, Some(73.33));
        assert_eq!(r.revpaf, Some(0.7333));
        assert!(r.rentable_sqft_estimated);
    }

    #[test]
    fn ranking_prefers_revpaf_then_revpau() {
        let a = Revenue {
            revpaf: Some(1.2),
            revpau: Some(90.0),
            ..Revenue::default()
        };
        let b = Revenue {
            revpaf: Some(1.5),
            revpau: Some(80.0),
            ..Revenue::default()
        };
        let c = Revenue {
            revpau: Some(200.0),
            ..Revenue::default()
        };
        let mut v = [a.clone(), c.clone(), b.clone()];
        v.sort_by(|x, y| rank_key(x).partial_cmp(&rank_key(y)).unwrap());
        assert_eq!(v, [b, a, c]);
    }
}
