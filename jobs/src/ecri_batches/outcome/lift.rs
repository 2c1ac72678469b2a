//! The measured lift of the increased tenants over the held-out ones: revenue per tenant over
//! the window at the rents in force each day, the interval by `domain::ecri::lift` (Welch's t,
//! customers as clusters), and a verdict only on a complete window.

use super::follow::{revenue, Seen};
use super::Lift;
use chrono::NaiveDate;
use domain::ecri::lift::{estimate, verdict, welch, Verdict, MIN_CLUSTERS};
use domain::values::round2;

/// The lift from `start` (the effective date) to the roll's date `roll` or the window's
/// `last_day`, whichever comes first; complete once the roll reaches `last_day`.
pub(super) fn lift(
    increased: &[&Seen],
    controls: &[&Seen],
    start: NaiveDate,
    roll: NaiveDate,
    last_day: NaiveDate,
) -> Lift {
    let end = roll.min(last_day);
    let complete = roll >= last_day;
    let of = |group: &[&Seen]| {
        estimate(
            group
                .iter()
                .map(|t| (t.cluster.as_str(), revenue(t, start, end))),
        )
    };
    let (a, b) = (of(increased), of(controls));
    let interval = welch(&a, &b, 0.95);
    let v = verdict(&a, &b, interval.as_ref(), complete);
    let window_days = (end - start).num_days() + 1;
    let diff = a.mean - b.mean;
    let range = interval.map_or_else(
        || "no interval".to_owned(),
        |i| format!("95 % interval {:.2} to {:.2}", i.low, i.high),
    );
    let note = match v {
        Verdict::TooSmall => format!(
            "too few customers to tell: {} increased tenants of {} customers and {} held out of {} customers, at least {MIN_CLUSTERS} customers in each are needed",
            a.tenants, a.clusters, b.tenants, b.clusters
        ),
        Verdict::TooEarly => format!(
            "too early to tell: {window_days} of the window's {} days are in the roll ({diff:.2} per tenant so far, {range}); the verdict is given once the roll reaches {last_day}",
            (last_day - start).num_days() + 1
        ),
        Verdict::Positive => format!(
            "the increases earned {diff:.2} more per tenant over {window_days} days ({range})"
        ),
        Verdict::Negative => format!(
            "the increased tenants brought {:.2} less per tenant over {window_days} days ({range})",
            -diff
        ),
        Verdict::Inconclusive => format!(
            "the interval ({range} per tenant) includes no difference: the batch has not shown a lift"
        ),
    };
    Lift {
        increased_tenants: a.tenants,
        control_tenants: b.tenants,
        increased_clusters: a.clusters,
        control_clusters: b.clusters,
        window_days,
        window_complete: complete,
        increased_revenue_per_tenant: round2(a.mean),
        control_revenue_per_tenant: round2(b.mean),
        lift_per_tenant: round2(diff),
        lift_pct: (b.mean > 0.0).then(|| round2(diff / b.mean * 100.0)),
        ci_low: interval.map(|i| round2(i.low)),
        ci_high: interval.map(|i| round2(i.high)),
        degrees_of_freedom: interval.map(|i| (i.df * 100.0).round() / 100.0),
        t_quantile: interval.map(|i| (i.t * 10_000.0).round() / 10_000.0),
        verdict: v.as_str(),
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::super::follow::MONTH_DAYS;
    use super::*;
    use chrono::Duration;

    /// The window's last day: [`super::super::LIFT_DAYS`] after the effective date.
    fn last_day(start: NaiveDate) -> NaiveDate {
        start + Duration::days(super::super::LIFT_DAYS)
    }

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    /// `n` tenants of rent `rent` (plus 0 to 2), `gone` of them leaving on 2026-02-01, each
    /// its own customer unless `per_customer` units share one.
    fn tenants(rent: f64, n: usize, gone: usize, per_customer: usize) -> Vec<Seen> {
        (0..n)
            .map(|i| Seen {
                rent: rent + (i % 3) as f64,
                cluster: format!("c:{}", i / per_customer),
                rents: vec![(d("2025-12-01"), rent + (i % 3) as f64)],
                moved_out_on: (i < gone).then(|| d("2026-02-01")),
            })
            .collect()
    }

    fn refs(v: &[Seen]) -> Vec<&Seen> {
        v.iter().collect()
    }

    #[test]
    fn the_lift_says_when_it_cannot_tell_and_when_it_can() {
        let start = d("2026-01-01");
        let end = last_day(start);
        let inc = tenants(110.0, 40, 2, 1);
        let ctl = tenants(100.0, 40, 2, 1);
        let l = lift(&refs(&inc), &refs(&ctl), start, end, end);
        assert_eq!(l.verdict, "positive", "{l:?}");
        let (low, high) = (l.ci_low.unwrap(), l.ci_high.unwrap());
        assert!(low > 0.0 && low < l.lift_per_tenant && l.lift_per_tenant < high);
        assert_eq!(l.window_days, 91);
        assert!(l.window_complete);
        // Ten a month more on about three months, less the same move-outs in both groups.
        assert!(
            (l.lift_per_tenant - 10.0 * 91.0 / MONTH_DAYS).abs() < 1.5,
            "{l:?}"
        );
        // 40 singletons each: df near 78, t near 1.99 (not 1.96).
        let (df, t) = (l.degrees_of_freedom.unwrap(), l.t_quantile.unwrap());
        assert!(df > 70.0 && df < 78.0 + 1e-9, "{l:?}");
        assert!(t > 1.99 && t < 2.0, "{l:?}");
        // The same a month before the window's end: the interval, no verdict.
        let early = lift(&refs(&inc), &refs(&ctl), start, d("2026-03-02"), end);
        assert_eq!(early.verdict, "too_early", "{early:?}");
        assert_eq!(early.window_days, 61);
        assert!(!early.window_complete);
        assert!(early.ci_low.is_some());
        assert!(
            early.note.contains("61 of the window's 91 days"),
            "{}",
            early.note
        );
        // Five held-out customers: too small.
        let few = tenants(100.0, 5, 0, 1);
        let l = lift(&refs(&inc), &refs(&few), start, end, end);
        assert_eq!(l.verdict, "too_small");
        assert!(l.note.contains("5 held out of 5 customers"), "{}", l.note);
        // Increased tenants who leave far more: a negative lift.
        let fled = tenants(110.0, 40, 30, 1);
        let l = lift(&refs(&fled), &refs(&ctl), start, end, end);
        assert_eq!(l.verdict, "negative", "{l:?}");
    }

    #[test]
    fn a_customers_units_are_one_observation() {
        let start = d("2026-01-01");
        let end = last_day(start);
        // The same 40 tenants, in customers of four: ten customers each, wider interval, fewer
        // degrees of freedom.
        let (inc1, ctl1) = (tenants(110.0, 40, 8, 1), tenants(100.0, 40, 4, 1));
        let (inc4, ctl4) = (tenants(110.0, 40, 8, 4), tenants(100.0, 40, 4, 4));
        let one = lift(&refs(&inc1), &refs(&ctl1), start, end, end);
        let four = lift(&refs(&inc4), &refs(&ctl4), start, end, end);
        assert_eq!((four.increased_clusters, four.control_clusters), (10, 10));
        assert_eq!((one.increased_clusters, one.control_clusters), (40, 40));
        assert_eq!(one.lift_per_tenant, four.lift_per_tenant);
        assert!(four.degrees_of_freedom.unwrap() <= 18.0 + 1e-9, "{four:?}");
        assert!(
            four.ci_high.unwrap() - four.ci_low.unwrap()
                > one.ci_high.unwrap() - one.ci_low.unwrap()
        );
    }
}
