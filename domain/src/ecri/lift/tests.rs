use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() < tol
}

#[test]
fn the_t_quantile_matches_the_tables() {
    // Student's t, 97.5 % quantile (the multiplier of a 95 % interval).
    for (df, q) in [
        (1.0, 12.706_205),
        (2.0, 4.302_653),
        (4.0, 2.776_445),
        (10.0, 2.228_139),
        (30.0, 2.042_272),
        (1000.0, 1.962_339),
    ] {
        let t = t_quantile(0.975, df);
        assert!(close(t, q, 5e-6), "df {df}: {t} against {q}");
        assert!(close(t_cdf(t, df), 0.975, 1e-9));
        assert!(close(t_quantile(0.025, df), -q, 5e-6));
    }
    assert_eq!(t_quantile(0.5, 7.0), 0.0);
    assert!(close(t_cdf(0.0, 3.3), 0.5, 1e-12));
}

#[test]
fn welch_on_a_worked_example() {
    // Increased: 10, 12, 14, 16, each its own customer: mean 13, sample variance 20/3, variance
    // of the mean 5/3. Held out: 8, 9, 10: mean 9, variance 1, variance of the mean 1/3.
    let a = estimate([("a", 10.0), ("b", 12.0), ("c", 14.0), ("d", 16.0)]);
    let b = estimate([("e", 8.0), ("f", 9.0), ("g", 10.0)]);
    assert_eq!((a.tenants, a.clusters), (4, 4));
    assert!(close(a.mean, 13.0, 1e-12) && close(a.var_of_mean, 5.0 / 3.0, 1e-12));
    assert!(close(b.mean, 9.0, 1e-12) && close(b.var_of_mean, 1.0 / 3.0, 1e-12));
    let i = welch(&a, &b, 0.95).unwrap();
    // se = sqrt(5/3 + 1/3) = sqrt 2; df = 2^2 / ((5/3)^2 / 3 + (1/3)^2 / 2) = 4 / (25/27 + 1/18)
    // = 216 / 53 = 4.0755; t(0.975, 4.0755) = 2.756285 (by numerical integration of the
    // density, independently of this code).
    assert!(close(i.diff, 4.0, 1e-12));
    assert!(close(i.se, 2f64.sqrt(), 1e-12));
    assert!(close(i.df, 216.0 / 53.0, 1e-12), "{i:?}");
    assert!(close(i.t, 2.756_285, 2e-6), "{i:?}");
    assert!(close(i.low, 4.0 - 2.756_285 * 2f64.sqrt(), 1e-5));
    assert!(close(i.high, 4.0 + 2.756_285 * 2f64.sqrt(), 1e-5));
    // 1.96 would have been 4 +- 2.77, this is 4 +- 3.90.
    assert!(i.low < 4.0 - 3.89 && i.low > 4.0 - 3.91, "{i:?}");
}

#[test]
fn a_customers_units_count_as_one_observation() {
    // Customer X holds two units (10 and 14), Y one (12), Z one (16): 4 tenants, 3 customers,
    // mean 52 / 4 = 13. Each customer's total less 13 times its units: 24 - 26 = -2, 12 - 13 =
    // -1, 16 - 13 = 3; squares 14; variance of the mean 3/2 x 14 / 4^2 = 1.3125.
    let a = estimate([("X", 10.0), ("Y", 12.0), ("X", 14.0), ("Z", 16.0)]);
    assert_eq!((a.tenants, a.clusters), (4, 3));
    assert!(close(a.mean, 13.0, 1e-12));
    assert!(close(a.var_of_mean, 1.3125, 1e-12), "{a:?}");
    let b = estimate([("e", 8.0), ("f", 9.0), ("g", 10.0)]);
    let i = welch(&a, &b, 0.95).unwrap();
    // df = (1.3125 + 1/3)^2 / (1.3125^2 / 2 + (1/3)^2 / 2) = 2.954320; t = 3.210466.
    assert!(close(i.df, 2.954_319_5, 1e-6), "{i:?}");
    assert!(close(i.t, 3.210_466, 2e-6), "{i:?}");
    let se = (1.3125f64 + 1.0 / 3.0).sqrt();
    assert!(close(i.low, 4.0 - 3.210_466 * se, 1e-5));
    // One customer is no sample: no interval.
    let one = estimate([("X", 10.0), ("X", 12.0)]);
    assert_eq!(one.clusters, 1);
    assert!(welch(&one, &b, 0.95).is_none());
}

#[test]
fn the_verdict_waits_for_a_complete_window_and_enough_customers() {
    let group = |n: usize, shift: f64| estimate((0..n).map(|i| (i, shift + (i % 4) as f64)));
    let (a, b) = (group(12, 20.0), group(12, 10.0));
    let i = welch(&a, &b, 0.95).unwrap();
    assert!(i.low > 0.0);
    assert_eq!(verdict(&a, &b, Some(&i), true), Verdict::Positive);
    assert_eq!(verdict(&a, &b, Some(&i), false), Verdict::TooEarly);
    let i = welch(&b, &a, 0.95).unwrap();
    assert_eq!(verdict(&b, &a, Some(&i), true), Verdict::Negative);
    let (c, d) = (group(12, 10.2), group(12, 10.0));
    let i = welch(&c, &d, 0.95).unwrap();
    assert_eq!(verdict(&c, &d, Some(&i), true), Verdict::Inconclusive);
    // Nine customers (eighteen tenants): too small, complete or not.
    let few = estimate((0..18).map(|i| (i / 2, 5.0 + i as f64)));
    assert_eq!((few.tenants, few.clusters), (18, 9));
    let i = welch(&a, &few, 0.95).unwrap();
    assert_eq!(verdict(&a, &few, Some(&i), true), Verdict::TooSmall);
    assert_eq!(verdict(&a, &few, Some(&i), false), Verdict::TooSmall);
    assert_eq!(Verdict::TooEarly.as_str(), "too_early");
}

/// A simulated batch's revenue per tenant over 91 days: `customers` customers of one to three
/// units (mostly one), each with one rent for all its units (80 to 160 a month, times
/// `raise`), each leaving with all its units with chance `leave`, on a day drawn evenly from
/// the window. Returns (customer, revenue) per tenant.
fn simulated(rng: &mut StdRng, customers: usize, raise: f64, leave: f64) -> Vec<(usize, f64)> {
    const MONTH: f64 = 365.25 / 12.0;
    let mut out = Vec::new();
    for c in 0..customers {
        let units = [1, 1, 1, 2, 3][rng.gen_range(0..5)];
        let rent = rng.gen_range(80.0..160.0) * raise;
        let days = if rng.gen_bool(leave) {
            f64::from(rng.gen_range(0..=90))
        } else {
            91.0
        };
        for _ in 0..units {
            out.push((c, rent * days / MONTH));
        }
    }
    out
}

/// Over `runs` simulated batches with a known true lift, the share of 95 % intervals that hold
/// it; `clustered` false reads every tenant as independent (the error the customers fix).
fn coverage(seed: u64, runs: usize, clustered: bool) -> f64 {
    const MONTH: f64 = 365.25 / 12.0;
    let (raise, leave_a, leave_b) = (1.10, 0.12, 0.06);
    let days = |q: f64| (1.0 - q) * 91.0 + q * 45.0;
    let truth = (120.0 * raise * days(leave_a) - 120.0 * days(leave_b)) / MONTH;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut held = 0;
    for _ in 0..runs {
        let a = simulated(&mut rng, 30, raise, leave_a);
        let b = simulated(&mut rng, 25, 1.0, leave_b);
        let key = |(i, (c, y)): (usize, (usize, f64))| (if clustered { c } else { i }, y);
        let ea = estimate(a.into_iter().enumerate().map(key));
        let eb = estimate(b.into_iter().enumerate().map(key));
        let i = welch(&ea, &eb, 0.95).unwrap();
        held += usize::from(i.low <= truth && truth <= i.high);
    }
    held as f64 / runs as f64
}

#[test]
fn the_interval_holds_the_true_lift_about_95_times_in_100() {
    let share = coverage(20_261_128, 2_000, true);
    assert!((0.93..=0.97).contains(&share), "coverage {share}");
}

#[test]
fn reading_a_customers_units_as_independent_would_not() {
    // The same batches read tenant by tenant: the interval is too narrow.
    let share = coverage(20_261_128, 2_000, false);
    assert!(share < 0.90, "coverage {share}");
}
