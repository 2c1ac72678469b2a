//! The portfolio home: KPI tiles from `GET /api/v1/analytics/portfolio` and the facilities
//! table with each one's latest recommendation summary (`GET /api/v1/recommendation-runs/latest`),
//! sorted on the server by the `sort` and `dir` query parameters.

use super::chart::Table;
use super::extract::Query;
use super::figures::{cells, Figures};
use super::page::{self, Messages, Nav, PageResult};
use super::session::SignedIn;
use crate::state::AppState;
use axum::extract::State;
use domain::analytics::AnalyticsSettings;
use jobs::analytics::reports::portfolio::{FacilityOut, Report};
use jobs::pricing::RunSummary;
use maud::{html, Markup};
use serde::Deserialize;
use std::cmp::Ordering;
use std::collections::HashMap;
use uuid::Uuid;

#[derive(Deserialize)]
pub struct PageQuery {
    sort: Option<String>,
    dir: Option<String>,
    csv: Option<String>,
}

/// The sortable columns: query value and heading.
const COLUMNS: [(&str, &str); 10] = [
    ("name", "Facility"),
    ("mode", "Mode"),
    ("occupancy", "Occupancy"),
    ("revpaf", "RevPAF"),
    ("gap", "Rent gap (% of in-place)"),
    ("flags", "Risk flags"),
    ("data", "Latest data"),
    ("raise", "Raise"),
    ("hold", "Hold"),
    ("lower", "Lower"),
];

struct Row<'a> {
    f: &'a FacilityOut,
    run: Option<&'a RunSummary>,
}

fn cmp_opt(a: Option<f64>, b: Option<f64>) -> Ordering {
    // Missing figures sort last either way (handled by the caller's reverse).
    match (a, b) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

fn sort_rows(rows: &mut [Row<'_>], sort: &str, descending: bool) {
    let count = |r: &Row<'_>, pick: fn(&RunSummary) -> i64| r.run.map(|x| pick(x) as f64);
    rows.sort_by(|a, b| {
        let o = match sort {
            "mode" => a.f.mode.cmp(&b.f.mode),
            "occupancy" => cmp_opt(a.f.occupancy_pct, b.f.occupancy_pct),
            "revpaf" => cmp_opt(a.f.revenue.revpaf, b.f.revenue.revpaf),
            "gap" => cmp_opt(a.f.revenue.rent_gap_pct, b.f.revenue.rent_gap_pct),
            "flags" => a.f.flags.len().cmp(&b.f.flags.len()),
            "data" => a.f.as_of.cmp(&b.f.as_of),
            "raise" => cmp_opt(count(a, |x| x.raise), count(b, |x| x.raise)),
            "hold" => cmp_opt(count(a, |x| x.hold), count(b, |x| x.hold)),
            "lower" => cmp_opt(count(a, |x| x.lower), count(b, |x| x.lower)),
            _ => {
                a.f.facility_name
                    .to_lowercase()
                    .cmp(&b.f.facility_name.to_lowercase())
            }
        };
        let o = if descending { o.reverse() } else { o };
        o.then_with(|| a.f.facility_name.cmp(&b.f.facility_name))
    });
}

pub async fn show(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(q): Query<PageQuery>,
) -> PageResult {
    let settings = AnalyticsSettings::default();
    let today = chrono::Utc::now().date_naive();
    let (report, runs) = tokio::try_join!(
        jobs::analytics::reports::portfolio::report(
            &state.db,
            s.company_id,
            &s.scope,
            today,
            &settings.flags
        ),
        jobs::pricing::latest_runs(&state.db, s.company_id)
    )?;
    let by_facility: HashMap<Uuid, &RunSummary> =
        runs.iter().map(|r| (r.facility_id, &r.run)).collect();
    let sort = COLUMNS
        .iter()
        .map(|(k, _)| *k)
        .find(|k| Some(*k) == q.sort.as_deref())
        .unwrap_or("name");
    let descending = q.dir.as_deref() == Some("desc");
    let mut rows: Vec<Row<'_>> = report
        .facilities
        .iter()
        .map(|f| Row {
            f,
            run: by_facility.get(&f.facility_id).copied(),
        })
        .collect();
    sort_rows(&mut rows, sort, descending);
    let fig = Figures::new(s.currency);
    let table = facilities_table(&fig, &rows);
    let query = format!(
        "sort={sort}&dir={}",
        if descending { "desc" } else { "asc" }
    );
    if let Some(r) = super::chart::export(&[&table], q.csv.as_deref(), "portfolio") {
        return Ok(r);
    }
    let body = html! {
        (kpis(&fig, &report))
        (facilities_section(&table, &rows, sort, descending, &query))
    };
    Ok(page::render(page::frame(
        &s,
        Nav::Portfolio,
        "Portfolio",
        &Messages::default(),
        body,
    )))
}

/// The facilities in their sorted order, with the figures of their row.
fn facilities_table(fig: &Figures, rows: &[Row<'_>]) -> Table {
    let mut table = Table::new(
        "portfolio-facilities",
        "Every facility with its latest figures and latest recommendation run",
        &COLUMNS.map(|(_, h)| h),
    );
    for r in rows {
        table.row(cells![
            r.f.facility_name.clone(),
            r.f.mode.replace('_', "-"),
            fig.pct(r.f.occupancy_pct),
            fig.per_sqft(r.f.revenue.revpaf),
            fig.pct(r.f.revenue.rent_gap_pct),
            fig.count(r.f.flags.len() as f64),
            r.f.as_of.map(|d| d.to_string()).unwrap_or_default(),
            fig.count(r.run.map(|x| x.raise as f64)),
            fig.count(r.run.map(|x| x.hold as f64)),
            fig.count(r.run.map(|x| x.lower as f64)),
        ]);
    }
    table
}

/// The key figures of the company: a tile each, and the month's moves under them.
fn kpis(fig: &Figures, report: &Report) -> Markup {
    let roll = &report.rollup;
    let flags: usize = report.facilities.iter().map(|f| f.flags.len()).sum();
    html! {
        section aria-labelledby="kpi-h" {
            h2 id="kpi-h" class="skip" { "Key figures" }
            div class="figures" id="kpis" {
                div { "Occupancy (units)" b id="kpi-occupancy" { (fig.pct(roll.unit_occupancy_pct)) } }
                div { "RevPAF (per sq ft, month)"
                    b id="kpi-revpaf" { (fig.per_sqft(roll.revenue.revpaf)) }
                    @if roll.revenue.rentable_sqft_estimated { span class="muted" { "area estimated" } }
                }
                div { "Rent gap (street − in place)"
                    b id="kpi-rent-gap" { (fig.amount(roll.revenue.rent_gap)) }
                    span class="muted" { (fig.pct(roll.revenue.rent_gap_pct)) " of in-place rent" }
                    @if roll.revenue.actual_rent_estimated {
                        span class="muted" id="kpi-rent-estimated" { "in-place rent partly estimated: " (super::analytics::rent_estimate(&roll.revenue)) }
                    }
                }
                div { "Lost to vacancy and rent gap"
                    b id="kpi-revenue-gap" { (fig.amount(roll.revenue.revenue_gap)) }
                    span class="muted" { (fig.pct(roll.revenue.revenue_gap_pct)) " of potential" }
                }
                div { "Facilities in lease-up" b id="kpi-lease-up" { (fig.count(roll.facilities_in_lease_up as f64)) } }
                div { "Risk flags" b id="kpi-flags" { (fig.count(flags as f64)) }
                    span class="muted" { "on " (roll.facilities_flagged) " of " (roll.facilities) " facilities" } }
            }
            p class="muted" {
                @if let Some(d) = report.as_of { "Latest data " (d) ". " }
                "Move-ins this month " (roll.move_ins_mtd) ", move-outs " (roll.move_outs_mtd)
                ", net " (roll.net_absorption_mtd) "."
            }
        }
    }
}

/// The facilities table, drawn here rather than by [`Table::render`]: its headings are the
/// sort links (the current column marked) and each name links to the facility's page.
fn facilities_section(
    table: &Table,
    rows: &[Row<'_>],
    sort: &str,
    descending: bool,
    query: &str,
) -> Markup {
    html! {
        section aria-labelledby="fac-h" {
            h2 id="fac-h" { "Facilities" }
            p class="muted" { "Sort by a column's heading; the Raise / Hold / Lower columns count the sizes of the latest recommendation run." }
            div class="table-head" {
                span class="muted" { (table.caption) }
                a class="csv" href={"?" (query) "&csv=" (table.id)} download { "CSV" }
            }
            div class="table-wrap" {
                table id=(table.id) {
                    thead { tr {
                        @for (key, heading) in COLUMNS {
                            @let next = if key == sort && !descending { "desc" } else { "asc" };
                            @let mark = if key != sort { "" } else if descending { " ▼" } else { " ▲" };
                            th scope="col" aria-sort=[(key == sort).then_some(if descending { "descending" } else { "ascending" })] {
                                a href={"?sort=" (key) "&dir=" (next)} { (heading) (mark) }
                            }
                        }
                    } }
                    tbody {
                        @for (r, cells) in rows.iter().zip(&table.rows) {
                            tr data-facility-id=(r.f.facility_id) {
                                td { a href=(super::facility::href(r.f.facility_id)) { (cells[0]) } }
                                @for c in &cells[1..] { td class="num" { (c) } }
                            }
                        }
                    }
                }
            }
        }
    }
}
