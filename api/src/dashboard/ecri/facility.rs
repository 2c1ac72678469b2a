//! A facility's ECRI page, a work queue: the run's summary per size, its lines filtered and a
//! page at a time with a box each to draft a batch of the tenants picked (`queue`), a draft of
//! every suggestion (optionally of some sizes), the batches made so far with what approved ones
//! did (predicted against realized stay).

use super::queue::{self, Filters};
use super::{batch_href, notice_text, respond, suggestions_table};
use crate::dashboard::chart::{self, Chart, Kind, Series, Table};
use crate::dashboard::extract::Query;
use crate::dashboard::figures::{cells, Figures, Measure};
use crate::dashboard::page::{self, PageResult};
use crate::dashboard::session::SignedIn;
use crate::extract::path_id;
use crate::state::AppState;
use axum::extract::{Path, State};
use domain::ids::FacilityId;
use jobs::ecri_batches::{self as batches, Batch, Status};
use jobs::sessions::Session;
use maud::html;
use serde::Deserialize;

/// The page's query: a CSV asked for, the notice of a form just sent, the queue's filters.
#[derive(Deserialize)]
pub struct ShowQuery {
    csv: Option<String>,
    notice: Option<String>,
    size: Option<String>,
    tier: Option<String>,
    band: Option<String>,
    guardrail: Option<String>,
    flagged: Option<String>,
    page: Option<String>,
}

/// The facility's ECRI page.
pub async fn show(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
    Query(q): Query<ShowQuery>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    let filters = Filters {
        size: q.size,
        tier: q.tier,
        band: q.band,
        guardrail: q.guardrail,
        flagged: q.flagged,
        page: q.page,
    };
    facility_page(
        &state,
        &s,
        id,
        (q.csv.as_deref(), &filters),
        notice_text(q.notice.as_deref()),
        None,
    )
    .await
}

/// The page; `asked` is the CSV asked for and the queue's filters.
pub(super) async fn facility_page(
    state: &AppState,
    s: &Session,
    id: FacilityId,
    asked: (Option<&str>, &Filters),
    notice: Option<&'static str>,
    error: Option<String>,
) -> PageResult {
    let (csv, filters) = asked;
    let latest = jobs::ecri::runs::latest(&state.db, s.company_id, id).await?;
    let run_info = run_info(s, &latest);
    let engine = match latest.run {
        Some(r) => r.ecri,
        None => jobs::ecri::FacilityEcri::without_run(
            latest.facility_id,
            latest.facility_name.clone(),
            match latest.pending_job {
                Some(_) => {
                    "The facility's first ECRI run is on its way: reload in a moment.".to_owned()
                }
                None => "No ECRI run yet: one follows the facility's next sync, or run one now."
                    .to_owned(),
            },
        ),
    };
    let listed = batches::list(&state.db, s.company_id, id, None).await?;
    let fig = Figures::new(s.currency);
    // The queue: every line passing the filters (the CSV holds them all, the page one page).
    let matching = queue::filtered(&engine.lines, filters);
    let owned: Vec<jobs::ecri::TenantLine> = matching.iter().map(|l| (*l).clone()).collect();
    let tenants = suggestions_table(&fig, &owned, "ecri-suggestions");
    let sizes = queue::sizes_table(
        &fig,
        &jobs::ecri::sizes::summarize(&engine.lines, &engine.markets),
    );
    let held = queue::in_batches(&listed, chrono::Utc::now().date_naive());
    let list = batches_table(&fig, &listed);
    // Predicted against realized stay, per approved batch (oldest first).
    let approved: Vec<&Batch> = listed
        .iter()
        .rev()
        .map(|b| &b.batch)
        .filter(|b| b.status == Status::Approved)
        .collect();
    let stay_chart = stay_chart(state, &fig, &approved).await?;
    let stay_table = stay_chart.table("chart-ecri-stay-table");
    if let Some(r) = chart::export(
        &[&sizes, &tenants, &list, &stay_table],
        csv,
        &format!("ecri-{id}"),
    ) {
        return Ok(r);
    }
    let action = format!("/app/facilities/{id}/ecri-batches");
    let body = html! {
        p class="muted" {
            a href={"/app/facilities/" (id)} { "Pricing of " (engine.facility_name) } " · "
            a href={"/app/analytics/ecri?facility_id=" (id)} { "ECRI analytics" } " · "
            a id="ecri-calibration-link" href="/app/analytics/ecri#calibration" { "Calibration of the stay model (predicted against realized stay, all facilities)" }
        }
        (run_info)
        section aria-labelledby="sizes-h" {
            h2 id="sizes-h" { "Per size" }
            @if let Some(reason) = &engine.reason { p class="muted" { (reason) } }
            (sizes.render(""))
        }
        section aria-labelledby="queue-h" {
            h2 id="queue-h" { "Tenants" }
            p class="muted" {
                "Pick tenants to draft a batch of them; tenants whose approved increase is not yet in force are shown with their batch and cannot be picked again. "
                a class="csv" id="queue-csv" href={"?" (csv_query(filters)) "csv=ecri-suggestions"} download { "CSV of every matching line" }
            }
            (queue::filter_form(&engine.lines, filters))
            (queue::queue(s, &fig, &matching, filters, &held, &action))
        }
        (new_batch(s, &fig, &engine, &action))
        section aria-labelledby="batches-h" {
            h2 id="batches-h" { "Batches" }
            @if listed.is_empty() { p class="muted" { "No batch yet." } }
            @else {
                ul class="batches" {
                    @for b in &listed {
                        li { a href=(batch_href(id.uuid(), b.batch.id)) {
                            (b.batch.status.as_str()) " batch of " (b.batch.created_at.format("%Y-%m-%d %H:%M UTC"))
                        } }
                    }
                }
                (list.render(""))
            }
            @if !approved.is_empty() {
                (chart::with_table(&stay_chart, &stay_table, ""))
            }
        }
    };
    respond(
        s,
        &format!("Rent increases: {}", engine.facility_name),
        notice,
        error,
        body,
    )
}

/// The filters' query string ready for one more pair.
fn csv_query(f: &Filters) -> String {
    let q = f.query();
    if q.is_empty() {
        q
    } else {
        format!("{q}&")
    }
}

/// The facility's batches, newest first.
fn batches_table(fig: &Figures, listed: &[batches::Summary]) -> Table {
    let mut list = Table::new(
        "ecri-batches",
        "Batches, newest first",
        &[
            "Created",
            "By",
            "Status",
            "Lines",
            "Tenants",
            "Monthly uplift",
            "Notice",
            "In force",
            "Approved by",
        ],
    );
    for b in listed {
        list.row(cells![
            b.batch.created_at.format("%Y-%m-%d %H:%M UTC").to_string(),
            b.batch.created_by.label(),
            b.batch.status.as_str().to_owned(),
            fig.count(f64::from(b.totals.lines)),
            fig.count(b.totals.tenants as f64),
            fig.amount(b.totals.monthly_uplift),
            b.batch
                .notice_date
                .map(|d| d.to_string())
                .unwrap_or_default(),
            b.batch
                .effective_date
                .map(|d| d.to_string())
                .unwrap_or_default(),
            b.batch
                .approved_by
                .as_ref()
                .map(|a| a.label())
                .unwrap_or_default(),
        ]);
    }
    list
}

/// Tenants still in place 90 days after the notice, predicted against realized, per approved
/// batch.
async fn stay_chart(
    state: &AppState,
    fig: &Figures,
    approved: &[&Batch],
) -> Result<Chart, crate::dashboard::page::PageError> {
    let mut predicted = Vec::new();
    let mut realized = Vec::new();
    for b in approved {
        let o = batches::outcome::outcome(&state.db, b).await?;
        predicted.push(o.as_ref().map(|o| o.predicted_stay_pct));
        realized.push(o.and_then(|o| o.realized_stay_pct));
    }
    let stay_chart = Chart {
        id: "chart-ecri-stay".into(),
        title: "Tenants still in place 90 days after the notice: predicted against realized, per approved batch".into(),
        unit: "%".into(),
        measure: Measure::Pct,
        figures: *fig,
        labels: approved
            .iter()
            .map(|b| b.notice_date.map(|d| d.to_string()).unwrap_or_default())
            .collect(),
        series: vec![
            Series::new("Predicted", Kind::Bar, predicted),
            Series::new("Realized", Kind::Bar, realized),
        ],
        from_zero: true,
    };
    Ok(stay_chart)
}

/// The form of a new batch, with the stop-loss when it holds increases and how many lines
/// have a suggestion.
fn new_batch(
    s: &Session,
    fig: &Figures,
    engine: &jobs::ecri::FacilityEcri,
    action: &str,
) -> maud::Markup {
    let suggested = engine
        .lines
        .iter()
        .filter(|l| l.suggestion.increase > 0.0)
        .count();
    html! {
        section aria-labelledby="batch-new-h" {
            h2 id="batch-new-h" { "A batch of every suggestion" }
            @if let Some(stop) = &engine.stop_loss {
                p class="banner" id="ecri-stop-loss" {
                    "Increases are held: " (fig.pct(stop.increased_move_out_pct)) " of the last "
                    (fig.count(f64::from(stop.increased_tenants))) " increased tenants left within 90 days, against "
                    (fig.pct(stop.baseline_move_out_pct)) " of those not increased."
                }
            }
            p class="muted" id="ecri-suggested" {
                (fig.count(suggested as f64)) " of " (fig.count(engine.lines.len() as f64)) " lines have a suggested increase"
                @if let Some(d) = engine.as_of { " (rent roll of " (d) ")" } "."
                @if engine.settings.holdout_pct > 0.0 {
                    " A batch holds " (fig.pct(engine.settings.holdout_pct)) " of the eligible tenants out at random as a control group."
                }
            }
            form class="card stack" id="new-batch" method="post" action=(action) {
                (page::csrf(s))
                label { "Only these sizes (optional, comma-separated, e.g. 10x10, 10x15)"
                    input type="text" name="sizes";
                }
                div class="actions" { button type="submit" id="create-batch" { "Create a draft batch of every suggested increase" } }
            }
        }
    }
}

/// Which stored run the page shows, whether it is stale, and the button that asks for a new one
/// (for the roles that may).
fn run_info(s: &Session, latest: &jobs::ecri::runs::Latest) -> maud::Markup {
    let may_run = s.role.allows(jobs::access::Permission::Operate);
    let id = latest.facility_id;
    html! {
        section class="card" id="ecri-run" aria-label="ECRI run" {
            @match &latest.run {
                Some(r) => p id="ecri-run-info" {
                    "Suggestions of the ECRI run of " (r.created_at.format("%Y-%m-%d %H:%M UTC"))
                    " (" (trigger_text(&r.trigger)) ")."
                    @if let Some(why) = &r.stale { " " strong id="ecri-run-stale" { "Out of date: " (why) "." } }
                },
                None => p id="ecri-run-info" { "No ECRI run of this facility yet." },
            }
            @if latest.pending_job.is_some() {
                p class="muted" id="ecri-run-pending" { "A new run is on its way; reload the page in a moment." }
            }
            @if may_run {
                form method="post" action={"/app/facilities/" (id) "/ecri-run"} {
                    (page::csrf(s))
                    button type="submit" id="ecri-run-now" { "Run now" }
                }
            } @else {
                p class="muted" { "An operator or an admin can ask for a new run." }
            }
        }
    }
}

fn trigger_text(t: &str) -> &'static str {
    match t {
        "sync" => "after a sync",
        "nightly" => "nightly",
        "settings" => "after a settings change",
        "batch" => "after an approval",
        "on_demand" => "asked for",
        _ => "run",
    }
}
