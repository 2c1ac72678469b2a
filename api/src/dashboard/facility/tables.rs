//! The facility page's tables: the latest run per size with its factors and guardrails, the run
//! history, competitor rates and the competitor band.

use super::*;

pub(super) fn action_word(a: domain::pricing::engine::Action) -> &'static str {
    match a {
        domain::pricing::engine::Action::Raise => "raise",
        domain::pricing::engine::Action::Hold => "hold",
        domain::pricing::engine::Action::Lower => "lower",
    }
}

pub(super) fn recommendation_tables(
    fig: &Figures,
    recs: &[Recommendation],
) -> (Table, Table, Table) {
    let mut r = Table::new(
        "recommendations",
        "One row per unit type of the latest run",
        &[
            "Size",
            "Tier",
            "Current",
            "Recommended",
            "Change",
            "Change (%)",
            "Action",
            "Confidence",
            "Occupancy",
            "Competitor P25 / median / P75",
        ],
    );
    let mut f = Table::new(
        "factors",
        "Percentage points of the current rate each factor moved the target by",
        &["Size", "Tier", "Factor", "Contribution", "Explanation"],
    );
    let mut g = Table::new(
        "guardrails",
        "The rate before and after each guardrail that changed it",
        &["Size", "Tier", "Guardrail", "Before", "After", "Why"],
    );
    for rec in recs {
        r.row(cells![
            rec.size.clone(),
            rec.tier.clone(),
            fig.rate(rec.current_rate),
            fig.rate(rec.recommended_rate),
            fig.rate(rec.change_amount),
            fig.pct(rec.change_pct),
            action_word(rec.action),
            fig.index(rec.confidence),
            fig.pct(rec.occupancy_pct),
            rec.competitor_band
                .as_ref()
                .map(|b| format!(
                    "{} / {} / {}",
                    fig.rate(b.p25),
                    fig.rate(b.median),
                    fig.rate(b.p75)
                ))
                .unwrap_or_else(|| "no competitors".to_owned()),
        ]);
        for x in &rec.factors {
            f.row(cells![
                rec.size.clone(),
                rec.tier.clone(),
                x.name.replace('_', " "),
                fig.points(x.contribution_pct),
                x.detail.clone(),
            ]);
        }
        for x in &rec.guardrails {
            g.row(cells![
                rec.size.clone(),
                rec.tier.clone(),
                x.name.replace('_', " "),
                fig.rate(x.before),
                fig.rate(x.after),
                x.detail.clone(),
            ]);
        }
    }
    (r, f, g)
}

pub(super) fn runs_table(fig: &Figures, runs: &[jobs::pricing::RunSummary]) -> Table {
    let mut t = Table::new(
        "runs",
        format!("The latest {RUNS_SHOWN} runs, newest first"),
        &[
            "Generated",
            "Trigger",
            "Data of",
            "Mode",
            "Sizes",
            "Raise",
            "Hold",
            "Lower",
        ],
    );
    for r in runs {
        t.row(cells![
            page::when(Some(r.generated_at)),
            r.trigger.clone(),
            r.snapshot_date.to_string(),
            r.mode.replace('_', "-"),
            fig.count(r.per_size_count as f64),
            fig.count(r.raise as f64),
            fig.count(r.hold as f64),
            fig.count(r.lower as f64),
        ]);
    }
    t
}

pub(super) fn rates_table(fig: &Figures, l: &competitors::Listing) -> Table {
    let mut t = Table::new(
        "competitor-rates",
        format!("Observations, newest first (at most {RATES_SHOWN})"),
        &[
            "Competitor",
            "Size",
            "Rate",
            "Promotion",
            "Effective rate",
            "Observed",
            "Age (days)",
            "Fresh",
            "Source",
        ],
    );
    for r in &l.competitor_rates {
        t.row(cells![
            r.competitor.clone(),
            with_tier(&r.size, r.tier.as_deref()),
            fig.rate(r.rate),
            r.promo.clone().unwrap_or_default(),
            fig.rate(r.effective_rate),
            r.observed_on.to_string(),
            fig.count(r.age_days as f64),
            if r.stale { "stale" } else { "fresh" },
            r.source.clone(),
        ]);
    }
    t
}

/// A size with the tier a competitor rate or band names (`10x20 climate`).
fn with_tier(size: &str, tier: Option<&str>) -> String {
    tier.map_or_else(|| size.to_owned(), |t| format!("{size} {t}"))
}

pub(super) fn bands_table(fig: &Figures, l: &competitors::Listing) -> Table {
    let mut t = Table::new(
        "competitor-bands",
        format!("The band per size as of {}", l.as_of),
        &[
            "Size",
            "P25",
            "Median",
            "P75",
            "Competitors",
            "Stale",
            "Newest",
        ],
    );
    let mut bands: Vec<_> = l.bands.iter().collect();
    bands.sort_by_key(|b| crate::dashboard::figures::size_order(&b.size));
    for b in bands {
        t.row(cells![
            with_tier(&b.size, b.tier.as_deref()),
            fig.rate(b.band.p25),
            fig.rate(b.band.median),
            fig.rate(b.band.p75),
            fig.count(b.band.competitors as f64),
            fig.count(b.band.stale as f64),
            b.band.newest_observed_on.to_string(),
        ]);
    }
    t
}
