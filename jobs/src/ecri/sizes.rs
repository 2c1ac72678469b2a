//! A run's figures per unit size, stored beside its lines (`ecri_runs.sizes`) so reports read
//! them without opening the lines, and summed across facilities by the analytics report.

use super::TenantLine;
use domain::values::round2;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// One size of a run (or of many runs, summed).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SizeSummary {
    pub size: String,
    /// Tenants of the size.
    pub tenants: u64,
    /// Tenants an increase is suggested for.
    pub tenants_affected: u64,
    /// Added rent per month if every suggestion is made and every tenant stays.
    pub monthly_uplift: f64,
    /// Expected revenue over the horizon against no increase (the engine's figure, net of the
    /// expected move-outs and the months their units stand empty).
    pub expected_gain: f64,
    /// Tenants increased who are expected to have moved out 90 days after the notice.
    pub expected_move_outs: f64,
    /// Average suggested increase of the tenants increased, % of their rent.
    pub avg_increase_pct: f64,
    /// Median of the same (of one run; a sum of runs reports the tenant-weighted average of
    /// the runs' medians).
    pub median_increase_pct: f64,
    /// Street rate of the size (the blend of its tiers); null when it has none.
    pub street_rate: Option<f64>,
    /// Tenants per binding guardrail (`max_step`, `months_since_increase`, ...).
    pub guardrails: BTreeMap<String, u64>,
}

/// The natural order of unit sizes: by area, then width, then the text (5x5 < 5x10 < 10x10 <
/// 10x20; a size that does not read as WxD after every one that does).
pub fn size_order(a: &str, b: &str) -> Ordering {
    fn dims(s: &str) -> Option<(f64, f64)> {
        let (w, d) = s.trim().to_lowercase().split_once('x').map(|(w, d)| {
            (
                w.trim().trim_end_matches('\'').to_owned(),
                d.trim().trim_end_matches('\'').to_owned(),
            )
        })?;
        let (w, d) = (w.parse::<f64>().ok()?, d.parse::<f64>().ok()?);
        (w.is_finite() && d.is_finite()).then_some((w * d, w))
    }
    match (dims(a), dims(b)) {
        (Some((aa, aw)), Some((ba, bw))) => aa
            .total_cmp(&ba)
            .then(aw.total_cmp(&bw))
            .then_with(|| a.cmp(b)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// The run's figures per size, in natural size order.
pub fn summarize(
    lines: &[TenantLine],
    markets: &BTreeMap<String, domain::ecri::SizeMarket>,
) -> Vec<SizeSummary> {
    let mut by: BTreeMap<&str, (SizeSummary, Vec<f64>)> = BTreeMap::new();
    for l in lines {
        let (s, pcts) = by.entry(l.size.as_str()).or_insert_with(|| {
            (
                SizeSummary {
                    size: l.size.clone(),
                    street_rate: markets.get(&l.size).map(|m| round2(m.street_rate)),
                    ..SizeSummary::default()
                },
                Vec::new(),
            )
        });
        let g = &l.suggestion;
        let n = u64::from(g.tenant_count.max(1));
        s.tenants += n;
        s.expected_gain += g.expected_gain;
        if let Some(b) = g.binding_guardrail {
            *s.guardrails.entry(b.name().to_owned()).or_default() += n;
        }
        if g.increase > 0.0 {
            s.tenants_affected += n;
            s.monthly_uplift += g.increase * n as f64;
            s.expected_move_outs += (1.0 - g.stay_probability / 100.0).clamp(0.0, 1.0) * n as f64;
            s.avg_increase_pct += g.increase_pct * n as f64;
            pcts.extend(std::iter::repeat_n(g.increase_pct, n.min(10_000) as usize));
        }
    }
    let mut out: Vec<SizeSummary> = by
        .into_values()
        .map(|(mut s, mut pcts)| {
            s.avg_increase_pct = if s.tenants_affected > 0 {
                round2(s.avg_increase_pct / s.tenants_affected as f64)
            } else {
                0.0
            };
            s.median_increase_pct = round2(median(&mut pcts));
            s.monthly_uplift = round2(s.monthly_uplift);
            s.expected_gain = round2(s.expected_gain);
            s.expected_move_outs = (s.expected_move_outs * 10.0).round() / 10.0;
            s
        })
        .collect();
    out.sort_by(|a, b| size_order(&a.size, &b.size));
    out
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Sums the sizes of many runs, per size, in natural size order.
pub fn sum(all: impl IntoIterator<Item = SizeSummary>) -> Vec<SizeSummary> {
    let mut by: BTreeMap<String, (SizeSummary, f64)> = BTreeMap::new();
    for s in all {
        let (t, median_weight) = by.entry(s.size.clone()).or_insert_with(|| {
            (
                SizeSummary {
                    size: s.size.clone(),
                    street_rate: None,
                    ..SizeSummary::default()
                },
                0.0,
            )
        });
        let k = s.tenants_affected as f64;
        t.tenants += s.tenants;
        t.tenants_affected += s.tenants_affected;
        t.monthly_uplift += s.monthly_uplift;
        t.expected_gain += s.expected_gain;
        t.expected_move_outs += s.expected_move_outs;
        t.avg_increase_pct += s.avg_increase_pct * k;
        t.median_increase_pct += s.median_increase_pct * k;
        *median_weight += k;
        for (g, n) in s.guardrails {
            *t.guardrails.entry(g).or_default() += n;
        }
    }
    let mut out: Vec<SizeSummary> = by
        .into_values()
        .map(|(mut t, w)| {
            let per = |x: f64| if w > 0.0 { round2(x / w) } else { 0.0 };
            t.avg_increase_pct = per(t.avg_increase_pct);
            t.median_increase_pct = per(t.median_increase_pct);
            t.monthly_uplift = round2(t.monthly_uplift);
            t.expected_gain = round2(t.expected_gain);
            t.expected_move_outs = (t.expected_move_outs * 10.0).round() / 10.0;
            t
        })
        .collect();
    out.sort_by(|a, b| size_order(&a.size, &b.size));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_sort_by_area_not_as_text() {
        let mut v = vec![
            "10x20", "10x10", "5x10", "CC 10x10", "5x5", "10x15", "7.5x10",
        ];
        v.sort_by(|a, b| size_order(a, b));
        assert_eq!(
            v,
            vec!["5x5", "5x10", "7.5x10", "10x10", "10x15", "10x20", "CC 10x10"]
        );
    }

    #[test]
    fn a_sum_of_runs_adds_tenants_and_weighs_the_percentages_by_tenants_increased() {
        let one = |tenants, affected, avg| SizeSummary {
            size: "10x10".into(),
            tenants,
            tenants_affected: affected,
            monthly_uplift: 100.0,
            avg_increase_pct: avg,
            median_increase_pct: avg,
            guardrails: BTreeMap::from([("max_step".to_owned(), 2)]),
            ..SizeSummary::default()
        };
        let s = sum([one(10, 3, 6.0), one(20, 1, 10.0)]);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].tenants, s[0].tenants_affected), (30, 4));
        assert_eq!(s[0].avg_increase_pct, 7.0);
        assert_eq!(s[0].monthly_uplift, 200.0);
        assert_eq!(s[0].guardrails["max_step"], 4);
    }
}
