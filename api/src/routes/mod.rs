//! The `/api/v1` tree: each module exports its own `router()` with its OpenAPI documentation;
//! [`api_v1`] mounts them (the keyed ones behind the API-key check) and [`document`] describes
//! them. The whole application (pages, health, fallbacks, layers) is assembled in `crate::app`.

mod analytics;
mod api_keys;
pub(crate) mod audit;
mod data_sources;
mod ecri;
pub(crate) mod ecri_batches;
mod ecri_calibration;
mod facilities;
mod job_status;
mod password;
mod pricing;
mod rates;
mod rent_roll;
mod status;
mod sync;
mod team;
pub(crate) mod upload;
mod webhooks;

use crate::state::AppState;
use axum::middleware;
use axum::Router;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

/// A job recorded by a request, to follow at `GET /api/v1/jobs/{id}`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub(crate) struct JobRef {
    /// Id of the job.
    pub id: Uuid,
    /// Kind of job: `ingest`, `pricing_run`, `webhook_delivery`, `crm_pull`, `ecri_run` or
    /// `ecri_fit`.
    #[schema(value_type = String)]
    pub kind: &'static str,
}

/// The routes that need an API key, each with its documentation.
fn protected() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(sync::router())
        .merge(rent_roll::router())
        .merge(analytics::router())
        .merge(facilities::router())
        .merge(ecri::router())
        .merge(ecri_batches::router())
        .merge(ecri_calibration::router())
        .merge(api_keys::router())
        .merge(data_sources::router())
        .merge(status::router())
        .merge(job_status::router())
        .merge(pricing::router())
        .merge(rates::router())
        .merge(upload::router())
        .merge(webhooks::router())
        .merge(team::router())
        .merge(audit::router())
}

/// The public `/api/v1` routes, each with its documentation.
fn public() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(password::router())
        .routes(routes!(crate::openapi::openapi_json))
}

/// The OpenAPI document of every `/api/v1` route.
pub fn document() -> utoipa::openapi::OpenApi {
    crate::openapi::finish(
        OpenApiRouter::with_openapi(crate::openapi::base())
            .merge(protected())
            .merge(public())
            .into_openapi(),
    )
}

/// The `/api/v1` routes: the keyed ones behind the API-key check, and the public ones.
pub fn api_v1(state: AppState) -> Router<AppState> {
    let (protected, _) = protected().split_for_parts();
    // The role check runs inside the key check, which puts the key's principal in place.
    let protected = protected
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::access::authorize_api,
        ))
        .route_layer(middleware::from_fn_with_state(
            state,
            crate::auth::require_key,
        ));
    let (public, _) = public().split_for_parts();
    protected.merge(public)
}
