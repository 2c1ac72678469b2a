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

pub(super) fn recommendation_tables(recs: &[Recommendation]) -> (Table, Table, Table) {
    let mut r = Table::new(
        "recommendations",
        "One row per unit type of the latest run",
        &[
            "Size",
            "Tier",
            "Current",
            "Recommended",
            "Change",
            "Change %",
            "Action",
            "Confidence",
            "Occupancy %",
            "Competitor P25 / median / P75",
        ],
    );
    let mut f = Table::new(
        "factors",
        "Percentage points of the current rate each factor moved the target by",
        &["Size", "Tier", "Factor", "Contribution (pp)", "Explanation"],
    );
    let mut g = Table::new(
        "guardrails",
        "The rate before and after each guardrail that changed it",
        &["Size", "Tier", "Guardrail", "Before", "After", "Why"],
    );
    for rec in recs {
        r.row(vec![
            rec.size.clone(),
            rec.tier.clone(),
            num(rec.current_rate),
            num(rec.recommended_rate),
            num(rec.change_amount),
            num(rec.change_pct),
            action_word(rec.action).to_owned(),
            num(rec.confidence),
            opt(rec.occupancy_pct),
            rec.competitor_band
                .as_ref()
                .map(|b| format!("{} / {} / {}", num(b.p25), num(b.median), num(b.p75)))
                .unwrap_or_else(|| "no competitors".to_owned()),
        ]);
        for x in &rec.factors {
            f.row(vec![
                rec.size.clone(),
                rec.tier.clone(),
                x.name.replace('_', " "),
                num(x.contribution_pct),
                x.detail.clone(),
            ]);
        }
        for x in &rec.guardrails {
            g.row(vec![
                rec.size.clone(),
                rec.tier.clone(),
                x.name.replace('_', " "),
                num(x.before),
                num(x.after),
                x.detail.clone(),
            ]);
        }
    }
    (r, f, g)
}

pub(super) fn runs_table(runs: &[store::RunSummary]) -> Table {
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
        t.row(vec![
            page::when(Some(r.generated_at)),
            r.trigger.clone(),
            r.snapshot_date.to_string(),
            r.mode.replace('_', "-"),
            r.per_size_count.to_string(),
            r.raise.to_string(),
            r.hold.to_string(),
            r.lower.to_string(),
        ]);
    }
    t
}

pub(super) fn rates_table(l: &competitors::Listing) -> Table {
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
        t.row(vec![
            r.competitor.clone(),
            r.size.clone(),
            num(r.rate),
            r.promo.clone().unwrap_or_default(),
            num(r.effective_rate),
            r.observed_on.to_string(),
            r.age_days.to_string(),
            if r.stale { "stale" } else { "fresh" }.to_owned(),
            r.source.clone(),
        ]);
    }
    t
}

pub(super) fn bands_table(l: &competitors::Listing) -> Table {
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
    for b in &l.bands {
        t.row(vec![
            b.size.clone(),
            num(b.band.p25),
            num(b.band.median),
            num(b.band.p75),
            b.band.competitors.to_string(),
            b.band.stale.to_string(),
            b.band.newest_observed_on.to_string(),
        ]);
    }
    t
}
