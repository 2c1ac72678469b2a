//! Webhook subscriptions, test pings and the delivery log. The signing secret is in the creation
//! answer only; deliveries themselves are made by the worker.

use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{path_id, Json, Query};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, get, post};
use axum::Router;
use jobs::webhooks::{self, CreatedSubscription, DeliveryFilter, DeliveryPage, NewSubscription};
use serde_json::{json, Value};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/webhooks", get(list).post(create))
        .route("/api/v1/webhooks/deliveries", get(deliveries))
        .route("/api/v1/webhooks/{id}", delete(remove))
        .route("/api/v1/webhooks/{id}/test", post(test_ping))
}

async fn list(State(state): State<AppState>, Auth(who): Auth) -> ApiResult<axum::Json<Value>> {
    let items = webhooks::list(&state.db, who.company_id).await?;
    Ok(axum::Json(json!({
        "webhooks": items,
        "events": webhooks::EVENTS,
    })))
}

async fn create(
    State(state): State<AppState>,
    Auth(who): Auth,
    Json(body): Json<NewSubscription>,
) -> ApiResult<(StatusCode, axum::Json<CreatedSubscription>)> {
    let created = webhooks::create(
        &state.db,
        &state.config.master_key,
        &state.config.outbound.private_targets,
        who.company_id,
        body,
    )
    .await?;
    Ok((StatusCode::CREATED, axum::Json(created)))
}

async fn remove(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let id = path_id(&id, "webhook subscription")?;
    webhooks::delete(&state.db, who.company_id, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn test_ping(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, axum::Json<Value>)> {
    let id = path_id(&id, "webhook subscription")?;
    let ping = webhooks::record_test_ping(&state.db, who.company_id, id).await?;
    state
        .push_after_commit(jobs::queue::Kind::WebhookDelivery, &[ping.job_id])
        .await;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(json!({
            "delivery": { "id": ping.delivery_id, "event": webhooks::RECOMMENDATIONS_READY, "status": "queued", "test": true },
            "job": { "id": ping.job_id, "kind": "webhook_delivery" },
        })),
    ))
}

async fn deliveries(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(filter): Query<DeliveryFilter>,
) -> ApiResult<axum::Json<DeliveryPage>> {
    Ok(axum::Json(
        webhooks::deliveries(&state.db, who.company_id, filter).await?,
    ))
}
