//! The overview: the figures of `GET /api/v1/status` (plan, subscription, usage, jobs and the
//! recent failures), from the same function.

use super::page::{self, Messages, Nav, PageResult};
use super::session::SignedIn;
use crate::state::AppState;
use axum::extract::State;
use maud::html;
use serde_json::Value;

fn figure(v: &Value) -> String {
    match v {
        Value::Null => "n/a".to_owned(),
        Value::String(s) => s.replace('_', " "),
        other => other.to_string(),
    }
}

pub async fn show(State(state): State<AppState>, SignedIn(s): SignedIn) -> PageResult {
    let status = crate::routes::status::report(&state, s.company_id).await?;
    let usage = &status["usage"];
    let jobs = &status["jobs"];
    let sub = &status["subscription"];
    let failures = jobs["recent_failures"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let body = html! {
        section aria-labelledby="plan-h" {
            h2 id="plan-h" { "Plan" }
            div class="figures" id="plan" {
                div { "Plan" b { (figure(&status["plan"])) } }
                div { "State" b id="state" { (figure(&sub["state"])) } }
                div { "Trial days left" b { (figure(&sub["trial_days_left"])) } }
                div { "API access" b { @if sub["api_access"] == Value::Bool(true) { "yes" } @else { "no" } } }
            }
        }
        section aria-labelledby="usage-h" {
            h2 id="usage-h" { "Usage in " (figure(&usage["month"])) }
            div class="figures" id="usage" {
                div { "Facilities" b id="usage-facilities" { (figure(&usage["facilities"])) } }
                div { "Daily records" b { (figure(&usage["sync_records"])) } }
                div { "Records this month" b { (figure(&usage["sync_records_this_month"])) } }
                div { "API calls this month" b { (figure(&usage["api_calls_this_month"])) } }
                div { "Active API keys" b { (figure(&usage["active_api_keys"])) } }
            }
        }
        section aria-labelledby="jobs-h" {
            h2 id="jobs-h" { "Background jobs" }
            div class="figures" id="jobs" {
                div { "Queued" b { (figure(&jobs["queued"])) } }
                div { "Running" b { (figure(&jobs["running"])) } }
                div { "Succeeded" b { (figure(&jobs["succeeded"])) } }
                div { "Failed" b { (figure(&jobs["failed"])) } }
            }
            h2 { "Recent failures" }
            @if failures.is_empty() {
                p class="muted" { "No job has failed." }
            } @else {
                div class="table-wrap" {
                    table {
                        thead { tr { th { "Job" } th { "Attempts" } th { "Finished" } th { "Error" } } }
                        tbody {
                            @for f in &failures {
                                tr { td { (figure(&f["kind"])) } td class="num" { (figure(&f["attempts"])) }
                                     td { (figure(&f["finished_at"])) } td { (figure(&f["last_error"])) } }
                            }
                        }
                    }
                }
            }
        }
        section class="card" aria-labelledby="account-h" {
            h2 id="account-h" { "Your sessions" }
            p { "Signed in as " (s.email) ". Lost a device or shared a computer? End every session of this account." }
            form method="post" action="/app/logout-everywhere" {
                (page::csrf(&s))
                button class="secondary" type="submit" { "Log out everywhere" }
            }
        }
    };
    Ok(page::render(page::frame(
        &s,
        Nav::Overview,
        "Overview",
        &Messages::default(),
        body,
    )))
}
