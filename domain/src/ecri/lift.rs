//! The lift of an ECRI batch against its held-out tenants: what the increased tenants brought
//! per tenant less what the held-out ones brought, with a 95 % interval that a statistician
//! would sign.
//!
//! - Customers are the clusters. The holdout draws a customer's units together, so the units
//!   of one customer are not independent observations: they share the rent decision, and they
//!   mostly leave together. Each group's revenue per tenant is the ratio of its total revenue
//!   to its tenants (the per-tenant mean the outcome reports); its variance is taken at the
//!   customer level (the linearised, "sandwich" variance of a ratio estimator: each customer's
//!   revenue less the mean times its units, squared, with the k / (k - 1) correction). With
//!   every customer holding one unit it is the ordinary variance of a mean. A tenant without a
//!   customer id is a customer of its own.
//! - The interval is Welch's: the two groups' variances are not pooled, the degrees of freedom
//!   are Welch-Satterthwaite's with the customers (not the tenants) as each group's sample, and
//!   the multiplier is Student's t quantile for them, not 1.96. With 10 customers in each group
//!   the multiplier is near 2.1, with 5 near 2.3: 1.96 would be too narrow on small batches.
//! - Why this and not a cluster bootstrap: the bootstrap needs many more customers than a
//!   facility's batch has to be right, and is not deterministic without a seed kept with the
//!   answer; the t interval is the same every time it is read. Its coverage is checked by
//!   simulation in the tests (clustered customers, skewed revenue, a known true lift).
//!
//! Pure: values in, values out. The t distribution is `statrs`'s, checked against tabled
//! quantiles in the tests.

use statrs::distribution::{ContinuousCDF, StudentsT};
use std::collections::BTreeMap;

/// Customers (clusters) each group needs before the lift is read as telling anything.
pub const MIN_CLUSTERS: usize = 10;

/// One group's revenue per tenant, with customers as clusters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupEstimate {
    pub tenants: usize,
    /// Customers (a tenant without a customer id counts as one).
    pub clusters: usize,
    /// Revenue per tenant: the group's total over its tenants.
    pub mean: f64,
    /// The variance of `mean`, from the customers' totals (0 with under two customers).
    pub var_of_mean: f64,
}

/// The group's estimate from (cluster key, one tenant's revenue) pairs.
pub fn estimate<K: Ord>(tenants: impl IntoIterator<Item = (K, f64)>) -> GroupEstimate {
    let mut clusters: BTreeMap<K, (f64, f64)> = BTreeMap::new();
    for (k, y) in tenants {
        let c = clusters.entry(k).or_insert((0.0, 0.0));
        c.0 += y;
        c.1 += 1.0;
    }
    let n: f64 = clusters.values().map(|c| c.1).sum();
    let total: f64 = clusters.values().map(|c| c.0).sum();
    let k = clusters.len();
    let mean = if n > 0.0 { total / n } else { 0.0 };
    let var_of_mean = if k >= 2 {
        let kf = k as f64;
        let ss: f64 = clusters.values().map(|(y, m)| (y - mean * m).powi(2)).sum();
        kf / (kf - 1.0) * ss / (n * n)
    } else {
        0.0
    };
    GroupEstimate {
        tenants: n as usize,
        clusters: k,
        mean,
        var_of_mean,
    }
}

/// The difference of two groups' means with its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// `a.mean - b.mean`.
    pub diff: f64,
    pub se: f64,
    /// Welch-Satterthwaite degrees of freedom (customers as the sample).
    pub df: f64,
    /// Student's t quantile for the level and `df`.
    pub t: f64,
    pub low: f64,
    pub high: f64,
}

/// Welch's interval of `a.mean - b.mean` at `level` (0.95 for 95 %); none when either group
/// has under two customers (no variance can be read from one).
pub fn welch(a: &GroupEstimate, b: &GroupEstimate, level: f64) -> Option<Interval> {
    if a.clusters < 2 || b.clusters < 2 {
        return None;
    }
    let (va, vb) = (a.var_of_mean, b.var_of_mean);
    let (fa, fb) = ((a.clusters - 1) as f64, (b.clusters - 1) as f64);
    let df = if va + vb > 0.0 {
        (va + vb).powi(2) / (va * va / fa + vb * vb / fb)
    } else {
        fa + fb
    };
    let se = (va + vb).sqrt();
    let t = t_quantile(0.5 + level / 2.0, df);
    let diff = a.mean - b.mean;
    Some(Interval {
        diff,
        se,
        df,
        t,
        low: diff - t * se,
        high: diff + t * se,
    })
}

/// What the lift says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Under [`MIN_CLUSTERS`] customers in a group.
    TooSmall,
    /// The window is not complete yet: the interval is shown, no verdict is drawn.
    TooEarly,
    Positive,
    Negative,
    Inconclusive,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::TooSmall => "too_small",
            Verdict::TooEarly => "too_early",
            Verdict::Positive => "positive",
            Verdict::Negative => "negative",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// The verdict: too small before too early (a small group does not grow with time), and a
/// sign only on a complete window whose interval excludes zero.
pub fn verdict(
    a: &GroupEstimate,
    b: &GroupEstimate,
    interval: Option<&Interval>,
    window_complete: bool,
) -> Verdict {
    let Some(i) = interval.filter(|_| a.clusters >= MIN_CLUSTERS && b.clusters >= MIN_CLUSTERS)
    else {
        return Verdict::TooSmall;
    };
    if !window_complete {
        Verdict::TooEarly
    } else if i.low > 0.0 {
        Verdict::Positive
    } else if i.high < 0.0 {
        Verdict::Negative
    } else {
        Verdict::Inconclusive
    }
}

/// Student's t distribution function at `t` with `df` degrees of freedom (`df` > 0).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    students_t(df).cdf(t)
}

/// The `p` quantile (0 < p < 1) of Student's t with `df` degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    students_t(df).inverse_cdf(p)
}

/// Student's t with `df` degrees of freedom (at least 1e-3: a Welch df is never below 1).
fn students_t(df: f64) -> StudentsT {
    StudentsT::new(0.0, 1.0, df.max(1e-3)).expect("a positive number of degrees of freedom")
}

#[cfg(test)]
mod tests;
