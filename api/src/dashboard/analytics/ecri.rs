//! The ECRI page: the engine's suggested increases for existing tenants, read from each
//! facility's latest stored run (`GET /api/v1/analytics/ecri`): totals, per size over the
//! facilities in scope, and per facility a page at a time as a portfolio-wide queue (each
//! facility linked to its work queue with its tenants to raise and expected gain, the largest
//! gain first); for one facility, its suggestion per tenant as CSV (the page links to the
//! facility's queue rather than listing hundreds of tenants).

use super::*;
use jobs::analytics::reports::ecri::{FacilityOut, Page, Report, Totals};
use jobs::ecri::sizes::SizeSummary;
use jobs::ecri::FacilityEcri;

pub async fn ecri(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(p): Query<Params>,
) -> PageResult {
    let facility = p.facility()?;
    let page = Page {
        limit: None,
        cursor: p.cursor.clone().filter(|c| !c.trim().is_empty()),
    };
    let report = reports::ecri::report(&state.db, s.company_id, facility, &s.scope, &page).await?;
    let fig = Figures::new(s.currency);
    let (sizes, totals) = tables(&fig, &report);
    let chart = if facility.is_some() {
        sizes_chart(fig, &report.sizes)
    } else {
        facilities_chart(fig, &report)
    };
    let chart_table = chart.table("chart-ecri-table");
    let engine = match facility {
        Some(id) => jobs::ecri::runs::latest(&state.db, s.company_id, id)
            .await?
            .run
            .map(|r| r.ecri),
        None => None,
    };
    let no_lines = Vec::new();
    let tenants = crate::dashboard::ecri::suggestions_table(
        &fig,
        engine.as_ref().map_or(&no_lines, |e| &e.lines),
        "ecri-tenants",
    );
    let calibration = super::calibration::section(&state, &s, facility, fig).await?;
    if let Some(r) = chart::export(
        &[
            &sizes,
            &totals,
            &chart_table,
            &tenants,
            &calibration.chart_table,
            &calibration.facilities,
        ],
        p.csv.as_deref(),
        "ecri",
    ) {
        return Ok(r);
    }
    let q = p.query();
    let form = scope_form(&state, &s, PAGES[0].0, facility, html! {}).await?;
    let next = report.next_cursor.as_ref().map(|c| {
        let mut n = form_urlencoded::Serializer::new(String::new());
        n.append_pair("cursor", c);
        format!("/app/analytics/ecri?{}", n.finish())
    });
    let body = html! {
        (form)
        (tiles(&fig, &report.totals))
        (coverage(&report))
        (chart::with_table(&chart, &chart_table, &q))
        h2 { "Per size" }
        p class="muted" { "The engine's suggestions of each facility's latest run, summed per size over "
            @if facility.is_some() { "this facility" } @else { "every facility shown" } "." }
        (sizes.render(&q))
        @if let Some(e) = &engine {
            (engine_section(&fig, e, &tenants, &q))
        }
        h2 { "Per facility: where to raise rents" }
        p class="muted" { "Each facility's latest run, the largest expected gain first; a facility's name opens its queue of tenants." }
        (facilities_queue(&fig, &report, &totals, &q))
        @if let Some(href) = &next {
            p { a id="ecri-next-page" href=(href) { "Next facilities" } }
        }
        (calibration.render(&fig, &q))
    };
    frame(&s, "Rent increases for existing tenants", PAGES[0].0, body)
}

/// How many facilities the figures cover, and how many runs are out of date.
fn coverage(r: &Report) -> Markup {
    let c = &r.coverage;
    html! {
        p class="muted" id="ecri-coverage" {
            "From the latest ECRI run of " (c.with_run) " of " (c.facilities) " facilities"
            @if let Some(at) = c.oldest_run_at { " (the oldest of " (at.format("%Y-%m-%d %H:%M UTC")) ")" }
            "."
            @if c.stale > 0 { " " (c.stale) " of them predate the facility's latest roll or snapshot; a new run is made after each sync and nightly." }
        }
    }
}

/// The page's two tables: per size over the facilities in scope, and per facility.
fn tables(fig: &Figures, report: &Report) -> (Table, Table) {
    let mut sizes = Table::new(
        "ecri-sizes",
        "Per size: tenants, suggested increases, expected move-outs and the guardrails that bound them",
        &[
            "Size",
            "Tenants",
            "Tenants increased",
            "Average increase (%)",
            "Median increase (%)",
            "Monthly uplift",
            "Expected move-outs",
            "Expected gain",
            "Guardrails",
        ],
    );
    for z in &report.sizes {
        sizes.row(size_row(fig, z));
    }
    let mut totals = Table::new(
        "ecri-facilities",
        "Per facility: totals of its latest run",
        &[
            "Facility",
            "As of",
            "Tenants",
            "Tenants increased",
            "Monthly uplift",
            "Expected move-outs",
            "Expected gain",
            "Run",
            "Note",
        ],
    );
    // The report's order: the largest expected gain first, over every page.
    for f in &report.facilities {
        totals.row(facility_row(fig, f));
    }
    (sizes, totals)
}

/// The per-facility table as a queue: each facility's name links to its ECRI work queue, then
/// its tenants to raise and expected gain; the rest of its figures follow. Rows as in `totals`
/// (the CSV).
fn facilities_queue(fig: &Figures, report: &Report, totals: &Table, q: &str) -> Markup {
    let href = if q.is_empty() {
        format!("?csv={}", totals.id)
    } else {
        format!("?{q}&csv={}", totals.id)
    };
    html! {
        div class="table-head" {
            span class="muted" { (totals.caption) }
            a class="csv" href=(href) download { "CSV" }
        }
        div class="table-wrap" {
            table id="ecri-facilities" {
                thead { tr {
                    th scope="col" { "Facility" } th scope="col" { "Tenants to raise" }
                    th scope="col" { "Expected gain" } th scope="col" { "Monthly uplift" }
                    th scope="col" { "Expected move-outs" } th scope="col" { "Tenants" }
                    th scope="col" { "Run" }
                } }
                tbody {
                    @for (f, row) in report.facilities.iter().zip(&totals.rows) {
                        tr {
                            td { a class="ecri-queue-link" href={"/app/facilities/" (f.facility_id) "/ecri"} { (f.facility_name) } }
                            td class="num" { (fig.count(f.totals.tenants_affected as f64)) }
                            td class="num" { (fig.amount(f.totals.expected_gain)) }
                            td class="num" { (fig.amount(f.totals.monthly_uplift)) }
                            td class="num" { (fig.expected(f.totals.expected_move_outs)) }
                            td class="num" { (fig.count(f.totals.tenants as f64)) }
                            td { (row[7]) @if let Some(r) = &f.reason { " " span class="muted" { (r) } } }
                        }
                    }
                }
                @if report.facilities.is_empty() {
                    tfoot { tr { td class="muted empty" colspan="7" { "None yet." } } }
                }
            }
        }
    }
}

fn facility_row(fig: &Figures, f: &FacilityOut) -> Vec<Cell> {
    let run = f.run.as_ref().map(|r| {
        let at = r.generated_at.format("%Y-%m-%d %H:%M UTC").to_string();
        match &r.stale {
            Some(why) => format!("{at} (out of date: {why})"),
            None => at,
        }
    });
    cells![
        f.facility_name.clone(),
        f.as_of.map(|d| d.to_string()).unwrap_or_default(),
        fig.count(f.totals.tenants as f64),
        fig.count(f.totals.tenants_affected as f64),
        fig.amount(f.totals.monthly_uplift),
        fig.expected(f.totals.expected_move_outs),
        fig.amount(f.totals.expected_gain),
        run.unwrap_or_else(|| "none yet".to_owned()),
        f.reason.clone().unwrap_or_default(),
    ]
}

/// A size's row: its suggestions, and the guardrails that bound them.
fn size_row(fig: &Figures, z: &SizeSummary) -> Vec<Cell> {
    cells![
        z.size.clone(),
        fig.count(z.tenants as f64),
        fig.count(z.tenants_affected as f64),
        fig.pct(z.avg_increase_pct),
        fig.pct(z.median_increase_pct),
        fig.amount(z.monthly_uplift),
        fig.expected(z.expected_move_outs),
        fig.amount(z.expected_gain),
        z.guardrails
            .iter()
            .map(|(g, n)| format!("{} ({n} tenants)", word(g)))
            .collect::<Vec<_>>()
            .join("; "),
    ]
}

/// One facility's chart: each size's monthly uplift and expected gain.
fn sizes_chart(fig: Figures, sizes: &[SizeSummary]) -> Chart {
    Chart {
        id: "chart-ecri".into(),
        title: "Monthly uplift per size if every suggestion is made".into(),
        unit: "per month".into(),
        measure: Measure::Amount,
        figures: fig,
        labels: sizes.iter().map(|z| z.size.clone()).collect(),
        series: vec![Series::new(
            "Monthly uplift",
            Kind::Bar,
            sizes.iter().map(|z| Some(z.monthly_uplift)).collect(),
        )],
        from_zero: true,
    }
}

/// The company's chart: the facilities of this page with the largest monthly uplift (at most
/// [`MAX_BARS`]), largest first.
fn facilities_chart(fig: Figures, report: &Report) -> Chart {
    let mut top: Vec<_> = report.facilities.iter().collect();
    top.sort_by(|a, b| b.totals.monthly_uplift.total_cmp(&a.totals.monthly_uplift));
    top.truncate(MAX_BARS);
    Chart {
        id: "chart-ecri".into(),
        title: format!("Monthly uplift per facility (the {} largest)", top.len()),
        unit: "per month".into(),
        measure: Measure::Amount,
        figures: fig,
        labels: top.iter().map(|f| f.facility_name.clone()).collect(),
        series: vec![Series::new(
            "Monthly uplift",
            Kind::Bar,
            top.iter().map(|f| Some(f.totals.monthly_uplift)).collect(),
        )],
        from_zero: true,
    }
}

/// The tiles of the totals over every facility in scope.
fn tiles(fig: &Figures, t: &Totals) -> Markup {
    html! {
        div class="figures" id="ecri-totals" {
            div { "Tenants" b { (fig.count(t.tenants as f64)) } }
            div { "Tenants increased" b id="ecri-affected" { (fig.count(t.tenants_affected as f64)) } }
            div { "Monthly uplift (per month)" b id="ecri-uplift" { (fig.amount(t.monthly_uplift)) } }
            div { "Expected move-outs" b { (fig.expected(t.expected_move_outs)) } }
            div { "Expected gain over the horizon" b id="ecri-net" { (fig.amount(t.expected_gain)) } }
        }
    }
}

/// One facility's ECRI engine section: what its suggestions rest on, a stop-loss in force,
/// the link to make a batch of them, and the suggestion per tenant.
fn engine_section(fig: &Figures, e: &FacilityEcri, tenants: &Table, q: &str) -> Markup {
    html! {
        h2 { "Per tenant" }
        p class="muted" id="ecri-engine-basis" {
            @match e.basis {
                Some(jobs::ecri::Basis::RentRoll) => { "From the rent roll of " (e.as_of.map(|d| d.to_string()).unwrap_or_default()) ". " }
                Some(jobs::ecri::Basis::Cohorts) => { "No rent roll yet: one line per cohort of the snapshot of " (e.as_of.map(|d| d.to_string()).unwrap_or_default()) ". " }
                None => {}
            }
            "The increase that earns most over " (fig.count(e.settings.horizon_months)) " months, weighing the chance each tenant stays (learned from "
            (fig.count(f64::from(e.model.increased_tenants))) " of this facility's past increases and "
            (fig.count(f64::from(e.model.company_increased_tenants))) " of the company's others) against a vacant unit's cost. It may go above street."
        }
        @if let Some(stop) = &e.stop_loss {
            p class="banner" id="ecri-stop-loss" {
                "Increases are held: " (fig.pct(stop.increased_move_out_pct)) " of the last "
                (fig.count(f64::from(stop.increased_tenants))) " increased tenants left within 90 days, against "
                (fig.pct(stop.baseline_move_out_pct)) " of those not increased."
            }
        }
        @if let Some(reason) = &e.reason { p class="muted" { (reason) } }
        p {
            a id="ecri-batches-link" href={"/app/facilities/" (e.facility_id) "/ecri"} { "Open the facility's queue of tenants: filter, pick, draft a batch, approve it and send the letters" }
            " · "
            a class="csv" id="ecri-tenants-csv" href={"?" (q) (if q.is_empty() { "" } else { "&" }) "csv=" (tenants.id)} download {
                "CSV of its " (e.lines.len()) " lines"
            }
        }
    }
}
