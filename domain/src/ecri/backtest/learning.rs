//! What the engine learns from, built as the service builds it: each notice becomes the record
//! the service keeps of an increase (notice date, effective date, rents, the reference rate of
//! the day, the move-out date the roll shows, tenure, past increases) and goes through
//! `evidence::increase_outcomes`, the function the service's learning calls; the tenants not
//! increased are one 90-day window before the day, as the service counts them. Nothing here
//! reads the hidden reaction.
//!
//! Days are mapped to dates from a fixed base: day 0 is `pricing::backtest::start_date()`
//! (1 January 2026).

use super::facility::Facility;
use super::OUTCOME_DAYS;
use crate::ecri::evidence::{
    baseline_outcome, increase_outcomes, tenure_band, IncreaseRecord, Windows,
};
use crate::ecri::{learn, EcriEngineSettings, Outcome, StayModel};
use crate::pricing::backtest::start_date;
use chrono::NaiveDate;
use std::collections::{BTreeMap, BTreeSet};

/// Days the stop-loss looks back over: increases whose notice is within them.
pub const RECENT_DAYS: i32 = 180;
/// Tenure bands of [`tenure_band`].
const BANDS: usize = 6;

/// The date of a day of the run.
pub fn date_of(day: i32) -> NaiveDate {
    start_date() + chrono::Duration::days(i64::from(day))
}

/// A facility's evidence on a day: every outcome known, and the recent ones the stop-loss sees.
#[derive(Debug, Clone, Default)]
pub(super) struct Known {
    pub(super) all: Vec<Outcome>,
    pub(super) recent: Vec<Outcome>,
}

impl Facility {
    /// The service's records of the notices given from `since` (a day) on.
    pub(super) fn increase_records(&self, since: i32) -> Vec<IncreaseRecord> {
        let from = self.notices.partition_point(|n| n.day < since);
        self.notices[from..]
            .iter()
            .map(|n| IncreaseRecord {
                notice_date: Some(date_of(n.day)),
                effective_date: date_of(n.effective),
                rent_before: n.rent_before,
                rent_after: n.rent_after,
                reference_rate: Some(n.reference),
                moved_out_on: self.sizes[n.size].left_on[n.serial as usize].map(date_of),
                months_since_move_in: Some(n.months_since_move_in),
                past_increases: n.past_increases,
                months_since_last_increase: n.months_since_last_increase,
            })
            .collect()
    }

    /// The tenants not increased, as the service counts them on `day`: those in place 90 days
    /// before that no notice's 90 days (or effective date) reached into yet, each watched
    /// until it moved out, was given a notice or the window ended, and how many left while
    /// watched, by tenure band (months since move-in at the window's start) and tenths of the
    /// window watched. The service's query counts them the same way.
    pub(super) fn baseline(&self, day: i32) -> Vec<Outcome> {
        let start = day - OUTCOME_DAYS;
        let mut in_window: BTreeSet<(usize, u32)> = BTreeSet::new();
        let mut first_notice: BTreeMap<(usize, u32), i32> = BTreeMap::new();
        for n in self.notices.iter().filter(|n| n.day <= day) {
            if n.day <= start {
                if (n.day + OUTCOME_DAYS).max(n.effective) > start {
                    in_window.insert((n.size, n.serial));
                }
            } else {
                first_notice.entry((n.size, n.serial)).or_insert(n.day);
            }
        }
        let mut counts: BTreeMap<(usize, u8), (u32, u32)> = BTreeMap::new();
        for (i, s) in self.sizes.iter().enumerate() {
            for (serial, (&moved_in, &left)) in s.moved_in.iter().zip(&s.left_on).enumerate() {
                let key = (i, serial as u32);
                let in_place = moved_in <= start && left.is_none_or(|d| d > start);
                if !in_place || in_window.contains(&key) {
                    continue;
                }
                // A move-out on its notice's day or after is that notice's outcome.
                let notice = first_notice.get(&key).copied();
                let until = notice.unwrap_or(day);
                let gone = left.filter(|&d| d < until || (notice.is_none() && d <= day));
                let watched = f64::from(gone.unwrap_or(until) - start) / f64::from(OUTCOME_DAYS);
                let band = tenure_band(f64::from(start - moved_in) / super::MONTH_DAYS);
                let tenths = (watched.clamp(0.0, 1.0) * 10.0).round() as u8;
                let c = counts.entry((band.min(BANDS - 1), tenths)).or_default();
                c.0 += 1;
                c.1 += u32::from(gone.is_some());
            }
        }
        counts
            .into_iter()
            .map(|((band, tenths), (tenants, left))| {
                baseline_outcome(Some(band), tenants, left, f64::from(tenths) / 10.0)
            })
            .collect()
    }

    /// The evidence known on `day`.
    pub(super) fn known(&self, day: i32) -> Known {
        let as_of = date_of(day);
        let baseline = self.baseline(day);
        let all =
            increase_outcomes(&self.increase_records(i32::MIN), as_of, Windows::Open).outcomes;
        let recent = increase_outcomes(
            &self.increase_records(day - RECENT_DAYS),
            as_of,
            Windows::Complete,
        )
        .outcomes;
        Known {
            all: [all, baseline.clone()].concat(),
            recent: [recent, baseline].concat(),
        }
    }
}

/// Each facility's stay model and recent outcomes on `day`: learned from its own outcomes, with
/// the other facilities' as the company's evidence.
pub(super) fn learn_company(
    company: &[Facility],
    settings: &EcriEngineSettings,
    day: i32,
) -> Vec<(StayModel, Vec<Outcome>)> {
    let known: Vec<Known> = company.iter().map(|f| f.known(day)).collect();
    (0..company.len())
        .map(|i| {
            let others: Vec<Outcome> = known
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .flat_map(|(_, k)| k.all.iter().copied())
                .collect();
            let model = learn(&settings.stay_prior, &others, &known[i].all);
            (model, known[i].recent.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecri::backtest::{Family, Years};
    use crate::pricing::backtest::market::SCENARIOS;

    #[test]
    fn a_notice_is_learned_from_its_record_and_a_tenant_leaving_during_it_is_no_baseline() {
        let mut f = Facility::new(&SCENARIOS[0], 0, 1, Family::Hazard, Years::ONE);
        let in_place: u32 = f.sizes.iter().map(|s| s.roll.len() as u32).sum();
        // The size's first tenant: +10 % on day 0 with 30 days' notice, gone on day 10.
        let (rent, serial) = (f.sizes[0].roll[0].rent, f.sizes[0].roll[0].serial);
        f.notify(0, 0, 0, (rent * 1.1).round(), 30, None);
        f.sizes[0].left_on[serial as usize] = Some(10);
        let records = f.increase_records(i32::MIN);
        assert_eq!(records.len(), 1);
        let r = &records[0];
        assert_eq!(r.notice_date, Some(date_of(0)));
        assert_eq!(r.effective_date, date_of(30));
        assert_eq!(r.moved_out_on, Some(date_of(10)));
        assert_eq!((r.rent_before, r.rent_after), (rent, (rent * 1.1).round()));
        assert_eq!(date_of(0), NaiveDate::from_ymd_opt(2026, 1, 1).unwrap());
        // Its window is not over on day 89: the increase is known from the open window, for the
        // 81 days (9 steps of 9) seen, the move-out on day 10 among them.
        let open: Vec<Outcome> = f
            .known(89)
            .all
            .into_iter()
            .filter(|o| o.increased())
            .collect();
        assert_eq!(open.len(), 1);
        assert_eq!((open[0].tenants, open[0].moved_out), (1, 1));
        assert!((open[0].seen_share() - 0.9).abs() < 1e-12);
        // The stop-loss reads whole windows only.
        assert!(f.known(89).recent.iter().all(|o| !o.increased()));
        let known = f.known(90);
        let increased: Vec<&Outcome> = known.all.iter().filter(|o| o.increased()).collect();
        assert_eq!(increased.len(), 1);
        assert_eq!((increased[0].tenants, increased[0].moved_out), (1, 1));
        assert!(
            (increased[0].increase_pct - ((rent * 1.1).round() / rent - 1.0) * 100.0).abs() < 1e-9
        );
        // The tenants not increased: all in place on day 0 but the one given notice.
        let baseline: u32 = known
            .all
            .iter()
            .filter(|o| !o.increased())
            .map(|o| o.tenants)
            .sum();
        assert_eq!(baseline, in_place - 1);
        assert_eq!(known.recent.len(), known.all.len());
        // 180 days on, the notice is no longer recent but still learned from.
        let later = f.known(181);
        assert!(later.recent.iter().all(|o| !o.increased()));
        assert!(later.all.iter().any(|o| o.increased()));
    }
}
