//! The lease-up page: each facility's mode, its event history and fill suggestions.

use super::*;
use jobs::analytics::reports::lease_up::Report;

pub async fn lease_up(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(p): Query<Params>,
) -> PageResult {
    let facility = p.facility()?;
    let report = reports::lease_up::report(&state.db, s.company_id, facility, &s.scope).await?;
    let fig = Figures::new(s.currency);
    let [status, events, fills] = tables(&fig, &report);
    let chart = occupancy_chart(fig, &report);
    let chart_table = chart.table("chart-lease-up-table");
    if let Some(r) = chart::export(
        &[&status, &events, &fills, &chart_table],
        p.csv.as_deref(),
        "lease-up",
    ) {
        return Ok(r);
    }
    let q = p.query();
    let form = scope_form(&state, &s, PAGES[2].0, facility, html! {}).await?;
    let body = html! {
        (form)
        div class="figures" {
            div { "Facilities in lease-up" b id="lease-up-count" { (fig.count(report.facilities_in_lease_up as f64)) } }
            div { "Enter below" b { (fig.pct(report.thresholds.enter_below_pct)) } }
            div { "Leave at or above" b { (fig.pct(report.thresholds.leave_at_or_above_pct)) } }
        }
        (chart::with_table(&chart, &chart_table, &q))
        h2 { "Mode per facility" }
        (status.render(&q))
        h2 { "Fill suggestions" }
        (fills.render(&q))
        h2 { "Event history" }
        (events.render(&q))
    };
    frame(&s, "Lease-up", PAGES[2].0, body)
}

/// The page's tables: each facility's mode, the mode events, and the aggressive-fill
/// suggestions.
fn tables(fig: &Figures, report: &Report) -> [Table; 3] {
    let mut status = Table::new(
        "lease-up-facilities",
        "Mode per facility, lowest occupancy first (the chart's order)",
        &[
            "Facility",
            "Mode",
            "Occupancy",
            "As of",
            "Mode changes",
            "Note",
        ],
    );
    let mut events = Table::new(
        "lease-up-events",
        "Mode event history, oldest first",
        &["Facility", "Date", "From", "To", "Occupancy"],
    );
    let mut fills = Table::new(
        "lease-up-fills",
        "Aggressive-fill suggestions: at or below the competitor P25, never under the floor",
        &[
            "Facility",
            "Size",
            "Street rate",
            "Suggested",
            "Competitor P25",
            "Floor",
            "Floor applied",
            "Competitors",
            "Stale",
            "Engine's rate",
            "Engine against this suggestion",
        ],
    );
    for f in by_occupancy(report) {
        status.row(cells![
            f.facility_name.clone(),
            f.mode.replace('_', "-"),
            fig.pct(f.occupancy_pct),
            f.as_of.map(|d| d.to_string()).unwrap_or_default(),
            fig.count(f.events.len() as f64),
            f.reason.clone().unwrap_or_default(),
        ]);
        for e in &f.events {
            events.row(cells![
                f.facility_name.clone(),
                e.date.to_string(),
                e.from.replace('_', "-"),
                e.to.replace('_', "-"),
                fig.pct(e.occupancy_pct),
            ]);
        }
        let mut suggestions: Vec<_> = f.fill_suggestions.iter().collect();
        suggestions.sort_by_key(|x| crate::dashboard::figures::size_order(&x.size));
        for x in suggestions {
            fills.row(cells![
                f.facility_name.clone(),
                domain::pricing::tiers::unit_type_name(&x.size, x.tier.as_deref().unwrap_or("")),
                fig.rate(x.street_rate),
                fig.rate(x.suggested_rate),
                fig.rate(x.competitor_p25),
                fig.rate(x.floor),
                yes(x.floor_applied),
                fig.count(x.competitors as f64),
                fig.count(x.stale_competitors as f64),
                fig.rate(x.engine_rate),
                x.engine_note.clone(),
            ]);
        }
    }
    [status, events, fills]
}

/// The chart of occupancy against the thresholds of entering and leaving lease-up, for the
/// lowest occupancies first: those nearest to (or in) lease-up.
fn occupancy_chart(fig: Figures, report: &Report) -> Chart {
    let mut shown = by_occupancy(report);
    shown.truncate(MAX_BARS);
    let n = shown.len();
    Chart {
        id: "chart-lease-up".into(),
        title: format!(
            "Occupancy against the lease-up thresholds ({n} lowest-occupancy facilities)"
        ),
        unit: "%".into(),
        measure: Measure::Pct,
        figures: fig,
        labels: shown.iter().map(|f| f.facility_name.clone()).collect(),
        series: vec![
            Series::new(
                "Occupancy",
                Kind::Bar,
                shown.iter().map(|f| f.occupancy_pct).collect(),
            ),
            Series::new(
                "Enter lease-up below",
                Kind::Dashed,
                vec![Some(report.thresholds.enter_below_pct); n],
            ),
            Series::new(
                "Leave at or above",
                Kind::Dashed,
                vec![Some(report.thresholds.leave_at_or_above_pct); n],
            ),
        ],
        from_zero: true,
    }
}

/// The facilities lowest occupancy first (one without a figure last), the order of both the
/// chart's bars and the table under it.
fn by_occupancy(report: &Report) -> Vec<&jobs::analytics::reports::lease_up::FacilityOut> {
    let mut shown: Vec<_> = report.facilities.iter().collect();
    shown.sort_by(|a, b| {
        a.occupancy_pct
            .unwrap_or(f64::MAX)
            .total_cmp(&b.occupancy_pct.unwrap_or(f64::MAX))
    });
    shown
}
