//! The overview: the figures of `GET /api/v1/status` (plan, subscription, usage, jobs and the
//! recent failures), from the same function.

use super::page::{self, Messages, Nav, PageResult};
use super::session::SignedIn;
use crate::state::AppState;
use axum::extract::State;
use chrono::Utc;
use maud::html;

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

pub async fn show(State(state): State<AppState>, SignedIn(s): SignedIn) -> PageResult {
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
    let failures = &status.recent_failures;
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
                div { "Facilities" b id="usage-facilities" { (usage.facilities) } }
                div { "Daily records" b { (usage.sync_records) } }
                div { "Records this month" b { (usage.sync_records_this_month) } }
                div { "API calls this month" b { (or_na(usage.api_calls_this_month)) } }
                div { "Active API keys" b { (usage.active_api_keys) } }
            }
        }
        section aria-labelledby="jobs-h" {
            h2 id="jobs-h" { "Background jobs" }
            div class="figures" id="jobs" {
                div { "Queued" b { (jobs.queued) } }
                div { "Running" b { (jobs.running) } }
                div { "Succeeded" b { (jobs.succeeded) } }
                div { "Failed" b { (jobs.failed) } }
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
