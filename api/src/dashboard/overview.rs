//! The overview: the figures of `GET /api/v1/status` (plan, subscription, usage, jobs and the
//! recent failures), from the same function.

use super::extract::{Form, Query};
use super::figures::Figures;
use super::page::{self, Messages, Nav, PageResult};
use super::session::SignedIn;
use super::{form_error, form_json, through_api, Notice};
use crate::requests::CompanySettings;
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use chrono::Utc;
use jobs::sessions::Session;
use maud::html;
use std::collections::BTreeMap;

/// Currencies offered first in the form (any ISO 4217 code is accepted).
const COMMON_CURRENCIES: [&str; 8] = ["USD", "CAD", "EUR", "GBP", "AUD", "NZD", "CHF", "JPY"];

/// When a job failed, as the API writes it.
fn finished(at: Option<chrono::DateTime<Utc>>) -> String {
    at.map_or_else(
        || "n/a".to_owned(),
        |t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
    )
}

/// A figure that may be unknown.
fn or_na<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "n/a".to_owned(), |v| v.to_string())
}

pub async fn show(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(n): Query<Notice>,
) -> PageResult {
    overview(&state, &s, &Messages::notice(n.text()), None).await
}

/// Saves the company's settings through the same parser and use case as
/// `PATCH /api/v1/company`.
pub async fn save_company(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Form(values): Form<BTreeMap<String, String>>,
) -> PageResult {
    let body = form_json(&values, &[], false);
    match through_api(&body, |input: CompanySettings| {
        jobs::tenancy::update_company(&state.db, &acting.who, input.currency)
    })
    .await
    {
        Ok(done) => {
            state.finish(done).await;
            Ok(Redirect::to("/app?notice=updated").into_response())
        }
        Err(e) => {
            let message = form_error(e)?;
            let typed = values.get("currency").map(String::as_str);
            let mut r = overview(&state, &s, &Messages::error(message), typed).await?;
            *r.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            Ok(r)
        }
    }
}

async fn overview(
    state: &AppState,
    s: &Session,
    m: &Messages<'_>,
    typed_currency: Option<&str>,
) -> PageResult {
    let fig = Figures::new(s.currency);
    let count = |v: i64| fig.count(v as f64);
    let currency_value = typed_currency.unwrap_or(s.currency.code());
    let status = jobs::status::report(
        &state.db,
        &state.redis,
        &state.config.redis_key_prefix,
        s.company_id,
        Utc::now(),
    )
    .await?;
    let usage = &status.usage;
    let jobs = &status.jobs;
    let sub = &status.subscription;
    // A failed job may concern a facility a limited member does not see.
    let failures: &[_] = if s.scope.is_all() {
        &status.recent_failures
    } else {
        &[]
    };
    let body = html! {
        section aria-labelledby="plan-h" {
            h2 id="plan-h" { "Plan" }
            div class="figures" id="plan" {
                div { "Plan" b { (status.plan.replace('_', " ")) } }
                div { "State" b id="state" { (sub.state.replace('_', " ")) } }
                div { "Trial days left" b { (or_na(sub.trial_days_left)) } }
                div { "API access" b { @if sub.api_access { "yes" } @else { "no" } } }
            }
        }
        section aria-labelledby="usage-h" {
            h2 id="usage-h" { "Usage in " (usage.month) }
            div class="figures" id="usage" {
                div { "Facilities" b id="usage-facilities" { (count(usage.facilities)) } }
                div { "Daily records" b { (count(usage.sync_records)) } }
                div { "Records this month" b { (count(usage.sync_records_this_month)) } }
                div { "API calls this month" b { (or_na(usage.api_calls_this_month.map(|v| fig.count(v as f64)))) } }
                div { "Active API keys" b { (count(usage.active_api_keys)) } }
            }
        }
        section aria-labelledby="jobs-h" {
            h2 id="jobs-h" { "Background jobs" }
            div class="figures" id="jobs" {
                div { "Queued" b { (count(jobs.queued)) } }
                div { "Running" b { (count(jobs.running)) } }
                div { "Succeeded" b { (count(jobs.succeeded)) } }
                div { "Failed" b { (count(jobs.failed)) } }
            }
            h2 { "Recent failures" }
            @if failures.is_empty() {
                p class="muted" { "No job has failed." }
            } @else {
                div class="table-wrap" {
                    table {
                        thead { tr { th { "Job" } th { "Attempts" } th { "Finished" } th { "Error" } } }
                        tbody {
                            @for f in failures {
                                tr { td { (f.kind.replace('_', " ")) } td class="num" { (f.attempts) }
                                     td { (finished(f.finished_at)) } td { (f.last_error.as_deref().unwrap_or("n/a").replace('_', " ")) } }
                            }
                        }
                    }
                }
            }
        }
        section class="card" aria-labelledby="company-h" {
            h2 id="company-h" { "Company settings" }
            @if !page::may_post(s, "/app/company") {
                p { "Currency: " strong { (s.currency.code()) } }
                (page::role_note(s, "change the company's settings", "an admin or an owner"))
            } @else {
            form class="stack" id="company-settings" method="post" action="/app/company" {
                (page::csrf(s))
                label { "Currency"
                    span class="hint" { "ISO 4217 code of the currency every amount is shown in (no amount is converted), e.g. "
                        (COMMON_CURRENCIES.join(", ")) "." }
                    input type="text" name="currency" list="currencies" required maxlength="3"
                        autocomplete="off" value=(currency_value);
                    datalist id="currencies" { @for c in COMMON_CURRENCIES { option value=(c) {} } }
                }
                div { button type="submit" { "Save" } }
            }
            }
        }
        section class="card" aria-labelledby="account-h" {
            h2 id="account-h" { "Your sessions" }
            p { "Signed in as " (s.email) ". Lost a device or shared a computer? End every session of this account." }
            form method="post" action="/app/logout-everywhere" {
                (page::csrf(s))
                button class="secondary" type="submit" { "Log out everywhere" }
            }
        }
    };
    Ok(page::render(page::frame(
        s,
        Nav::Overview,
        "Overview",
        m,
        body,
    )))
}
