//! A facility's ECRI pages: the engine's suggestion per tenant with its reasons, the batches
//! (create one from the suggestions, edit its lines, approve it with a notice date, cancel it,
//! download its letters), and what approved batches did (predicted against realized stay).
//! Every action calls the `jobs::ecri_batches` function its `/api/v1` twin calls.

use super::chart::{self, Chart, Kind, Series, Table};
use super::extract::{Form, Query};
use super::figures::{cells, Figures, Measure};
use super::page::{self, Messages, Nav, PageResult};
use super::require_access;
use super::session::SignedIn;
use crate::extract::path_id;
use crate::routes::ecri_batches::ids;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use domain::ids::FacilityId;
use jobs::ecri_batches::{self as batches, Batch, Status};
use jobs::sessions::Session;
use maud::html;
use serde::Deserialize;
use std::collections::BTreeMap;
use uuid::Uuid;

#[derive(Deserialize)]
pub struct PageQuery {
    csv: Option<String>,
    notice: Option<String>,
}

fn notice_text(n: Option<&str>) -> Option<&'static str> {
    Some(match n? {
        "created" => "The draft batch is made: check its lines, then approve it.",
        "edited" => "The batch's lines are saved.",
        "approved" => "Approved: download the letters and send them by the notice date.",
        "cancelled" => "The batch is cancelled.",
        _ => return None,
    })
}

fn href(facility: Uuid) -> String {
    format!("/app/facilities/{facility}/ecri")
}

fn batch_href(facility: Uuid, batch: Uuid) -> String {
    format!("/app/facilities/{facility}/ecri-batches/{batch}")
}

/// The engine's suggestion per tenant (per cohort without a rent roll) with its reasons, as
/// `GET /api/v1/facilities/:id/ecri` answers them.
pub(super) fn suggestions_table(
    fig: &Figures,
    lines: &[jobs::ecri::TenantLine],
    id: &str,
) -> Table {
    let mut t = Table::new(
        id,
        "The engine's suggestion per tenant (per cohort without a rent roll), with why",
        &[
            "Tenant",
            "Size",
            "Tenants",
            "Months unchanged",
            "Rent",
            "New rent",
            "Increase",
            "Increase (%)",
            "Stays 90 days",
            "Expected gain (horizon)",
            "Guardrail",
            "Why",
        ],
    );
    for l in lines {
        let x = &l.suggestion;
        t.row(cells![
            x.tenant_id.clone(),
            l.size.clone(),
            fig.count(f64::from(x.tenant_count.max(1))),
            fig.count(l.months_since_last_increase),
            fig.rate(x.current_rent),
            fig.rate(x.new_rent),
            fig.rate(x.increase),
            fig.pct(x.increase_pct),
            fig.pct(x.stay_probability),
            fig.amount(x.expected_gain),
            x.binding_guardrail
                .map(|g| g.name().replace('_', " "))
                .unwrap_or_default(),
            x.reasons
                .iter()
                .map(|r| r.text.clone())
                .collect::<Vec<_>>()
                .join("; "),
        ]);
    }
    t
}

/// A page of this module: the refusal (422) or the notice at its top.
fn respond(
    s: &Session,
    title: &str,
    notice: Option<&'static str>,
    error: Option<String>,
    body: maud::Markup,
) -> PageResult {
    let (status, messages) = match error {
        Some(e) => (StatusCode::UNPROCESSABLE_ENTITY, Messages::error(e)),
        None => (StatusCode::OK, Messages::notice(notice)),
    };
    Ok(page::render_status(
        status,
        page::frame(s, Nav::Facilities, title, &messages, body),
    ))
}

/// The facility's ECRI page.
pub async fn show(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
    Query(q): Query<PageQuery>,
) -> PageResult {
    let id = path_id(&id, "facility")?;
    facility_page(
        &state,
        &s,
        id,
        q.csv.as_deref(),
        notice_text(q.notice.as_deref()),
        None,
    )
    .await
}

async fn facility_page(
    state: &AppState,
    s: &Session,
    id: FacilityId,
    csv: Option<&str>,
    notice: Option<&'static str>,
    error: Option<String>,
) -> PageResult {
    let engine = jobs::ecri::facility(&state.db, s.company_id, id).await?;
    let listed = batches::list(&state.db, s.company_id, id, None).await?;
    let fig = Figures::new(s.currency);
    let tenants = suggestions_table(&fig, &engine.lines, "ecri-suggestions");
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
    for b in &listed {
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
    // Predicted against realized stay, per approved batch (oldest first).
    let approved: Vec<&Batch> = listed
        .iter()
        .rev()
        .map(|b| &b.batch)
        .filter(|b| b.status == Status::Approved)
        .collect();
    let mut predicted = Vec::new();
    let mut realized = Vec::new();
    for b in &approved {
        let o = batches::outcome::outcome(&state.db, b).await?;
        predicted.push(o.as_ref().map(|o| o.predicted_stay_pct));
        realized.push(o.and_then(|o| o.realized_stay_pct));
    }
    let stay_chart = Chart {
        id: "chart-ecri-stay".into(),
        title: "Tenants still in place 90 days after the notice: predicted against realized, per approved batch".into(),
        unit: "%".into(),
        measure: Measure::Pct,
        figures: fig,
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
    let stay_table = stay_chart.table("chart-ecri-stay-table");
    if let Some(r) = chart::export(&[&tenants, &list, &stay_table], csv, &format!("ecri-{id}")) {
        return Ok(r);
    }
    let suggested = engine
        .lines
        .iter()
        .filter(|l| l.suggestion.increase > 0.0)
        .count();
    let action = format!("/app/facilities/{id}/ecri-batches");
    let body = html! {
        p class="muted" {
            a href={"/app/facilities/" (id)} { "Pricing of " (engine.facility_name) } " · "
            a href={"/app/analytics/ecri?facility_id=" (id)} { "ECRI analytics" }
        }
        section aria-labelledby="batch-new-h" {
            h2 id="batch-new-h" { "New batch" }
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
                div class="actions" { button type="submit" id="create-batch" { "Create a draft batch" } }
            }
        }
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
        section aria-labelledby="suggestions-h" {
            h2 id="suggestions-h" { "Suggestions now" }
            @if let Some(reason) = &engine.reason { p class="muted" { (reason) } }
            (tenants.render(""))
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

/// Creates a draft from the form (sizes, comma-separated, optional).
pub async fn create(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    Form(values): Form<BTreeMap<String, String>>,
) -> PageResult {
    let id: FacilityId = path_id(&id, "facility")?;
    require_access(&s)?;
    let sizes: Vec<String> = values
        .get("sizes")
        .map(|v| {
            v.split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let filter = batches::NewBatch {
        sizes: (!sizes.is_empty()).then_some(sizes),
        tenant_ids: None,
    };
    match batches::create(&state.db, &acting.who, id, &filter).await {
        Ok(done) => {
            let b = state.finish(done).await;
            Ok(
                Redirect::to(&format!("{}?notice=created", batch_href(id.uuid(), b.id)))
                    .into_response(),
            )
        }
        Err(e @ (jobs::Error::Invalid(_) | jobs::Error::Conflict(_))) => {
            facility_page(&state, &s, id, None, None, Some(e.to_string())).await
        }
        Err(e) => Err(e.into()),
    }
}

/// One batch's page.
pub async fn batch(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path((id, bid)): Path<(String, String)>,
    Query(q): Query<PageQuery>,
) -> PageResult {
    let id: FacilityId = path_id(&id, "facility")?;
    let bid: Uuid = path_id(&bid, "ECRI batch")?;
    batch_page(
        &state,
        &s,
        id,
        bid,
        q.csv.as_deref(),
        notice_text(q.notice.as_deref()),
        None,
    )
    .await
}

async fn batch_page(
    state: &AppState,
    s: &Session,
    id: FacilityId,
    bid: Uuid,
    csv: Option<&str>,
    notice: Option<&'static str>,
    error: Option<String>,
) -> PageResult {
    let b = batches::get(&state.db, s.company_id, id, bid).await?;
    let outcome = batches::outcome::outcome(&state.db, &b).await?;
    let fig = Figures::new(s.currency);
    let t = b.totals();
    let mut lines = Table::new(
        "ecri-batch-lines",
        "The batch's lines",
        &[
            "Line",
            "Tenant",
            "Size",
            "Tenants",
            "Months unchanged",
            "Rent",
            "Suggested",
            "New rent",
            "Increase",
            "Increase (%)",
            "Stays 90 days",
            "Expected gain",
            "Edited",
            "Left out",
        ],
    );
    for l in &b.lines {
        lines.row(cells![
            l.line.to_string(),
            l.tenant_id.clone().unwrap_or_else(|| "(cohort)".to_owned()),
            l.size.clone(),
            fig.count(f64::from(l.tenant_count)),
            fig.count(l.months_since_last_increase),
            fig.rate(l.current_rent),
            fig.rate(l.suggested_rent),
            fig.rate(l.new_rent),
            fig.rate(l.increase()),
            fig.pct(l.increase_pct()),
            fig.pct(l.stay_probability * 100.0),
            fig.amount(l.expected_gain),
            if l.edited { "yes" } else { "" }.to_owned(),
            if l.excluded { "yes" } else { "" }.to_owned(),
        ]);
    }
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
    if let Some(o) = &outcome {
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
        figures: fig,
        labels: chart_labels,
        series: vec![
            Series::new("Increased", Kind::Line, inc_series),
            Series::new("Not increased", Kind::Line, base_series),
        ],
        from_zero: false,
    };
    let outcome_table = outcome_chart.table("chart-ecri-outcome-table");
    if let Some(r) = chart::export(
        &[&lines, &checkpoints, &outcome_table],
        csv,
        &format!("ecri-batch-{bid}"),
    ) {
        return Ok(r);
    }
    let base = batch_href(id.uuid(), bid);
    let draft = b.status == Status::Draft;
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
                a id="letters" href={(base) "/letters.csv"} download { "Download the letters (CSV)" }
            }
        }
        @if let Some(c) = &b.cancelled_by { p class="muted" { "Cancelled by " (c.label()) "." } }
        section aria-labelledby="lines-h" {
            h2 id="lines-h" { "Lines" }
            @if draft {
                form method="post" action={(base) "/edit"} id="edit-lines" {
                    (page::csrf(s))
                    div class="table-wrap" {
                        table id="edit-lines-table" {
                            thead { tr {
                                th { "Line" } th { "Tenant" } th { "Size" } th { "Rent" } th { "Suggested" }
                                th { "New rent" } th { "Stays 90 days" } th { "Expected gain" } th { "Keep" }
                            } }
                            tbody {
                                @for l in &b.lines {
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
                        button type="submit" id="approve-batch" { "Approve" }
                    }
                    form method="post" action={(base) "/cancel"} id="cancel" {
                        (page::csrf(s))
                        button class="secondary" type="submit" id="cancel-batch" { "Cancel the batch" }
                    }
                }
            } @else {
                (lines.render(""))
            }
        }
        @if let Some(o) = &outcome {
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
                    (chart::with_table(&outcome_chart, &outcome_table, ""))
                }
                (checkpoints.render(""))
            }
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

/// The page again with the refusal, or the refusal itself when it is not the form's.
async fn refused(
    state: &AppState,
    s: &Session,
    id: FacilityId,
    bid: Uuid,
    e: jobs::Error,
) -> PageResult {
    match e {
        jobs::Error::Invalid(_) | jobs::Error::Conflict(_) => {
            batch_page(state, s, id, bid, None, None, Some(e.to_string())).await
        }
        e => Err(e.into()),
    }
}

/// Saves the lines' form: a rent that differs from the line's, a line kept or left out.
pub async fn edit(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path((id, bid)): Path<(String, String)>,
    Form(values): Form<BTreeMap<String, String>>,
) -> PageResult {
    let (id, bid) = ids(&id, &bid)?;
    require_access(&s)?;
    let b = batches::get(&state.db, s.company_id, id, bid).await?;
    let mut edits = Vec::new();
    for l in &b.lines {
        let typed = values.get(&format!("rent_{}", l.line)).map(|v| {
            v.trim()
                .trim_start_matches(['$', '€', '£'])
                .replace(',', "")
        });
        let new_rent = match typed.as_deref() {
            None | Some("") => None,
            Some(v) => match v.parse::<f64>() {
                Ok(r) if (r - l.new_rent).abs() >= 0.005 => Some(r),
                Ok(_) => None,
                Err(_) => {
                    let msg = format!("line {}: '{v}' is not an amount", l.line);
                    return batch_page(&state, &s, id, bid, None, None, Some(msg)).await;
                }
            },
        };
        let excluded = !values.contains_key(&format!("keep_{}", l.line));
        let excluded = (excluded != l.excluded).then_some(excluded);
        if new_rent.is_some() || excluded.is_some() {
            edits.push(batches::LineEdit {
                line: l.line,
                // A line left out keeps its rent; only a kept line's rent is checked.
                new_rent: new_rent.filter(|_| excluded != Some(true)),
                excluded,
            });
        }
    }
    let edits: Vec<_> = edits
        .into_iter()
        .filter(|e| e.new_rent.is_some() || e.excluded.is_some())
        .collect();
    if edits.is_empty() {
        return Ok(Redirect::to(&batch_href(id.uuid(), bid)).into_response());
    }
    match batches::edit(&state.db, &acting.who, id, bid, &edits).await {
        Ok(done) => {
            state.finish(done).await;
            Ok(
                Redirect::to(&format!("{}?notice=edited", batch_href(id.uuid(), bid)))
                    .into_response(),
            )
        }
        Err(e) => refused(&state, &s, id, bid, e).await,
    }
}

/// Approves with the form's notice date (today when empty).
pub async fn approve(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path((id, bid)): Path<(String, String)>,
    Form(values): Form<BTreeMap<String, String>>,
) -> PageResult {
    let (id, bid) = ids(&id, &bid)?;
    require_access(&s)?;
    let notice = match values.get("notice_date").map(|v| v.trim()) {
        None | Some("") => None,
        Some(v) => match v.parse() {
            Ok(d) => Some(d),
            Err(_) => {
                let msg = format!("notice_date: '{v}' is not a date (YYYY-MM-DD)");
                return batch_page(&state, &s, id, bid, None, None, Some(msg)).await;
            }
        },
    };
    match batches::approve(&state.db, &acting.who, id, bid, notice).await {
        Ok(done) => {
            state.finish(done).await;
            Ok(
                Redirect::to(&format!("{}?notice=approved", batch_href(id.uuid(), bid)))
                    .into_response(),
            )
        }
        Err(e) => refused(&state, &s, id, bid, e).await,
    }
}

pub async fn cancel(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path((id, bid)): Path<(String, String)>,
) -> PageResult {
    let (id, bid) = ids(&id, &bid)?;
    require_access(&s)?;
    match batches::cancel(&state.db, &acting.who, id, bid).await {
        Ok(done) => {
            state.finish(done).await;
            Ok(
                Redirect::to(&format!("{}?notice=cancelled", batch_href(id.uuid(), bid)))
                    .into_response(),
            )
        }
        Err(e) => refused(&state, &s, id, bid, e).await,
    }
}

/// The letters' CSV, the same file as the API's.
pub async fn letters(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path((id, bid)): Path<(String, String)>,
) -> PageResult {
    let (id, bid) = ids(&id, &bid)?;
    match batches::letters(&state.db, s.company_id, id, bid).await {
        Ok(l) => Ok(crate::routes::ecri_batches::letters_response(&l)),
        Err(e) => refused(&state, &s, id, bid, e).await,
    }
}
