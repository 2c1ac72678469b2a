//! Move-in seasonality: a 12-month index (average 1.0) of move-in pace, learned from a
//! facility's own move-ins and shrunk toward the national prior.

/// The national prior used for months without enough own history: weakest in January, peak in
/// June and July (a swing of about 30 % in move-in pace, which shows up as roughly 13 % in rent
/// collected). Index by month number - 1; the twelve values average exactly 1.0.
pub const NATIONAL_PRIOR: [f64; 12] = [
    0.85, 0.88, 0.97, 1.03, 1.10, 1.15, 1.14, 1.08, 0.98, 0.95, 0.92, 0.95,
];

/// The full months of own history, over every calendar month, below which the prior is used
/// unchanged: one month says nothing of a season (only its level against itself).
pub const MIN_FULL_MONTHS: u32 = 2;

/// The move-ins of a calendar month (over every year of it seen) at which its own reading
/// weighs as much as the prior: w = n / (n + k) with n those move-ins. A month's count of
/// move-ins is about Poisson, so its own reading is off by about 1 / sqrt(n) of itself; at
/// k = 40 that is 16 %, about how far a market's season lies from the national prior (a
/// sun-belt market peaks in winter, a college town fills in May), so below k move-ins the
/// prior is the better guess and above it the facility's own months are.
pub const SEASON_EVIDENCE_MOVE_INS: f64 = 40.0;

/// A month's reading of the profile and where it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeasonalIndex {
    pub index: f64,
    /// True when the facility's own history gave the profile; false when it is the prior.
    pub own_data: bool,
}

/// The season learned from a facility's own move-ins.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Learned {
    /// The twelve indices (January first), averaging 1.0.
    pub profile: [f64; 12],
    /// Calendar months with at least one full month of history.
    pub own_months: usize,
    /// Full months of history counted, over every calendar month and year.
    pub full_months: u32,
}

impl Learned {
    /// The index of a month (0 for January), and whether own history gave it.
    pub fn index(&self, month0: u32) -> SeasonalIndex {
        SeasonalIndex {
            index: self.profile[month0 as usize % 12],
            own_data: self.full_months >= MIN_FULL_MONTHS,
        }
    }
}

/// The season from move-ins per calendar month: `(month 1..=12, move-ins summed over its full
/// months, full months of it seen)`. Each month's own reading is its mean move-ins over the
/// mean of the months seen, scaled to the prior's level over the same months (so a facility
/// seen only in its summer does not read its summer as average); it is shrunk toward the prior
/// with the weight n / (n + [`SEASON_EVIDENCE_MOVE_INS`]), n the month's move-ins; months not
/// seen keep the prior; the twelve are then scaled to average 1. With fewer than
/// [`MIN_FULL_MONTHS`] full months, or no move-in at all, the prior unchanged.
pub fn learn(move_ins: &[(u32, f64, u32)]) -> Learned {
    let mut seen = [(0.0f64, 0u32); 12];
    for &(m, total, n) in move_ins {
        if (1..=12).contains(&m) && n > 0 && total.is_finite() && total >= 0.0 {
            let s = &mut seen[m as usize - 1];
            *s = (s.0 + total, s.1 + n);
        }
    }
    let full_months: u32 = seen.iter().map(|s| s.1).sum();
    let own: Vec<usize> = (0..12).filter(|&i| seen[i].1 > 0).collect();
    let mean_of =
        |f: &dyn Fn(usize) -> f64| own.iter().map(|&i| f(i)).sum::<f64>() / own.len() as f64;
    let prior = Learned {
        profile: NATIONAL_PRIOR,
        own_months: 0,
        full_months,
    };
    if full_months < MIN_FULL_MONTHS {
        return prior;
    }
    let avg = |i: usize| seen[i].0 / f64::from(seen[i].1);
    let own_mean = mean_of(&avg);
    if own_mean <= 0.0 {
        return prior;
    }
    let prior_mean_same = mean_of(&|i| NATIONAL_PRIOR[i]);
    let mut profile = NATIONAL_PRIOR;
    for &i in &own {
        let reading = avg(i) / own_mean * prior_mean_same;
        let w = seen[i].0 / (seen[i].0 + SEASON_EVIDENCE_MOVE_INS);
        profile[i] = w * reading + (1.0 - w) * NATIONAL_PRIOR[i];
    }
    let mean = profile.iter().sum::<f64>() / 12.0;
    profile.iter_mut().for_each(|v| *v /= mean);
    Learned {
        profile,
        own_months: own.len(),
        full_months,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64; 12], b: &[f64; 12]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 5e-5)
    }

    #[test]
    fn prior_averages_one() {
        let mean = NATIONAL_PRIOR.iter().sum::<f64>() / 12.0;
        assert!((mean - 1.0).abs() < 1e-9);
    }

    #[test]
    fn one_month_of_history_stays_on_the_prior() {
        let one = learn(&[(3, 25.0, 1)]);
        assert_eq!(one.profile, NATIONAL_PRIOR);
        assert_eq!((one.own_months, one.full_months), (0, 1));
        assert_eq!(
            one.index(2),
            SeasonalIndex {
                index: 0.97,
                own_data: false
            }
        );
        // Nothing at all, or months without a move-in: the prior too.
        assert_eq!(learn(&[]).profile, NATIONAL_PRIOR);
        assert_eq!(learn(&[(1, 0.0, 1), (2, 0.0, 1)]).profile, NATIONAL_PRIOR);
    }

    #[test]
    fn a_history_peaking_in_december_learns_a_december_peak() {
        // Two years: 30 move-ins in every month, 60 in December. Own readings (all months
        // seen, the prior's mean over them 1): 30 / 32.5 = 0.923, December 1.846; weights
        // 60 / 100 = 0.6 and 120 / 160 = 0.75; January 0.6 x 0.923 + 0.4 x 0.85 = 0.894,
        // December 0.75 x 1.846 + 0.25 x 0.95 = 1.622, the twelve scaled by their mean, 1.011.
        let data: Vec<(u32, f64, u32)> = (1..=12)
            .map(|m| (m, if m == 12 { 120.0 } else { 60.0 }, 2))
            .collect();
        let l = learn(&data);
        let expected = [
            0.8839, 0.8958, 0.9314, 0.9551, 0.9828, 1.0026, 0.9987, 0.9749, 0.9354, 0.9235, 0.9116,
            1.6041,
        ];
        assert!(close(&l.profile, &expected), "{:?}", l.profile);
        assert_eq!((l.own_months, l.full_months), (12, 24));
        let peak = (0..12).max_by(|&a, &b| l.profile[a].total_cmp(&l.profile[b]));
        assert_eq!(peak, Some(11));
        assert!(l.index(11).own_data);
        assert!((l.profile.iter().sum::<f64>() / 12.0 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn more_evidence_moves_further_from_the_prior() {
        // The same shape seen for one year and for four: a flat season (equal move-ins every
        // month) pulls June (prior 1.15) toward 1, the more the longer it is seen.
        let flat = |years: u32| -> Vec<(u32, f64, u32)> {
            (1..=12)
                .map(|m| (m, 20.0 * f64::from(years), years))
                .collect()
        };
        let (one, four) = (learn(&flat(1)), learn(&flat(4)));
        assert!(one.profile[5] < 1.15 && four.profile[5] < one.profile[5]);
        // 20 move-ins weigh 1/3, 80 weigh 2/3: June 1/3 + 2/3 x 1.15 = 1.1 and
        // 2/3 + 1/3 x 1.15 = 1.05 (the prior averages 1, so no rescaling).
        assert!((one.profile[5] - 1.1).abs() < 1e-9, "{:?}", one.profile);
        assert!((four.profile[5] - 1.05).abs() < 1e-9, "{:?}", four.profile);
    }

    #[test]
    fn months_not_seen_keep_the_prior_and_seen_ones_read_against_the_priors_level() {
        // Only June and July seen, with the prior's own ratio between them (1.15 : 1.14):
        // each reads its prior value exactly, whatever the weight, so nothing moves.
        let l = learn(&[(6, 115.0, 1), (7, 114.0, 1)]);
        assert!(close(&l.profile, &NATIONAL_PRIOR), "{:?}", l.profile);
        assert_eq!(l.own_months, 2);
    }
}
