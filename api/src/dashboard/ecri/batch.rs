//! One ECRI batch's page: its totals and dates, its lines (a form while it is a draft), and
//! its outcome once approved.

use super::batch_lines::{self, LineFilters, SHOWN};
use super::{batch_href, href, notice_text, respond};
use crate::dashboard::chart::{self, Chart, Kind, Series, Table};
use crate::dashboard::extract::Query;
use crate::dashboard::figures::{cells, Figures, Measure};
use crate::dashboard::page::{self, PageResult};
use crate::dashboard::session::SignedIn;
use crate::extract::path_id;
use crate::state::AppState;
use axum::extract::{Path, State};
use domain::ids::FacilityId;
use jobs::ecri_batches::{self as batches, Status};
use jobs::sessions::Session;
use maud::html;
use serde::Deserialize;
use uuid::Uuid;

/// The page's query: a CSV asked for, the notice of a form just sent, the lines' filters.
#[derive(Deserialize)]
pub struct BatchQuery {
    csv: Option<String>,
    notice: Option<String>,
    size: Option<String>,
    status: Option<String>,
    page: Option<String>,
}

/// One batch's page.
pub async fn batch(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path((id, bid)): Path<(String, String)>,
    Query(q): Query<BatchQuery>,
) -> PageResult {
    let id: FacilityId = path_id(&id, "facility")?;
    let bid: Uuid = path_id(&bid, "ECRI batch")?;
    let filters = LineFilters {
        size: q.size,
        status: q.status,
        page: q.page,
    };
    batch_page(
        &state,
        &s,
        (id, bid),
        (q.csv.as_deref(), &filters),
        notice_text(q.notice.as_deref()),
        None,
    )
    .await
}

/// The page; `asked` is the CSV asked for and the lines' filters.
pub(super) async fn batch_page(
    state: &AppState,
    s: &Session,
    (id, bid): (FacilityId, Uuid),
    asked: (Option<&str>, &LineFilters),
    notice: Option<&'static str>,
    error: Option<String>,
) -> PageResult {
    let (csv, filters) = asked;
    let b = batches::get(&state.db, s.company_id, id, bid).await?;
    let outcome = batches::outcome::outcome(&state.db, &b).await?;
    let fig = Figures::new(s.currency);
    let t = b.totals();
    let sizes = batch_lines::sizes_table(&fig, &b.lines);
    // The lines passing the filters (the CSV holds them all, the page one page of them).
    let matching = batch_lines::filtered(&b.lines, filters);
    let lines = lines_table(&fig, &matching);
    let (checkpoints, outcome_chart) = outcome_figures(&fig, outcome.as_ref());
    let outcome_table = outcome_chart.table("chart-ecri-outcome-table");
    if let Some(r) = chart::export(
        &[&sizes, &lines, &checkpoints, &outcome_table],
        csv,
        &format!("ecri-batch-{bid}"),
    ) {
        return Ok(r);
    }
    let (page_lines, page, pages) = batch_lines::paged(&matching, filters);
    let pager = batch_lines::pager(matching.len(), page, pages, filters);
    let base = batch_href(id.uuid(), bid);
    let draft = b.status == Status::Draft;
    let may_edit = page::may_post(s, "/app/facilities/{id}/ecri-batches/{bid}/edit");
    let letters_note = if s.role.sees_tenants() {
        "Download the letters (CSV)"
    } else {
        "Download the letters (CSV; customers' names and addresses are left out for your role)"
    };
    let body = html! {
        p class="muted" {
            a href=(href(id.uuid())) { "All batches of " (b.facility_name) }
            " · drawn from the " (if b.basis == jobs::ecri::Basis::RentRoll { "rent roll" } else { "cohorts of the snapshot" }) " of " (b.as_of)
            " · created " (b.created_at.format("%Y-%m-%d %H:%M UTC")) " by " (b.created_by.label())
        }
        div class="figures" id="batch-totals" {
            div { "Status" b id="batch-status" { (b.status.as_str()) } }
            div { "Lines" b id="batch-lines" { (fig.count(f64::from(t.lines))) } }
            div { "Tenants" b { (fig.count(t.tenants as f64)) } }
            div { "Monthly uplift" b id="batch-uplift" { (fig.amount(t.monthly_uplift)) } }
            div { "Expected gain" b { (fig.amount(t.expected_gain)) } }
            @if b.held_out > 0 { div { "Held out" b { (fig.count(b.held_out as f64)) } } }
        }
        @if let (Some(n), Some(e)) = (b.notice_date, b.effective_date) {
            p id="batch-dates" {
                "Approved by " (b.approved_by.as_ref().map(|a| a.label()).unwrap_or_default())
                ": notices go out " (n) ", new rents in force " (e) ". "
                a id="letters" href={(base) "/letters.csv"} download { (letters_note) }
            }
        }
        @if let Some(seed) = b.holdout_seed {
            p class="muted" id="holdout-draw" {
                "Control group drawn at approval with seed " (seed) ", by size and rent against street: "
                (holdout_strata(b.holdout_strata.as_ref()))
            }
        }
        @if let Some(c) = &b.cancelled_by { p class="muted" { "Cancelled by " (c.label()) "." } }
        section aria-labelledby="sizes-h" {
            h2 id="sizes-h" { "Per size" }
            (sizes.render(""))
        }
        section aria-labelledby="lines-h" {
            h2 id="lines-h" { "Lines" }
            (batch_lines::filter_form(&b.lines, filters))
            (pager)
            @if draft && may_edit {
                (draft_forms(s, &fig, &page_lines, &base))
            } @else {
                (lines_table(&fig, &page_lines).render(&filters.query()))
                @if draft {
                    (page::role_note(s, "edit, approve or cancel a batch", "a manager, an admin or an owner"))
                }
            }
            (batch_lines::pager(matching.len(), page, pages, filters))
        }
        @if let Some(o) = &outcome {
            (outcome_section(&fig, o, &outcome_chart, &outcome_table, &checkpoints))
        }
    };
    respond(
        s,
        &format!("ECRI batch: {}", b.facility_name),
        notice,
        error,
        body,
    )
}

/// The batch's lines as a table (an approved or cancelled batch's; a draft's are a form). What
/// became of a line (kept, edited, left out) comes right after the tenant, so it is in view at
/// 1,440 px; a line left out shows no new rent or increase (its rent stays), and why the
/// service left it out comes last.
fn lines_table(fig: &Figures, shown: &[&batches::Line]) -> Table {
    let mut lines = Table::new(
        "ecri-batch-lines",
        "The batch's lines",
        &[
            "Line",
            "Tenant",
            "Line status",
            "Size",
            "Tenants",
            "Rent",
            "Suggested",
            "New rent",
            "Increase",
            "Increase (%)",
            "Stays 90 days",
            "Expected gain",
            "Why left out",
        ],
    );
    for l in shown {
        let kept = !l.excluded;
        let status = match (&l.dropped, l.excluded, l.edited) {
            (Some(d), true, _) => format!("left out ({})", d.guardrail.replace('_', " ")),
            (None, true, _) => "left out".to_owned(),
            (_, false, true) => "edited".to_owned(),
            (_, false, false) => "kept".to_owned(),
        };
        lines.row(cells![
            l.line.to_string(),
            l.tenant_id.clone().unwrap_or_else(|| "(cohort)".to_owned()),
            status,
            l.size.clone(),
            fig.count(f64::from(l.tenant_count)),
            fig.rate(l.current_rent),
            fig.rate(l.suggested_rent),
            fig.rate(kept.then_some(l.new_rent)),
            fig.rate(kept.then(|| l.increase())),
            fig.pct(kept.then(|| l.increase_pct())),
            fig.pct(l.stay_probability * 100.0),
            fig.amount(kept.then_some(l.expected_gain)),
            l.dropped
                .as_ref()
                .filter(|_| l.excluded)
                .map(|d| d.reason.clone())
                .unwrap_or_default(),
        ]);
    }
    lines
}

/// The outcome's checkpoints as a table and the stay of the batch's tenants against those not
/// increased as a chart.
fn outcome_figures(fig: &Figures, outcome: Option<&batches::outcome::Outcome>) -> (Table, Chart) {
    let mut checkpoints = Table::new(
        "ecri-outcome",
        "Tenants in place after the effective date: the batch's against those of the same sizes not increased",
        &[
            "Day", "Date", "Batch tenants", "In place", "Stay (%)", "Not increased", "In place",
            "Stay (%)",
        ],
    );
    let mut chart_labels = Vec::new();
    let (mut inc_series, mut base_series) = (Vec::new(), Vec::new());
    if let Some(o) = outcome {
        for c in &o.checkpoints {
            let label = format!("+{} days", c.days);
            checkpoints.row(cells![
                label.clone(),
                c.date.to_string(),
                fig.count(c.increased.map(|g| g.tenants as f64)),
                fig.count(c.increased.map(|g| g.in_place as f64)),
                fig.pct(c.increased.and_then(|g| g.stay_pct())),
                fig.count(c.not_increased.map(|g| g.tenants as f64)),
                fig.count(c.not_increased.map(|g| g.in_place as f64)),
                fig.pct(c.not_increased.and_then(|g| g.stay_pct())),
            ]);
            chart_labels.push(label);
            inc_series.push(c.increased.and_then(|g| g.stay_pct()));
            base_series.push(c.not_increased.and_then(|g| g.stay_pct()));
        }
    }
    let outcome_chart = Chart {
        id: "chart-ecri-outcome".into(),
        title: "Share still in place after the effective date".into(),
        unit: "%".into(),
        measure: Measure::Pct,
        figures: *fig,
        labels: chart_labels,
        series: vec![
            Series::new("Increased", Kind::Line, inc_series),
            Series::new("Not increased", Kind::Line, base_series),
        ],
        from_zero: false,
    };
    (checkpoints, outcome_chart)
}

/// A draft's forms: the page's lines (a rent to change, a line to keep or leave out; the form
/// names the lines it shows, so saving it changes no other page's), approval with a notice
/// date, and cancelling it.
fn draft_forms(s: &Session, fig: &Figures, shown: &[&batches::Line], base: &str) -> maud::Markup {
    let numbers: Vec<String> = shown.iter().map(|l| l.line.to_string()).collect();
    html! {
        form method="post" action={(base) "/edit"} id="edit-lines" {
            (page::csrf(s))
            input type="hidden" name=(SHOWN) value=(numbers.join(","));
            div class="table-wrap" {
                table id="edit-lines-table" {
                    thead { tr {
                        th { "Line" } th { "Tenant" } th { "Size" } th { "Rent" } th { "Suggested" }
                        th { "New rent" } th { "Stays 90 days" } th { "Expected gain" } th { "Keep" }
                    } }
                    tbody {
                        @for l in shown {
                            tr {
                                td { (l.line) }
                                td { (l.tenant_id.clone().unwrap_or_else(|| "(cohort)".to_owned())) }
                                td { (l.size) }
                                td class="num" { (fig.rate(l.current_rent)) }
                                td class="num" { (fig.rate(l.suggested_rent)) }
                                td { input type="text" inputmode="decimal" name={"rent_" (l.line)}
                                        value=(format!("{:.2}", l.new_rent))
                                        aria-label={"New rent of line " (l.line)}; }
                                td class="num" { (fig.pct(l.stay_probability * 100.0)) }
                                td class="num" { (fig.amount(l.expected_gain)) }
                                td { @if l.excluded { input type="checkbox" name={"keep_" (l.line)} value="1" aria-label={"Keep line " (l.line)}; }
                                     @else { input type="checkbox" name={"keep_" (l.line)} value="1" checked aria-label={"Keep line " (l.line)}; } }
                            }
                        }
                    }
                }
            }
            div class="actions" { button type="submit" id="save-lines" { "Save the lines" } }
        }
        div class="actions" {
            form method="post" action={(base) "/approve"} id="approve" {
                (page::csrf(s))
                label { "Notice date (default today)" input type="date" name="notice_date"; }
                label {
                    input type="checkbox" name="drop_failing" value="1";
                    " Leave out lines that no longer pass (each is checked again against today's roll, flags, settings and other batches)"
                }
                button type="submit" id="approve-batch" { "Approve" }
            }
            form method="post" action={(base) "/cancel"} id="cancel" {
                (page::csrf(s))
                button class="secondary" type="submit" id="cancel-batch" { "Cancel the batch" }
            }
        }
    }
}

/// What an approved batch did: predicted against realized stay, the uplift, the lift against
/// the held-out tenants, and the checkpoints.
fn outcome_section(
    fig: &Figures,
    o: &batches::outcome::Outcome,
    chart: &Chart,
    table: &Table,
    checkpoints: &Table,
) -> maud::Markup {
    html! {
        section aria-labelledby="outcome-h" id="outcome" {
            h2 id="outcome-h" { "Outcome" }
            @if let Some(n) = &o.note { p class="muted" id="outcome-note" { (n) } }
            div class="figures" {
                div { "Predicted stay at " (o.stay_date) b id="outcome-predicted" { (fig.pct(o.predicted_stay_pct)) } }
                div { "Realized" b id="outcome-realized" { (fig.pct(o.realized_stay_pct)) } }
                div { "Realized monthly uplift" b id="outcome-uplift" { (fig.amount(o.realized_monthly_uplift)) } }
                div { "Rents applied" b { (fig.count(o.applied_tenants.map(|n| n as f64))) } }
            }
            @if let Some(l) = &o.lift {
                p id="outcome-lift" { "Against the held-out tenants: " (l.note) "." }
            }
            @if o.checkpoints.iter().any(|c| c.known) {
                (chart::with_table(chart, table, ""))
            }
            (checkpoints.render(""))
        }
    }
}

/// The holdout's strata in a sentence: "10x10 · 0-10 % under street: 4 of 8; ...".
fn holdout_strata(strata: Option<&serde_json::Value>) -> String {
    strata
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .map(|s| {
                    format!(
                        "{} · {}: {} of {}",
                        s["size"].as_str().unwrap_or(""),
                        s["band"].as_str().unwrap_or(""),
                        s["held_out"],
                        s["eligible"]
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_default()
}
