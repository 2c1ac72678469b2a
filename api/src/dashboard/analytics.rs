//! The analytics pages, one per `/api/v1/analytics/*` endpoint, each a chart and tables with
//! the numbers of the same `jobs` report the endpoint answers with (the pages round to two
//! decimals, as the reports do). Parameters are the endpoint's: `facility_id`, `size`
//! (seasonality) and `period` (leads).

use super::chart::{self, num, opt, Chart, Kind, Series, Table};
use super::page::{self, Messages, Nav, PageResult};
use super::session::SignedIn;
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Query, State};
use domain::analytics::AnalyticsSettings;
use domain::values::UnitSize;
use jobs::analytics::reports;
use jobs::web_sessions::Session;
use maud::{html, Markup};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The pages: address, title.
const PAGES: [(&str, &str); 5] = [
    ("/app/analytics/ecri", "Rent increases (ECRI)"),
    ("/app/analytics/seasonality", "Seasonality"),
    ("/app/analytics/lease-up", "Lease-up"),
    ("/app/analytics/leads", "Lead funnel"),
    ("/app/analytics/revpas", "RevPAU / RevPAF"),
];

/// Bars a company-wide chart draws at most (the table has every row).
const MAX_BARS: usize = 40;

#[derive(Deserialize)]
pub struct Params {
    facility_id: Option<String>,
    size: Option<String>,
    period: Option<String>,
    csv: Option<String>,
}

impl Params {
    fn facility(&self) -> Result<Option<Uuid>, ApiError> {
        crate::routes::analytics::facility_id(
            self.facility_id.as_deref().filter(|s| !s.trim().is_empty()),
        )
    }

    /// The page's own query (without `csv`), for its CSV links.
    fn query(&self) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in [
            ("facility_id", &self.facility_id),
            ("size", &self.size),
            ("period", &self.period),
        ] {
            if let Some(v) = v.as_deref().filter(|v| !v.trim().is_empty()) {
                q.append_pair(k, v);
            }
        }
        q.finish()
    }
}

/// A serialized enum's name in words (`max_step` reads "max step").
fn word<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
        .unwrap_or_default()
}

fn yes(b: bool) -> String {
    if b { "yes" } else { "" }.to_owned()
}

fn sub_nav(current: &str) -> Markup {
    html! {
        nav class="range" aria-label="Analytics" {
            @for (href, title) in PAGES {
                @if href == current { a href=(href) aria-current="page" { (title) } }
                @else { a href=(href) { (title) } }
            }
        }
    }
}

/// The scope form: a facility (or all), and the page's own extra fields.
async fn scope_form(
    state: &AppState,
    s: &Session,
    action: &str,
    chosen: Option<Uuid>,
    extra: Markup,
) -> Result<Markup, ApiError> {
    let facilities = jobs::facilities::list(&state.db, s.company_id).await?;
    Ok(html! {
        form class="scope actions" method="get" action=(action) {
            label { "Facility"
                select name="facility_id" {
                    option value="" { "All facilities" }
                    @for f in &facilities {
                        @if Some(f.id) == chosen { option value=(f.id) selected { (f.name) } }
                        @else { option value=(f.id) { (f.name) } }
                    }
                }
            }
            (extra)
            button type="submit" { "Show" }
        }
    })
}

fn frame(s: &Session, title: &str, current: &str, body: Markup) -> PageResult {
    Ok(page::render(page::frame(
        s,
        Nav::Analytics,
        title,
        &Messages::default(),
        html! { (sub_nav(current)) (body) },
    )))
}

pub async fn ecri(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(p): Query<Params>,
) -> PageResult {
    let facility = p.facility()?;
    let settings = AnalyticsSettings::default();
    let report = reports::ecri::report(&state.db, s.company_id, facility, &settings.ecri).await?;
    let mut sizes = Table::new(
        "ecri-sizes",
        "Per size: the tenants below street rate, the suggested increase and its guardrails",
        &[
            "Facility",
            "Size",
            "Street rate",
            "Tenants",
            "Average rent",
            "Rent gap %",
            "Tenants affected",
            "Increase",
            "Increase %",
            "New rent",
            "Monthly uplift",
            "Expected move-outs",
            "Net monthly uplift",
            "Guardrails",
            "Note",
        ],
    );
    let mut totals = Table::new(
        "ecri-facilities",
        "Per facility: totals of its sizes",
        &[
            "Facility",
            "As of",
            "Tenants",
            "Tenants affected",
            "Monthly uplift",
            "Expected move-outs",
            "Net monthly uplift",
            "Note",
        ],
    );
    for f in &report.facilities {
        totals.row(vec![
            f.facility_name.clone(),
            f.as_of.map(|d| d.to_string()).unwrap_or_default(),
            f.totals.tenants.to_string(),
            f.totals.tenants_affected.to_string(),
            num(f.totals.monthly_uplift),
            num(f.totals.expected_move_outs),
            num(f.totals.net_monthly_uplift),
            f.reason.clone().unwrap_or_default(),
        ]);
        if facility.is_none() {
            continue;
        }
        for z in &f.sizes {
            let e = z.ecri.as_ref();
            sizes.row(vec![
                f.facility_name.clone(),
                z.size.clone(),
                opt(z.street_rate),
                e.map(|e| e.tenants.to_string()).unwrap_or_default(),
                opt(e.map(|e| e.current_avg_rent)),
                opt(e.map(|e| e.rent_gap_pct)),
                e.map(|e| e.tenants_affected.to_string())
                    .unwrap_or_default(),
                opt(e.map(|e| e.suggested_increase)),
                opt(e.map(|e| e.suggested_increase_pct)),
                opt(e.and_then(|e| e.suggested_new_rent)),
                opt(e.map(|e| e.monthly_uplift)),
                opt(e.map(|e| e.expected_move_outs)),
                opt(e.map(|e| e.net_monthly_uplift)),
                e.map(|e| {
                    e.guardrails
                        .iter()
                        .map(|g| format!("{} ({} tenants)", word(&g.guardrail), g.tenants))
                        .collect::<Vec<_>>()
                        .join("; ")
                })
                .unwrap_or_default(),
                z.reason.clone().unwrap_or_default(),
            ]);
        }
    }
    let chart = if facility.is_some() {
        let f = report.facilities.first();
        let sizes_of = f.map(|f| f.sizes.as_slice()).unwrap_or_default();
        Chart {
            id: "chart-ecri".into(),
            title: "Monthly uplift per size, before and after expected move-outs".into(),
            unit: "per month".into(),
            labels: sizes_of.iter().map(|z| z.size.clone()).collect(),
            series: vec![
                Series::new(
                    "Monthly uplift",
                    Kind::Bar,
                    sizes_of
                        .iter()
                        .map(|z| z.ecri.as_ref().map(|e| e.monthly_uplift))
                        .collect(),
                ),
                Series::new(
                    "Net monthly uplift",
                    Kind::Bar,
                    sizes_of
                        .iter()
                        .map(|z| z.ecri.as_ref().map(|e| e.net_monthly_uplift))
                        .collect(),
                ),
            ],
            from_zero: true,
        }
    } else {
        let mut top: Vec<_> = report.facilities.iter().collect();
        top.sort_by(|a, b| {
            b.totals
                .net_monthly_uplift
                .total_cmp(&a.totals.net_monthly_uplift)
        });
        top.truncate(MAX_BARS);
        Chart {
            id: "chart-ecri".into(),
            title: format!(
                "Net monthly uplift per facility (the {} largest)",
                top.len()
            ),
            unit: "per month".into(),
            labels: top.iter().map(|f| f.facility_name.clone()).collect(),
            series: vec![Series::new(
                "Net monthly uplift",
                Kind::Bar,
                top.iter()
                    .map(|f| Some(f.totals.net_monthly_uplift))
                    .collect(),
            )],
            from_zero: true,
        }
    };
    let chart_table = chart.table("chart-ecri-table");
    if let Some(r) = chart::export(&[&sizes, &totals, &chart_table], p.csv.as_deref(), "ecri") {
        return Ok(r);
    }
    let q = p.query();
    let t = &report.totals;
    let form = scope_form(&state, &s, PAGES[0].0, facility, html! {}).await?;
    let body = html! {
        (form)
        div class="figures" id="ecri-totals" {
            div { "Tenants" b { (t.tenants) } }
            div { "Tenants affected" b id="ecri-affected" { (t.tenants_affected) } }
            div { "Monthly uplift" b id="ecri-uplift" { (num(t.monthly_uplift)) } }
            div { "Expected move-outs" b { (num(t.expected_move_outs)) } }
            div { "Net monthly uplift" b id="ecri-net" { (num(t.net_monthly_uplift)) } }
        }
        (chart::with_table(&chart, &chart_table, &q))
        @if facility.is_some() {
            h2 { "Per size" }
            (sizes.render(&q))
        } @else {
            p class="muted" { "Choose a facility for its sizes, their guardrails and the expected uplift per size." }
        }
        h2 { "Per facility" }
        (totals.render(&q))
    };
    frame(&s, "Rent increases for existing tenants", PAGES[0].0, body)
}

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
        size.as_ref(),
        settings.seasonality_min_facility_days,
    )
    .await?;
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
        table.row(vec![
            month_name(m.month).to_owned(),
            num(m.index),
            word(&m.basis),
            opt(m.pace),
            num(m.facility_days),
        ]);
    }
    let chart = Chart {
        id: "chart-seasonality".into(),
        title: format!("Seasonality index by month ({} scope)", report.scope),
        unit: "index".into(),
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
                div { "This month's index" b id="season-current-index" { (num(c.index)) } }
                div { "This month vs profile" b { (opt(c.vs_profile_pct)) "%" } }
            }
        }
        @if let Some(reason) = &report.reason { p class="muted" { (reason) } }
        (chart.svg())
        (table.render(&q))
    };
    frame(&s, "Seasonality", PAGES[1].0, body)
}

pub async fn lease_up(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(p): Query<Params>,
) -> PageResult {
    let facility = p.facility()?;
    let report = reports::lease_up::report(&state.db, s.company_id, facility).await?;
    let mut status = Table::new(
        "lease-up-facilities",
        "Mode per facility",
        &[
            "Facility",
            "Mode",
            "Occupancy %",
            "As of",
            "Mode changes",
            "Note",
        ],
    );
    let mut events = Table::new(
        "lease-up-events",
        "Mode event history, oldest first",
        &["Facility", "Date", "From", "To", "Occupancy %"],
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
        ],
    );
    for f in &report.facilities {
        status.row(vec![
            f.facility_name.clone(),
            f.mode.replace('_', "-"),
            opt(f.occupancy_pct),
            f.as_of.map(|d| d.to_string()).unwrap_or_default(),
            f.events.len().to_string(),
            f.reason.clone().unwrap_or_default(),
        ]);
        for e in &f.events {
            events.row(vec![
                f.facility_name.clone(),
                e.date.to_string(),
                e.from.replace('_', "-"),
                e.to.replace('_', "-"),
                num(e.occupancy_pct),
            ]);
        }
        for x in &f.fill_suggestions {
            fills.row(vec![
                f.facility_name.clone(),
                x.size.clone(),
                num(x.street_rate),
                num(x.suggested_rate),
                num(x.competitor_p25),
                num(x.floor),
                yes(x.floor_applied),
                x.competitors.to_string(),
                x.stale_competitors.to_string(),
            ]);
        }
    }
    // The lowest occupancies first: those nearest to (or in) lease-up.
    let mut shown: Vec<_> = report.facilities.iter().collect();
    shown.sort_by(|a, b| {
        a.occupancy_pct
            .unwrap_or(f64::MAX)
            .total_cmp(&b.occupancy_pct.unwrap_or(f64::MAX))
    });
    shown.truncate(MAX_BARS);
    let n = shown.len();
    let chart = Chart {
        id: "chart-lease-up".into(),
        title: format!(
            "Occupancy against the lease-up thresholds ({n} lowest-occupancy facilities)"
        ),
        unit: "%".into(),
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
    };
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
            div { "Facilities in lease-up" b id="lease-up-count" { (report.facilities_in_lease_up) } }
            div { "Enter below" b { (num(report.thresholds.enter_below_pct)) "%" } }
            div { "Leave at or above" b { (num(report.thresholds.leave_at_or_above_pct)) "%" } }
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

pub async fn leads(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(p): Query<Params>,
) -> PageResult {
    let facility = p.facility()?;
    let (days, period) = match p.period.as_deref() {
        None | Some("" | "30d") => (30, "30d"),
        Some("90d") => (90, "90d"),
        Some(other) => {
            let shown: String = other.chars().take(30).collect();
            return Err(ApiError::Invalid(format!(
                "query parameter period: must be 30d or 90d, got '{shown}'"
            ))
            .into());
        }
    };
    let report = reports::leads::report(&state.db, s.company_id, facility, days).await?;
    let mut table = Table::new(
        "lead-channels",
        format!("Leads per channel, last {days} days against the {days} days before"),
        &[
            "Channel",
            "Leads",
            "Share %",
            "Previous period",
            "Dead channel",
            "Conversion",
        ],
    );
    for c in &report.funnel.channels {
        table.row(vec![
            c.channel.clone(),
            c.leads.to_string(),
            opt(c.share_pct),
            c.previous_period_leads.to_string(),
            yes(c.dead),
            c.conversion.replace('_', " "),
        ]);
    }
    let chart = Chart {
        id: "chart-leads".into(),
        title: format!("Leads per channel, last {days} days and the period before"),
        unit: "leads".into(),
        labels: report
            .funnel
            .channels
            .iter()
            .map(|c| c.channel.clone())
            .collect(),
        series: vec![
            Series::new(
                "This period",
                Kind::Bar,
                report
                    .funnel
                    .channels
                    .iter()
                    .map(|c| Some(c.leads as f64))
                    .collect(),
            ),
            Series::new(
                "Previous period",
                Kind::Bar,
                report
                    .funnel
                    .channels
                    .iter()
                    .map(|c| Some(c.previous_period_leads as f64))
                    .collect(),
            ),
        ],
        from_zero: true,
    };
    // The table below is the chart's table view (the same figures).
    if let Some(r) = chart::export(&[&table], p.csv.as_deref(), "leads") {
        return Ok(r);
    }
    let q = p.query();
    let extra = html! {
        label { "Period"
            select name="period" {
                @for v in ["30d", "90d"] {
                    @if v == period { option value=(v) selected { (v) } } @else { option value=(v) { (v) } }
                }
            }
        }
    };
    let form = scope_form(&state, &s, PAGES[3].0, facility, extra).await?;
    let f = &report.funnel;
    let body = html! {
        (form)
        div class="figures" {
            div { "Leads" b id="leads-total" { (f.total_leads) } }
            div { "Move-ins" b id="leads-move-ins" { (f.move_ins) } }
            div { "Lead to move-in" b id="leads-conversion" { (opt(f.conversion_pct)) "%" } }
            div { "Dead channels" b id="leads-dead" { (f.dead_channels.len()) } }
        }
        @if !f.dead_channels.is_empty() {
            p class="banner" id="dead-channels" {
                "No leads this period from a channel that brought some before: " (f.dead_channels.join(", ")) "."
            }
        }
        p class="muted" { "Per-channel conversion is not measured: the data carries move-ins, not their channel." }
        @if let Some(reason) = &report.reason { p class="muted" { (reason) } }
        (chart.svg())
        (table.render(&q))
    };
    frame(&s, "Lead funnel", PAGES[3].0, body)
}

fn estimates(r: &domain::analytics::revenue::Revenue) -> String {
    [
        (r.units_estimated, "units"),
        (r.rentable_sqft_estimated, "area"),
        (r.actual_rent_estimated, "rent"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, w)| *w)
    .collect::<Vec<_>>()
    .join(", ")
}

fn revenue_cells(r: &domain::analytics::revenue::Revenue) -> Vec<String> {
    vec![
        opt(r.revpau),
        opt(r.revpaf),
        opt(r.gross_potential_rent),
        opt(r.actual_rent),
        opt(r.rent_gap),
        opt(r.rent_gap_pct),
        opt(r.economic_occupancy_pct),
        estimates(r),
    ]
}

const REVENUE_HEADERS: [&str; 8] = [
    "RevPAU",
    "RevPAF",
    "Potential rent",
    "Actual rent",
    "Gap",
    "Gap %",
    "Economic occupancy %",
    "Estimated",
];

pub async fn revpas(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(p): Query<Params>,
) -> PageResult {
    let facility = p.facility()?;
    let report = reports::revpas::report(&state.db, s.company_id, facility).await?;
    let mut headers = vec!["Rank", "Facility"];
    headers.extend(REVENUE_HEADERS);
    let mut ranking = Table::new(
        "revpas-ranking",
        "Facilities ranked best first, by RevPAF then RevPAU",
        &headers,
    );
    for f in &report.facilities {
        let mut row = vec![
            f.rank.map(|r| r.to_string()).unwrap_or_default(),
            f.facility_name.clone(),
        ];
        row.extend(revenue_cells(&f.revenue));
        ranking.row(row);
    }
    let mut headers = vec!["Month", "Facilities"];
    headers.extend(REVENUE_HEADERS);
    let mut trend = Table::new("revpas-trend", "The last 12 months, oldest first", &headers);
    for m in &report.trend {
        let mut row = vec![m.month.clone(), m.facilities.to_string()];
        row.extend(revenue_cells(&m.revenue));
        trend.row(row);
    }
    let labels: Vec<String> = report.trend.iter().map(|m| m.month.clone()).collect();
    let chart = Chart {
        id: "chart-revpaf".into(),
        title: "RevPAF by month (per square foot per month)".into(),
        unit: "per sq ft".into(),
        labels: labels.clone(),
        series: vec![Series::new(
            "RevPAF",
            Kind::Line,
            report.trend.iter().map(|m| m.revenue.revpaf).collect(),
        )],
        from_zero: false,
    };
    let chart_pau = Chart {
        id: "chart-revpau".into(),
        title: "RevPAU by month (per unit per month)".into(),
        unit: "per unit".into(),
        labels,
        series: vec![Series::new(
            "RevPAU",
            Kind::Line,
            report.trend.iter().map(|m| m.revenue.revpau).collect(),
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
            div { "RevPAU" b id="revpau" { (opt(pf.revpau)) } }
            div { "RevPAF" b id="revpaf" { (opt(pf.revpaf)) } }
            div { "Potential rent" b { (opt(pf.gross_potential_rent)) } }
            div { "Actual rent" b { (opt(pf.actual_rent)) } }
            div { "Gap" b { (opt(pf.rent_gap)) } span class="muted" { (opt(pf.rent_gap_pct)) "%" } }
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
