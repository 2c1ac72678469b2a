//! Webhooks: subscriptions (the secret shown once at creation), test ping, delete (after a
//! confirmation), and the delivery log with its filters and every attempt. Same `jobs::webhooks`
//! functions as `/api/v1/webhooks`.

use super::extract::{Form, Query};
use super::page::{self, Messages, Nav, PageResult};
use super::session::SignedIn;
use super::{form_error, require_access, through_api, Notice};
use crate::extract::path_id;
use crate::requests::{DeliveryStatus, NewSubscription};
use crate::state::AppState;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use jobs::sessions::Session;
use jobs::webhooks::{self, CreatedSubscription, DeliveryFilter};
use maud::{html, Markup};
use serde::Deserialize;

/// The log's filters as the page's query string; an unknown value is ignored, not an error.
#[derive(Deserialize, Default)]
pub struct LogQuery {
    status: Option<String>,
    subscription_id: Option<String>,
}

impl LogQuery {
    fn filter(&self) -> DeliveryFilter {
        DeliveryFilter {
            subscription_id: self
                .subscription_id
                .as_deref()
                .and_then(|v| uuid::Uuid::parse_str(v).ok()),
            status: self
                .status
                .as_deref()
                .filter(|v| !v.is_empty())
                .and_then(|v| {
                    serde_json::from_value::<DeliveryStatus>(serde_json::Value::from(v)).ok()
                })
                .map(Into::into),
            limit: Some(50),
            cursor: None,
        }
    }
}

async fn list_page(
    state: &AppState,
    s: &Session,
    m: &Messages<'_>,
    q: &LogQuery,
    created: Option<&CreatedSubscription>,
    status: StatusCode,
) -> PageResult {
    let subs = webhooks::list(&state.db, s.company_id).await?;
    let filter = q.filter();
    let chosen_status = filter.status.map(|st| st.as_str()).unwrap_or("");
    let chosen_sub = filter.subscription_id;
    let log = webhooks::deliveries(&state.db, s.company_id, filter).await?;
    let body = html! {
        @if let Some(c) = created {
            section class="card" id="new-secret" {
                h2 { "Signing secret of " (c.subscription.url) }
                p { "Copy it now: it is shown only this once. Check each delivery's " code { "X-Service-Signature" } " with it." }
                code class="secret" id="secret-value" { (c.secret) }
                p { button type="button" class="secondary" data-copy="secret-value" { "Copy" } }
            }
        }
        section class="card" {
            h2 { "Add a subscription" }
            form class="stack" method="post" action="/app/webhooks" {
                (page::csrf(s))
                label { "Receiver URL" span class="hint" { "https:// only." }
                    input type="url" name="url" required placeholder="https://example.com/hooks/pricing"; }
                fieldset {
                    legend { "Events (none ticked: every event, including future ones)" }
                    @for e in webhooks::EVENTS {
                        label class="check" { input type="checkbox" name="events" value=(e); (e) }
                    }
                }
                div { button type="submit" { "Add subscription" } }
            }
        }
        h2 { "Subscriptions" }
        @if subs.is_empty() { p class="muted" { "No subscription yet." } } @else {
            div class="table-wrap" {
                table id="subscriptions" {
                    thead { tr { th { "URL" } th { "Events" } th { "Secret" } th { "Created" } th { span class="skip" { "Actions" } } } }
                    tbody {
                        @for sub in &subs {
                            tr data-subscription-id=(sub.id) {
                                td { (sub.url) }
                                td { @if sub.all_events { "all" } @else { (sub.events.join(", ")) } }
                                td { code { (sub.secret_hint) } }
                                td { (page::when(Some(sub.created_at))) }
                                td { div class="actions" {
                                    form method="post" action={"/app/webhooks/" (sub.id) "/test"} hx-boost="true" {
                                        (page::csrf(s))
                                        button class="secondary" type="submit" { "Send test ping" }
                                    }
                                    a href={"/app/webhooks/" (sub.id) "/delete"} { "Delete" }
                                } }
                            }
                        }
                    }
                }
            }
        }
        h2 id="log" { "Delivery log" }
        form class="actions" method="get" action="/app/webhooks#log" {
            label { "Status"
                select name="status" {
                    @for (v, l) in [("", "any"), ("queued", "queued"), ("retrying", "retrying"), ("complete", "complete"), ("failed", "failed")] {
                        option value=(v) selected[chosen_status == v] { (l) }
                    }
                }
            }
            label { "Subscription"
                select name="subscription_id" {
                    option value="" { "any" }
                    @for sub in &subs { option value=(sub.id) selected[chosen_sub == Some(sub.id)] { (sub.url) } }
                }
            }
            button class="secondary" type="submit" { "Filter" }
        }
        (deliveries(&log.deliveries))
    };
    Ok(page::render_status(
        status,
        page::frame(s, Nav::Webhooks, "Webhooks", m, body),
    ))
}

fn deliveries(items: &[webhooks::Delivery]) -> Markup {
    html! {
        @if items.is_empty() { p class="muted" id="no-deliveries" { "No delivery matches." } } @else {
            div class="table-wrap" {
                table id="deliveries" {
                    thead { tr { th { "Created" } th { "Event" } th { "Status" } th { "Attempts" } th { "Attempt log (time, code, error, answer)" } } }
                    tbody {
                        @for d in items {
                            tr data-delivery-id=(d.id) {
                                td { (page::when(Some(d.created_at))) }
                                td { (d.event) @if d.test { " (test)" } br; span class="muted" { (d.url) } }
                                td class="status" { (d.status) }
                                td class="num" { (d.attempts) " / " (d.max_attempts) }
                                td {
                                    @for a in &d.attempt_log {
                                        div class="attempt" {
                                            "#" (a.attempt) " · " (page::when(Some(a.started_at))) " · "
                                            span class="code" { (a.http_status.map(|c| c.to_string()).unwrap_or_else(|| "no answer".to_owned())) }
                                            @if let Some(e) = &a.error { " · " (e) }
                                            @if let Some(b) = &a.response_body { pre class="answer" { (b) } }
                                        }
                                    }
                                    @if d.attempt_log.is_empty() { span class="muted" { "not tried yet" } }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

pub async fn list(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Query(n): Query<Notice>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let q: LogQuery = serde_urlencoded::from_str(raw.as_deref().unwrap_or("")).unwrap_or_default();
    list_page(
        &state,
        &s,
        &Messages::notice(n.text()),
        &q,
        None,
        StatusCode::OK,
    )
    .await
}

pub async fn create(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Form(pairs): Form<Vec<(String, String)>>,
) -> PageResult {
    require_access(&s)?;
    let url = pairs
        .iter()
        .find(|(k, _)| k == "url")
        .map(|(_, v)| v.trim())
        .unwrap_or("");
    let events: Vec<&str> = pairs
        .iter()
        .filter(|(k, _)| k == "events")
        .map(|(_, v)| v.as_str())
        .collect();
    let mut body = serde_json::json!({ "url": url });
    if !events.is_empty() {
        body["events"] = serde_json::json!(events);
    }
    let body = serde_json::to_vec(&body).unwrap_or_default();
    let result = through_api(&body, |new: NewSubscription| {
        webhooks::create(
            &state.db,
            &state.config.master_key,
            &state.config.outbound.private_targets,
            &acting.who,
            new.into(),
        )
    })
    .await;
    let q = LogQuery::default();
    match result {
        Ok(done) => {
            let created = state.finish(done).await;
            list_page(
                &state,
                &s,
                &Messages::notice(Some("Subscription added.")),
                &q,
                Some(&created),
                StatusCode::CREATED,
            )
            .await
        }
        Err(e) => {
            let m = form_error(e)?;
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            list_page(&state, &s, &Messages::error(m), &q, None, status).await
        }
    }
}

pub async fn test_ping(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "webhook subscription")?;
    require_access(&s)?;
    let done = webhooks::record_test_ping(&state.db, &acting.who, id).await?;
    state.finish(done).await;
    Ok(Redirect::to("/app/webhooks?notice=ping#log").into_response())
}

pub async fn confirm_delete(
    State(state): State<AppState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "webhook subscription")?;
    let sub = webhooks::get(&state.db, s.company_id, id).await?;
    Ok(page::confirm(
        &s,
        page::Confirm {
            nav: Nav::Webhooks,
            title: "Delete a subscription",
            question: format!("Stop sending events to {}? Its pending deliveries are dropped. To rotate a secret, delete and add the subscription again.", sub.url),
            action: format!("/app/webhooks/{id}/delete"),
            button: "Delete subscription",
            back: "/app/webhooks",
        },
    ))
}

pub async fn delete(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> PageResult {
    let id = path_id(&id, "webhook subscription")?;
    let done = webhooks::delete(&state.db, &acting.who, id).await?;
    state.finish(done).await;
    Ok(Redirect::to("/app/webhooks?notice=deleted").into_response())
}
