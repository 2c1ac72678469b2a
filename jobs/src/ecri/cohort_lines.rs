//! The suggestions grouped into cohorts (size and months since the rent was set), as the
//! analytics report shows them.

use super::TenantLine;
use domain::ecri::Suggestion;
use domain::values::round2;
use std::collections::BTreeMap;

/// The suggestions grouped per size and whole months since the rent was set: tenants, their
/// average rent, and the average increase, new rent and stay probability.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CohortLine {
    #[serde(skip)]
    pub size: String,
    pub months_since_last_increase: Option<f64>,
    pub tenant_count: u32,
    pub avg_rent: f64,
    /// Per tenant, currency per month (0 for none).
    pub increase: f64,
    pub new_rent: f64,
    pub stay_probability: f64,
}

pub fn cohorts(lines: &[TenantLine]) -> Vec<CohortLine> {
    let mut groups: BTreeMap<(String, Option<u64>), Vec<&TenantLine>> = BTreeMap::new();
    for l in lines {
        let months = l
            .months_since_last_increase
            .map(|m| (m * 100.0).round() as u64);
        groups.entry((l.size.clone(), months)).or_default().push(l);
    }
    groups
        .into_iter()
        .map(|((size, _), ls)| {
            let n: u32 = ls.iter().map(|l| l.suggestion.tenant_count.max(1)).sum();
            let w = |f: &dyn Fn(&Suggestion) -> f64| {
                ls.iter()
                    .map(|l| f(&l.suggestion) * f64::from(l.suggestion.tenant_count.max(1)))
                    .sum::<f64>()
                    / f64::from(n.max(1))
            };
            CohortLine {
                size,
                months_since_last_increase: ls[0].months_since_last_increase,
                tenant_count: n,
                avg_rent: round2(w(&|s| s.current_rent)),
                increase: round2(w(&|s| s.increase)),
                new_rent: round2(w(&|s| s.new_rent)),
                // The engine's chance is a percent; the answer's a probability.
                stay_probability: (w(&|s| s.stay_probability) * 100.0).round() / 10_000.0,
            }
        })
        .collect()
}
