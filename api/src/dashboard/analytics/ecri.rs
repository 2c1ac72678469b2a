//! The ECRI page: suggested increases for existing tenants per size, with guardrails and uplift;
//! for one facility, the ECRI engine's suggestion per tenant of its rent roll with its reasons
//! (`GET /api/v1/facilities/:id/ecri`, from the same `jobs::ecri::facility`).

use super::*;
use jobs::analytics::reports::ecri::{FacilityOut, Report, SizeOut, Totals};
use jobs::ecri::FacilityEcri;

pub async fn ecri(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(p): Query<Params>,
) -> PageResult {
    let facility = p.facility()?;
    let settings = AnalyticsSettings::default();
    let report =
        reports::ecri::report(&state.db, s.company_id, facility, &s.scope, &settings.ecri).await?;
    let fig = Figures::new(s.currency);
    let (sizes, totals) = tables(&fig, &report, facility.is_some());
    let chart = if facility.is_some() {
        sizes_chart(fig, report.facilities.first())
    } else {
        facilities_chart(fig, &report)
    };
    let chart_table = chart.table("chart-ecri-table");
    let engine = match facility {
        Some(id) => Some(jobs::ecri::facility(&state.db, s.company_id, id).await?),
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
    let body = html! {
        (form)
        (tiles(&fig, &report.totals))
        (chart::with_table(&chart, &chart_table, &q))
        @if facility.is_some() {
            h2 { "Per size" }
            p class="muted" { "The per-size rule: at most a step of 10 %, never above street." }
            (sizes.render(&q))
            @if let Some(e) = &engine {
                (engine_section(&fig, e, &tenants, &q))
            }
        } @else {
            p class="muted" { "Choose a facility for its sizes, their guardrails and the expected uplift per size." }
        }
        h2 { "Per facility" }
        (totals.render(&q))
        (calibration.render(&fig, &q))
    };
    frame(&s, "Rent increases for existing tenants", PAGES[0].0, body)
}

/// The page's two tables: per size (filled only for one facility, where its sizes are shown)
/// and per facility, with its totals.
fn tables(fig: &Figures, report: &Report, one_facility: bool) -> (Table, Table) {
    let mut sizes = Table::new(
        "ecri-sizes",
        "Per size: the tenants below street rate, the suggested increase and its guardrails",
        &[
            "Facility",
            "Size",
            "Street rate",
            "Tenants",
            "Average rent",
            "Rent gap (%)",
            "Tenants affected",
            "Increase",
            "Increase (%)",
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
        totals.row(cells![
            f.facility_name.clone(),
            f.as_of.map(|d| d.to_string()).unwrap_or_default(),
            fig.count(f.totals.tenants as f64),
            fig.count(f.totals.tenants_affected as f64),
            fig.amount(f.totals.monthly_uplift),
            fig.expected(f.totals.expected_move_outs),
            fig.amount(f.totals.net_monthly_uplift),
            f.reason.clone().unwrap_or_default(),
        ]);
        if !one_facility {
            continue;
        }
        for z in &f.sizes {
            sizes.row(size_row(fig, f, z));
        }
    }
    (sizes, totals)
}

/// A size's row of the per-size table: its suggestion, and the guardrails that bound it.
fn size_row(fig: &Figures, f: &FacilityOut, z: &SizeOut) -> Vec<Cell> {
    let e = z.ecri.as_ref();
    cells![
        f.facility_name.clone(),
        z.size.clone(),
        fig.rate(z.street_rate),
        fig.count(e.map(|e| e.tenants as f64)),
        fig.rate(e.map(|e| e.current_avg_rent)),
        fig.pct(e.map(|e| e.rent_gap_pct)),
        fig.count(e.map(|e| e.tenants_affected as f64)),
        fig.rate(e.map(|e| e.suggested_increase)),
        fig.pct(e.map(|e| e.suggested_increase_pct)),
        fig.rate(e.and_then(|e| e.suggested_new_rent)),
        fig.amount(e.map(|e| e.monthly_uplift)),
        fig.expected(e.map(|e| e.expected_move_outs)),
        fig.amount(e.map(|e| e.net_monthly_uplift)),
        e.map(|e| {
            e.guardrails
                .iter()
                .map(|g| format!("{} ({} tenants)", word(&g.guardrail), g.tenants))
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_default(),
        z.reason.clone().unwrap_or_default(),
    ]
}

/// One facility's chart: each size's monthly uplift, before and after expected move-outs.
fn sizes_chart(fig: Figures, f: Option<&FacilityOut>) -> Chart {
    let sizes_of = f.map(|f| f.sizes.as_slice()).unwrap_or_default();
    Chart {
        id: "chart-ecri".into(),
        title: "Monthly uplift per size, before and after expected move-outs".into(),
        unit: "per month".into(),
        measure: Measure::Amount,
        figures: fig,
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
}

/// The company's chart: the facilities of the largest net monthly uplift (at most
/// [`MAX_BARS`]), largest first.
fn facilities_chart(fig: Figures, report: &Report) -> Chart {
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
        measure: Measure::Amount,
        figures: fig,
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
}

/// The tiles of the totals over every facility shown.
fn tiles(fig: &Figures, t: &Totals) -> Markup {
    html! {
        div class="figures" id="ecri-totals" {
            div { "Tenants" b { (fig.count(t.tenants as f64)) } }
            div { "Tenants affected" b id="ecri-affected" { (fig.count(t.tenants_affected as f64)) } }
            div { "Monthly uplift" b id="ecri-uplift" { (fig.amount(t.monthly_uplift)) } }
            div { "Expected move-outs" b { (fig.expected(t.expected_move_outs)) } }
            div { "Net monthly uplift" b id="ecri-net" { (fig.amount(t.net_monthly_uplift)) } }
        }
    }
}

/// One facility's ECRI engine section: what its suggestions rest on, a stop-loss in force,
/// the link to make a batch of them, and the suggestion per tenant.
fn engine_section(fig: &Figures, e: &FacilityEcri, tenants: &Table, q: &str) -> Markup {
    html! {
        h2 { "Per tenant: the ECRI engine" }
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
        p { a id="ecri-batches-link" href={"/app/facilities/" (e.facility_id) "/ecri"} { "Make a batch of these increases, approve it and send the letters" } }
        (tenants.render(q))
    }
}
