//! The seasonality page: the 12-month profile of the company, a facility or a size, with its advisory.

use super::*;

pub async fn seasonality(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(p): Query<Params>,
) -> PageResult {
    let facility = p.facility()?;
    let size = p
        .size
        .as_deref()
        .filter(|v| !v.trim().is_empty())
        .map(|v| {
            UnitSize::parse(v).map_err(|e| ApiError::Invalid(format!("query parameter size: {e}")))
        })
        .transpose()?;
    let settings = AnalyticsSettings::default();
    let report = reports::seasonality::report(
        &state.db,
        s.company_id,
        facility,
        &s.scope,
        size.as_ref(),
        settings.seasonality_min_facility_days,
    )
    .await?;
    let fig = Figures::new(s.currency);
    let names = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month_name = |m: u32| {
        names
            .get(m.saturating_sub(1) as usize)
            .copied()
            .unwrap_or("")
    };
    let mut table = Table::new(
        "seasonality-months",
        "The 12-month profile: an index of 1 is an average month's move-in pace",
        &[
            "Month",
            "Index",
            "Basis",
            "Move-ins per facility-day",
            "Facility-days",
        ],
    );
    for m in &report.months {
        table.row(cells![
            month_name(m.month).to_owned(),
            fig.index(m.index),
            word(&m.basis),
            fig.pace(m.pace),
            fig.count(m.facility_days),
        ]);
    }
    let chart = Chart {
        id: "chart-seasonality".into(),
        title: format!("Seasonality index by month ({} scope)", report.scope),
        unit: "index".into(),
        measure: Measure::Index,
        figures: fig,
        labels: report
            .months
            .iter()
            .map(|m| month_name(m.month).to_owned())
            .collect(),
        series: vec![
            Series::new(
                "Index",
                Kind::Bar,
                report.months.iter().map(|m| Some(m.index)).collect(),
            ),
            Series::new(
                "Average month",
                Kind::Dashed,
                vec![Some(1.0); report.months.len()],
            ),
        ],
        from_zero: true,
    };
    // The table below is the chart's table view (the same figures).
    if let Some(r) = chart::export(&[&table], p.csv.as_deref(), "seasonality") {
        return Ok(r);
    }
    let q = p.query();
    let extra = html! {
        label { "Size (optional)" input type="text" name="size" placeholder="10x10" value=[p.size.as_deref()]; }
    };
    let form = scope_form(&state, &s, PAGES[1].0, facility, extra).await?;
    let body = html! {
        (form)
        p class="card" id="advisory" { (report.advisory) }
        div class="figures" {
            div { "Scope" b id="season-scope" { (report.scope) } }
            div { "Own months" b { (report.own_data_months) } }
            div { "Prior months" b { (report.prior_months) } }
            @if let Some(c) = &report.current_month {
                div { "This month's index" b id="season-current-index" { (fig.index(c.index)) } }
                div { "This month vs profile" b { (fig.pct(c.vs_profile_pct)) } }
            }
        }
        @if let Some(reason) = &report.reason { p class="muted" { (reason) } }
        (chart.svg())
        (table.render(&q))
    };
    frame(&s, "Seasonality", PAGES[1].0, body)
}
