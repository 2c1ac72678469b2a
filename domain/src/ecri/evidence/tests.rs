use super::*;
use crate::ecri::stay::{learn, StayPrior};

fn d(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

/// A +10 % increase on 100, effective on `effective`, notice (if any) 30 days before.
fn record(effective: &str, notice: bool, moved_out: Option<&str>) -> IncreaseRecord {
    let effective = d(effective);
    IncreaseRecord {
        notice_date: notice.then(|| effective - chrono::Duration::days(30)),
        effective_date: effective,
        rent_before: 100.0,
        rent_after: 110.0,
        reference_rate: Some(100.0),
        moved_out_on: moved_out.map(d),
        months_since_move_in: Some(20.0),
        past_increases: 0,
        months_since_last_increase: None,
    }
}

#[test]
fn the_window_starts_at_the_notice_when_it_is_known() {
    // Notice 1 March, effective 31 March; left 20 March, during the notice.
    let left_in_notice = record("2026-03-31", true, Some("2026-03-20"));
    assert_eq!(
        judge(&left_in_notice, d("2026-06-01")),
        Ok((d("2026-03-01"), true)),
        "a move-out between notice and effective date is a reaction"
    );
    // Without the notice the same move-out precedes the window: not a reaction, left out.
    let unknown_notice = IncreaseRecord {
        notice_date: None,
        ..left_in_notice.clone()
    };
    assert_eq!(
        judge(&unknown_notice, d("2026-07-01")),
        Err(Skip::GoneBeforeNotice)
    );
    // A move-out 85 days after the notice is inside its window (30 + 55 after the effective
    // date), and 95 days after is not.
    let late = record("2026-03-31", true, Some("2026-05-25"));
    assert_eq!(judge(&late, d("2026-06-01")), Ok((d("2026-03-01"), true)));
    let later = record("2026-03-31", true, Some("2026-06-04"));
    assert_eq!(judge(&later, d("2026-06-10")), Ok((d("2026-03-01"), false)));
    // Without a notice, the window starts at the effective date: 95 days after the notice is
    // 65 days after the effective date, inside it.
    let by_effective = IncreaseRecord {
        notice_date: None,
        ..later.clone()
    };
    assert_eq!(
        judge(&by_effective, d("2026-07-01")),
        Ok((d("2026-03-31"), true))
    );
}

#[test]
fn a_window_counts_only_once_complete() {
    // Notice 1 March: complete on 30 May (1 March + 90 days), not the day before.
    let r = record("2026-03-31", true, None);
    assert_eq!(judge(&r, d("2026-05-29")), Err(Skip::Incomplete));
    assert_eq!(judge(&r, d("2026-05-30")), Ok((d("2026-03-01"), false)));
    // From the effective date: 29 June.
    let r = record("2026-03-31", false, None);
    assert_eq!(judge(&r, d("2026-06-28")), Err(Skip::Incomplete));
    assert_eq!(judge(&r, d("2026-06-29")), Ok((d("2026-03-31"), false)));
    let ev = increase_outcomes(
        &[
            record("2026-03-31", false, None),
            record("2026-03-31", true, None),
        ],
        d("2026-06-01"),
        Windows::Complete,
    );
    assert_eq!(ev.left_out.incomplete, 1);
    assert_eq!((ev.counted, ev.from_notices, ev.open), (1, 1, 0));
}

#[test]
fn an_open_window_counts_for_what_was_seen_of_it_in_steps() {
    // Notice 1 March, gone 20 March (19 days in).
    let r = record("2026-03-31", true, Some("2026-03-20"));
    // 8 days in: before the first step of 9 days.
    assert_eq!(judge_seen(&r, d("2026-03-09")), Err(Skip::Incomplete));
    // 18 days in: two steps seen (18 of 90 days), the move-out on day 19 not yet.
    assert_eq!(
        judge_seen(&r, d("2026-03-19")),
        Ok((d("2026-03-01"), false, 0.2))
    );
    // 26 days in: still two whole steps, so still not seen (the read stops at day 18).
    assert_eq!(
        judge_seen(&r, d("2026-03-27")),
        Ok((d("2026-03-01"), false, 0.2))
    );
    // 27 days in: three steps, the move-out seen.
    assert_eq!(
        judge_seen(&r, d("2026-03-28")),
        Ok((d("2026-03-01"), true, 0.3))
    );
    // Over: the whole window, and `judge` agrees.
    assert_eq!(
        judge_seen(&r, d("2026-05-30")),
        Ok((d("2026-03-01"), true, 1.0))
    );
    assert_eq!(judge(&r, d("2026-03-28")), Err(Skip::Incomplete));
    // Open windows are outcomes with their share unseen; the stop-loss's reading leaves them.
    let records = [r.clone(), record("2026-03-31", true, None)];
    let open = increase_outcomes(&records, d("2026-03-28"), Windows::Open);
    assert_eq!(
        (open.counted, open.open, open.left_out.incomplete),
        (2, 2, 0)
    );
    let tenants: u32 = open.outcomes.iter().map(|o| o.tenants).sum();
    let left: u32 = open.outcomes.iter().map(|o| o.moved_out).sum();
    assert_eq!((tenants, left), (2, 1));
    assert!(open
        .outcomes
        .iter()
        .all(|o| (o.open_share - 0.7).abs() < 1e-12 && (o.seen_share() - 0.3).abs() < 1e-12));
    let complete = increase_outcomes(&records, d("2026-03-28"), Windows::Complete);
    assert_eq!((complete.counted, complete.left_out.incomplete), (0, 2));
    // A cell keeps the tenths seen and gives them back.
    let o = open.outcomes[0];
    let back = cell_outcome(&cell(&o), o.tenants, o.moved_out);
    assert!((back.open_share - 0.7).abs() < 1e-12);
    assert_eq!(cell(&baseline_outcome(Some(2), 5, 1, 1.0)).6, 10);
    assert_eq!(cell(&baseline_outcome(Some(2), 5, 1, 0.44)).6, 4);
}

#[test]
fn implausible_rows_are_left_out_and_counted() {
    let base = record("2026-01-31", true, None);
    let cases = [
        (
            IncreaseRecord {
                rent_after: 1000.0,
                ..base.clone()
            },
            Skip::TooLarge,
        ),
        (
            IncreaseRecord {
                rent_before: 0.0,
                ..base.clone()
            },
            Skip::NonPositiveRent,
        ),
        (
            IncreaseRecord {
                rent_after: f64::NAN,
                ..base.clone()
            },
            Skip::NonPositiveRent,
        ),
        (
            IncreaseRecord {
                rent_after: 95.0,
                ..base.clone()
            },
            Skip::NotAnIncrease,
        ),
        (
            IncreaseRecord {
                reference_rate: Some(30.0),
                ..base.clone()
            },
            Skip::ImplausiblePremium,
        ),
        (
            IncreaseRecord {
                months_since_move_in: Some(0.4),
                ..base.clone()
            },
            Skip::AtMoveIn,
        ),
        (
            IncreaseRecord {
                months_since_move_in: Some(-5.0),
                ..base.clone()
            },
            Skip::AtMoveIn,
        ),
        (
            IncreaseRecord {
                notice_date: Some(d("2026-02-10")),
                ..base.clone()
            },
            Skip::InconsistentDates,
        ),
        (
            IncreaseRecord {
                notice_date: Some(d("2024-01-01")),
                ..base.clone()
            },
            Skip::InconsistentDates,
        ),
    ];
    let as_of = d("2026-12-31");
    for (r, why) in &cases {
        assert_eq!(judge(r, as_of), Err(*why), "{r:?}");
    }
    let mut records: Vec<IncreaseRecord> = cases.iter().map(|(r, _)| r.clone()).collect();
    records.push(base.clone());
    records.push(record("2026-12-01", true, None));
    let ev = increase_outcomes(&records, as_of, Windows::Complete);
    let l = ev.left_out;
    assert_eq!(
        (
            l.too_large,
            l.non_positive_rent,
            l.not_an_increase,
            l.implausible_premium,
            l.at_move_in,
            l.inconsistent_dates,
            l.incomplete
        ),
        (1, 2, 1, 1, 2, 2, 1)
    );
    assert_eq!(l.implausible(), 9);
    assert_eq!(ev.counted, 1);
    assert_eq!(ev.outcomes.len(), 1);
}

#[test]
fn alike_records_are_one_outcome_per_tenure_band_and_past_increases() {
    let as_of = d("2026-12-31");
    let mut records = Vec::new();
    for i in 0..10 {
        records.push(IncreaseRecord {
            // 13 to 22 months: one band (12-24), carried as 18.
            months_since_move_in: Some(13.0 + f64::from(i)),
            moved_out_on: (i < 3).then(|| d("2026-03-15")),
            ..record("2026-03-31", true, None)
        });
    }
    records.push(IncreaseRecord {
        past_increases: 5,
        ..record("2026-03-31", true, None)
    });
    records.push(IncreaseRecord {
        months_since_move_in: Some(50.0),
        ..record("2026-03-31", true, None)
    });
    let ev = increase_outcomes(&records, as_of, Windows::Complete);
    assert_eq!(ev.outcomes.len(), 3, "{:?}", ev.outcomes);
    let main = ev
        .outcomes
        .iter()
        .find(|o| o.tenants == 10)
        .expect("the ten alike");
    assert_eq!(main.moved_out, 3);
    assert_eq!(main.months_since_move_in, Some(18.0));
    assert!((main.increase_pct - 10.0).abs() < 1e-9);
    assert!((main.premium_pct - 10.0).abs() < 1e-9);
    let raised = ev.outcomes.iter().find(|o| o.past_increases > 0).unwrap();
    assert_eq!(raised.past_increases, PAST_INCREASES_CAP);
    assert!(ev
        .outcomes
        .iter()
        .any(|o| o.months_since_move_in == Some(72.0)));
    assert_eq!(tenure_band(2.9), 0);
    assert_eq!(tenure_band(3.0), 1);
    assert_eq!(tenure_band(100.0), 5);
}

/// Increases of 5-20 % at 0-30 % premium, the tenants leaving as the prior curve says (at
/// sensitivity 1), deterministic: a tenant leaves when its index falls under the share.
fn facility_records(n_per_cell: u32, facility: u32) -> Vec<IncreaseRecord> {
    let prior = StayPrior::default();
    let model = crate::ecri::StayModel::from_prior(&prior);
    let mut out = Vec::new();
    for (c, inc) in [5.0, 10.0, 15.0, 20.0].into_iter().enumerate() {
        for prem in [0.0, 15.0, 30.0] {
            let leave = 1.0 - model.stay_probability(inc, prem);
            for i in 0..n_per_cell {
                let after = 100.0 * (1.0 + inc / 100.0);
                let gone = (f64::from(i) + 0.5 + f64::from(facility + c as u32) * 0.37)
                    % f64::from(n_per_cell)
                    < leave * f64::from(n_per_cell);
                out.push(IncreaseRecord {
                    reference_rate: Some(after / (1.0 + prem / 100.0)),
                    rent_after: after,
                    moved_out_on: gone.then(|| d("2026-03-20")),
                    ..record("2026-03-31", true, None)
                });
            }
        }
    }
    out
}

#[test]
fn one_increase_of_900_pct_does_not_drag_the_learned_sensitivity() {
    // Documented tolerance: the sensitivities with the row within 0.01 of those without it
    // (the row is left out, so they are equal).
    let prior = StayPrior::default();
    let as_of = d("2026-12-31");
    let company: Vec<Outcome> = (1..6)
        .flat_map(|f| {
            increase_outcomes(&facility_records(20, f), as_of, Windows::Complete).outcomes
        })
        .collect();
    let clean = facility_records(20, 0);
    let mut dirty = clean.clone();
    dirty.push(IncreaseRecord {
        rent_after: 1000.0,
        ..record("2026-03-31", true, None)
    });
    let ev_dirty = increase_outcomes(&dirty, as_of, Windows::Complete);
    assert_eq!(ev_dirty.left_out.too_large, 1);
    let without = learn(
        &prior,
        &company,
        &increase_outcomes(&clean, as_of, Windows::Complete).outcomes,
    );
    let with = learn(&prior, &company, &ev_dirty.outcomes);
    assert!(
        (without.sensitivity - with.sensitivity).abs() < 0.01,
        "{} against {}",
        without.sensitivity,
        with.sensitivity
    );
    assert!(
        (0.7..1.4).contains(&with.sensitivity),
        "curve drawn at 1: {}",
        with.sensitivity
    );
    // The company fit of another facility, with the dirty facility among its others.
    let mut dirty_company = company.clone();
    dirty_company.extend(ev_dirty.outcomes.iter().copied());
    let mut clean_company = company.clone();
    clean_company.extend(increase_outcomes(&clean, as_of, Windows::Complete).outcomes);
    let other = increase_outcomes(&facility_records(20, 9), as_of, Windows::Complete).outcomes;
    let a = learn(&prior, &clean_company, &other);
    let b = learn(&prior, &dirty_company, &other);
    assert!((a.company_sensitivity - b.company_sensitivity).abs() < 0.01);
    assert!((a.sensitivity - b.sensitivity).abs() < 0.01);
    // And an outcome of +900 % given to `learn` directly is not counted either: without the
    // bound this single stay pulls the sensitivity far down.
    let mut raw = increase_outcomes(&clean, as_of, Windows::Complete).outcomes;
    raw.push(Outcome {
        increase_pct: 900.0,
        premium_pct: 0.0,
        tenants: 1,
        moved_out: 0,
        ..Outcome::default()
    });
    let direct = learn(&prior, &company, &raw);
    assert!((direct.sensitivity - without.sensitivity).abs() < 0.01);
}
