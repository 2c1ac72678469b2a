//! Where the engine wins and loses in the wide market, size by size: its revenue against the
//! best fixed rates and the going concern's optimal policy, and where it prices against the
//! going concern's optimum when a size has units to fill and when it is full. A diagnostic:
//! each figure is pooled over the seeds (sums, not the mean of each seed's share), without an
//! interval; the shares with their intervals are those of `wide_table`.

use super::market::SIZES;
use super::wide::{SizeTotals, WideSummary};
use std::fmt::Write;

/// One band's cell: the policy's share of the days in the band and its mean rate over the
/// median on them, then the same of the reference in brackets.
fn band(policy: &SizeTotals, reference: Option<&SizeTotals>, b: usize) -> String {
    let of = |t: &SizeTotals| {
        let days: u32 = t.band_days.iter().sum();
        let share = f64::from(t.band_days[b]) / f64::from(days.max(1)) * 100.0;
        let ratio = if t.band_days[b] == 0 {
            "-".to_owned()
        } else {
            format!("{:.2}", t.band_ratio[b] / f64::from(t.band_days[b]))
        };
        format!("{share:.0} % at {ratio}")
    };
    match reference {
        Some(r) => format!("{} ({})", of(policy), of(r)),
        None => of(policy),
    }
}

/// One engine's figures per scenario and size, in Markdown: revenue against the best fixed
/// rates and (when solved) the going concern's optimum with what the year left counted, mean
/// occupancy, and per band of occupancy (under 85 %, 85-93 %, 93 % and over) the share of the
/// days the size spent in it and its mean rate over the median there, the going concern's in
/// brackets.
pub fn markdown_by_size(summaries: &[WideSummary], engine: usize) -> String {
    let mut out = String::from(
        "| Scenario | Size | Engine / best fixed | Engine / going concern's optimal, what the year left counted | Mean occupancy: engine (best fixed / going concern) | Under 85 %: days at rate / median, engine (going concern) | 85-93 % | 93 % and over |\n|---|---|---|---|---|---|---|---|\n",
    );
    for s in summaries {
        let going = s.going_concern.as_ref();
        let n = s.engines[engine].by_seed.len().max(1) as f64;
        for (i, size) in SIZES.iter().enumerate() {
            let e = &s.engines[engine].sizes[i];
            let fixed = &s.best_fixed.sizes[i];
            let g = going.map(|g| &g.sizes[i]);
            let _ = writeln!(
                out,
                "| {} | {} | {:.1} % | {} | {:.1} % ({:.1} / {}) | {} | {} | {} |",
                s.scenario,
                size.0,
                e.revenue / fixed.revenue * 100.0,
                g.map_or("-".to_owned(), |g| format!(
                    "{:.1} %",
                    (g.revenue - g.value + e.value) / g.revenue * 100.0
                )),
                e.mean_occupancy_pct / n,
                fixed.mean_occupancy_pct / n,
                g.map_or("-".to_owned(), |g| format!(
                    "{:.1}",
                    g.mean_occupancy_pct / n
                )),
                band(e, g, 0),
                band(e, g, 1),
                band(e, g, 2),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_band_reads_its_share_of_the_days_and_its_mean_rate() {
        let t = SizeTotals {
            band_days: [73, 146, 146],
            band_ratio: [73.0 * 0.9, 146.0, 146.0 * 1.1],
            ..SizeTotals::default()
        };
        let empty = SizeTotals {
            band_days: [0, 365, 0],
            band_ratio: [0.0, 365.0, 0.0],
            ..SizeTotals::default()
        };
        assert_eq!(band(&t, None, 0), "20 % at 0.90");
        assert_eq!(band(&t, Some(&empty), 2), "40 % at 1.10 (0 % at -)");
    }
}
