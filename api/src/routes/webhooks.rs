//! Webhook subscriptions, test pings and the delivery log. The signing secret is in the creation
//! answer only; deliveries themselves are made by the worker.

use super::JobRef;
use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{path_id, Json, Query};
use crate::requests::{DeliveryFilter, NewSubscription};
use crate::state::AppState;
use crate::views::webhooks::{CreatedSubscription, DeliveryPage, Subscription};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use jobs::webhooks;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(deliveries))
        .routes(routes!(remove))
        .routes(routes!(test_ping))
}

#[derive(Serialize, utoipa::ToSchema)]
struct WebhookList {
    /// The company's subscriptions (never their secrets).
    webhooks: Vec<Subscription>,
    /// The events a subscription can take.
    #[schema(value_type = Vec<String>)]
    events: &'static [&'static str],
}

#[derive(Serialize, utoipa::ToSchema)]
struct PingAccepted {
    /// The test delivery.
    delivery: PingDelivery,
    /// The `webhook_delivery` job that sends it.
    job: JobRef,
}

#[derive(Serialize, utoipa::ToSchema)]
struct PingDelivery {
    /// Id of the delivery (its `X-Service-Delivery`).
    id: Uuid,
    /// `recommendations.ready`.
    #[schema(value_type = String)]
    event: &'static str,
    /// `queued`.
    #[schema(value_type = String)]
    status: &'static str,
    /// Always true: the payload carries `test: true`.
    test: bool,
}

/// Lists the webhook subscriptions and the available events.
#[utoipa::path(get, path = "/api/v1/webhooks", tag = "webhooks",
    responses((status = 200, description = "The subscriptions.", body = WebhookList)))]
async fn list(
    State(state): State<AppState>,
    Auth(who): Auth,
) -> ApiResult<axum::Json<WebhookList>> {
    let webhooks = webhooks::list(&state.db, who.company_id).await?;
    Ok(axum::Json(WebhookList {
        webhooks: webhooks.into_iter().map(Into::into).collect(),
        events: &webhooks::EVENTS,
    }))
}

/// Creates a subscription; its signing secret is in this answer only.
#[utoipa::path(post, path = "/api/v1/webhooks", tag = "webhooks",
    request_body = NewSubscription,
    responses((status = 201, description = "Created, with its secret.", body = CreatedSubscription)))]
async fn create(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Json(body): Json<NewSubscription>,
) -> ApiResult<(StatusCode, axum::Json<CreatedSubscription>)> {
    let done = webhooks::create(
        &state.db,
        &state.config.master_key,
        &state.config.outbound.private_targets,
        &acting.who,
        body.into(),
    )
    .await?;
    let created = state.finish(done).await;
    Ok((StatusCode::CREATED, axum::Json(created.into())))
}

/// Deletes a subscription (rotate a secret by deleting and creating again).
#[utoipa::path(delete, path = "/api/v1/webhooks/{id}", tag = "webhooks",
    params(("id" = Uuid, Path, description = "Id of the subscription.")),
    responses((status = 204, description = "Deleted.")))]
async fn remove(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let id = path_id(&id, "webhook subscription")?;
    let done = webhooks::delete(&state.db, &acting.who, id).await?;
    state.finish(done).await;
    Ok(StatusCode::NO_CONTENT)
}

/// Enqueues a test delivery of `recommendations.ready` marked `test: true`.
#[utoipa::path(post, path = "/api/v1/webhooks/{id}/test", tag = "webhooks",
    params(("id" = Uuid, Path, description = "Id of the subscription.")),
    responses(
        (status = 202, description = "The test delivery was recorded.", body = PingAccepted),
        (status = 409, description = "The test delivery could not be recorded.", body = crate::openapi::ErrorBody),
    ))]
async fn test_ping(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, axum::Json<PingAccepted>)> {
    let id = path_id(&id, "webhook subscription")?;
    let done = webhooks::record_test_ping(&state.db, &acting.who, id).await?;
    let ping = state.finish(done).await;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(PingAccepted {
            delivery: PingDelivery {
                id: ping.delivery_id,
                event: webhooks::RECOMMENDATIONS_READY,
                status: "queued",
                test: true,
            },
            job: JobRef {
                id: ping.job_id,
                kind: "webhook_delivery",
            },
        }),
    ))
}

/// The delivery log, newest first, with every attempt.
#[utoipa::path(get, path = "/api/v1/webhooks/deliveries", tag = "webhooks",
    params(DeliveryFilter),
    responses(
        (status = 200, description = "A page of deliveries.", body = DeliveryPage),
        (status = 404, description = "`subscription_id` names no subscription of the company.", body = crate::openapi::ErrorBody),
    ))]
async fn deliveries(
    State(state): State<AppState>,
    Auth(who): Auth,
    Query(filter): Query<DeliveryFilter>,
) -> ApiResult<axum::Json<DeliveryPage>> {
    Ok(axum::Json(
        webhooks::deliveries(&state.db, who.company_id, filter.into())
            .await?
            .into(),
    ))
}
