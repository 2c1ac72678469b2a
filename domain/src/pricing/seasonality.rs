//! Move-in seasonality: a 12-month index (average 1.0) of move-in pace.

/// The national prior used for months without enough own history: weakest in January, peak in
/// June and July (a swing of about 30 % in move-in pace, which shows up as roughly 13 % in rent
/// collected). Index by month number - 1; the twelve values average exactly 1.0.
pub const NATIONAL_PRIOR: [f64; 12] = [
    0.85, 0.88, 0.97, 1.03, 1.10, 1.15, 1.14, 1.08, 0.98, 0.95, 0.92, 0.95,
];

/// A month's reading of the profile and where it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeasonalIndex {
    pub index: f64,
    /// True when the facility's own history gave the profile; false when it is the prior.
    pub own_data: bool,
}

/// The profile from move-ins per calendar month (sum over the years seen, and how many years
/// of each month are present). A month counts as own data with at least one full month of
/// history; the profile is used only when at least `min_months` months are own data, otherwise
/// the prior is returned whole. Own months are scaled so that the twelve values average 1.0,
/// with the prior standing in for missing months.
pub fn profile(move_ins: &[(u32, f64, u32)], min_months: usize) -> ([f64; 12], usize) {
    // (month 1..=12, total move-ins, months observed)
    let mut avg = [None::<f64>; 12];
    for &(m, total, n) in move_ins {
        if (1..=12).contains(&m) && n > 0 && total.is_finite() && total >= 0.0 {
            avg[m as usize - 1] = Some(total / n as f64);
        }
    }
    let own = avg.iter().filter(|a| a.is_some()).count();
    let own_mean = {
        let vals: Vec<f64> = avg.iter().flatten().copied().collect();
        if vals.is_empty() {
            0.0
        } else {
            vals.iter().sum::<f64>() / vals.len() as f64
        }
    };
    if own < min_months || own_mean <= 0.0 {
        return (NATIONAL_PRIOR, 0);
    }
    // Own months relative to their mean, rescaled to the prior's level over the same months so
    // missing months (prior) and own months sit on one scale.
    let prior_mean_same: f64 = avg
        .iter()
        .zip(NATIONAL_PRIOR)
        .filter(|(a, _)| a.is_some())
        .map(|(_, p)| p)
        .sum::<f64>()
        / own as f64;
    let mut out = [0.0; 12];
    for i in 0..12 {
        out[i] = match avg[i] {
            Some(a) => a / own_mean * prior_mean_same,
            None => NATIONAL_PRIOR[i],
        };
    }
    let mean = out.iter().sum::<f64>() / 12.0;
    if mean > 0.0 {
        out.iter_mut().for_each(|v| *v /= mean);
    }
    (out, own)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prior_averages_one() {
        let mean = NATIONAL_PRIOR.iter().sum::<f64>() / 12.0;
        assert!((mean - 1.0).abs() < 1e-9);
    }

    #[test]
    fn thin_history_falls_back_to_the_prior() {
        let (p, own) = profile(&[(1, 10.0, 1), (2, 20.0, 1)], 6);
        assert_eq!((p, own), (NATIONAL_PRIOR, 0));
    }

    #[test]
    fn a_full_year_of_own_data_is_its_own_profile() {
        // Twice the move-ins in June as in every other month: June = 2 x the others; the
        // profile averages 1: others = 12 / 13, June = 24 / 13.
        let data: Vec<(u32, f64, u32)> = (1..=12)
            .map(|m| (m, if m == 6 { 20.0 } else { 10.0 }, 1))
            .collect();
        let (p, own) = profile(&data, 6);
        assert_eq!(own, 12);
        assert!((p[5] - 24.0 / 13.0).abs() < 1e-9, "{p:?}");
        assert!((p[0] - 12.0 / 13.0).abs() < 1e-9);
        assert!((p.iter().sum::<f64>() / 12.0 - 1.0).abs() < 1e-9);
    }
}
