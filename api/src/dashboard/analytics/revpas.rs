//! The RevPAU / RevPAF page: the ranking of facilities and the 12-month trend, with estimate flags.

use super::*;

fn estimates(r: &domain::analytics::revenue::Revenue) -> String {
    [
        (r.units_estimated, "units"),
        (r.rentable_sqft_estimated, "area"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, w)| (*w).to_owned())
    .chain(r.actual_rent_estimated.then(|| rent_estimate(r)))
    .collect::<Vec<_>>()
    .join(", ")
}

/// How much of the actual rent was estimated: "rent (12.5 % sent)", or "rent" when the share
/// sent is unknown.
pub(crate) fn rent_estimate(r: &domain::analytics::revenue::Revenue) -> String {
    match r.actual_rent_coverage_pct {
        Some(c) => format!("rent ({c:.1}\u{a0}% sent)"),
        None => "rent".to_owned(),
    }
}

fn revenue_cells(f: &Figures, r: &domain::analytics::revenue::Revenue) -> Vec<Cell> {
    cells![
        f.rate(r.revpau),
        f.per_sqft(r.revpaf),
        f.amount(r.gross_potential_rent),
        f.amount(r.actual_rent),
        f.amount(r.rent_gap),
        f.pct(r.rent_gap_pct),
        f.amount(r.revenue_gap),
        f.pct(r.revenue_gap_pct),
        f.pct(r.economic_occupancy_pct),
        estimates(r),
    ]
}

const REVENUE_HEADERS: [&str; 10] = [
    "RevPAU",
    "RevPAF",
    "Potential rent",
    "Actual rent",
    "Rent gap (street − in place)",
    "Rent gap (% of in-place)",
    "Lost to vacancy and rent gap",
    "Lost (% of potential)",
    "Economic occupancy",
    "Estimated",
];

pub async fn revpas(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(p): Query<Params>,
) -> PageResult {
    let facility = p.facility()?;
    let report = reports::revpas::report(&state.db, s.company_id, facility, &s.scope).await?;
    let f = Figures::new(s.currency);
    let mut headers = vec!["Rank", "Facility"];
    headers.extend(REVENUE_HEADERS);
    let mut ranking = Table::new(
        "revpas-ranking",
        "Facilities ranked best first, by RevPAF then RevPAU",
        &headers,
    );
    for r in &report.facilities {
        let mut row = cells![
            r.rank.map(|r| r.to_string()).unwrap_or_default(),
            r.facility_name.clone(),
        ];
        row.extend(revenue_cells(&f, &r.revenue));
        ranking.row(row);
    }
    let mut headers = vec!["Month", "Facilities"];
    headers.extend(REVENUE_HEADERS);
    let mut trend = Table::new(
        "revpas-trend",
        "The last 12 months with data, oldest first",
        &headers,
    );
    // A month before the first data (or one no facility reported) is not a month of data:
    // the table leaves it out, and the charts start at the first month with data.
    let months: Vec<_> = report
        .trend
        .iter()
        .skip_while(|m| m.facilities == 0)
        .collect();
    for m in months.iter().filter(|m| m.facilities > 0) {
        let mut row = cells![m.month.clone(), f.count(m.facilities as f64)];
        row.extend(revenue_cells(&f, &m.revenue));
        trend.row(row);
    }
    let labels: Vec<String> = months.iter().map(|m| m.month.clone()).collect();
    let chart = Chart {
        id: "chart-revpaf".into(),
        title: "RevPAF by month (per square foot per month)".into(),
        unit: "per sq ft".into(),
        measure: Measure::PerSqFt,
        figures: f,
        labels: labels.clone(),
        series: vec![Series::new(
            "RevPAF",
            Kind::Line,
            months.iter().map(|m| m.revenue.revpaf).collect(),
        )],
        from_zero: false,
    };
    let chart_pau = Chart {
        id: "chart-revpau".into(),
        title: "RevPAU by month (per unit per month)".into(),
        unit: "per unit".into(),
        measure: Measure::Rate,
        figures: f,
        labels,
        series: vec![Series::new(
            "RevPAU",
            Kind::Line,
            months.iter().map(|m| m.revenue.revpau).collect(),
        )],
        from_zero: false,
    };
    if let Some(r) = chart::export(&[&ranking, &trend], p.csv.as_deref(), "revpas") {
        return Ok(r);
    }
    let q = p.query();
    let form = scope_form(&state, &s, PAGES[4].0, facility, html! {}).await?;
    let pf = &report.portfolio;
    let body = html! {
        (form)
        div class="figures" {
            div { "RevPAU" b id="revpau" { (f.rate(pf.revpau)) } }
            div { "RevPAF" b id="revpaf" { (f.per_sqft(pf.revpaf)) } }
            div { "Potential rent" b { (f.amount(pf.gross_potential_rent)) } }
            div { "Actual rent" b id="actual-rent" { (f.amount(pf.actual_rent)) }
                @if pf.actual_rent_estimated { span class="muted" id="actual-rent-estimated" { "partly estimated: " (rent_estimate(pf)) } } }
            div { "Rent gap (street − in place)" b id="rent-gap" { (f.amount(pf.rent_gap)) }
                span class="muted" { (f.pct(pf.rent_gap_pct)) " of in-place rent" } }
            div { "Lost to vacancy and rent gap" b id="revenue-gap" { (f.amount(pf.revenue_gap)) }
                span class="muted" { (f.pct(pf.revenue_gap_pct)) " of potential" } }
        }
        p class="muted" { "Based on street rates before concessions. Estimated: a figure the data did not carry (unit count, area or in-place rent), estimated from the others." }
        @if let Some(reason) = &report.reason { p class="muted" { (reason) } }
        (chart.svg())
        (chart_pau.svg())
        h2 { "12-month trend" }
        (trend.render(&q))
        h2 { "Ranking" }
        (ranking.render(&q))
    };
    frame(
        &s,
        "Revenue per available unit and square foot",
        PAGES[4].0,
        body,
    )
}
