//! Connected CRMs: list, connect, change (name, schedule, enabled, a new key), disconnect,
//! pull now. Credentials are sealed at rest and only a
//! masked hint is ever shown.

use super::JobRef;
use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{path_id, Json};
use crate::openapi::ErrorBody;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use jobs::data_sources::{self, DataSource, NewDataSource, UpdateDataSource};
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(remove, update))
        .routes(routes!(pull))
}

#[derive(Serialize, utoipa::ToSchema)]
struct DataSourceList {
    /// The company's connected CRMs.
    data_sources: Vec<DataSource>,
    /// The CRM providers: those that can be connected and those announced.
    providers: Providers,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Providers {
    /// Providers that can be connected now.
    #[schema(value_type = Vec<String>)]
    live: &'static [&'static str],
    /// Providers announced but not yet available.
    #[schema(value_type = Vec<String>)]
    coming_soon: &'static [&'static str],
}

#[derive(Serialize, utoipa::ToSchema)]
struct PullAccepted {
    /// The `crm_pull` job; its result says what was stored and left out.
    job: JobRef,
}

/// Lists the company's connected CRMs and the providers.
#[utoipa::path(get, path = "/api/v1/data-sources", tag = "data-sources",
    responses((status = 200, description = "The data sources.", body = DataSourceList)))]
async fn list(
    State(state): State<AppState>,
    Auth(who): Auth,
) -> ApiResult<axum::Json<DataSourceList>> {
    let items = data_sources::list(&state.db, who.company_id).await?;
    Ok(axum::Json(DataSourceList {
        data_sources: items,
        providers: Providers {
            live: &data_sources::LIVE_PROVIDERS,
            coming_soon: &data_sources::COMING_SOON,
        },
    }))
}

/// Connects a CRM with its read-only API key (sealed at rest; only a hint is shown).
#[utoipa::path(post, path = "/api/v1/data-sources", tag = "data-sources",
    request_body = NewDataSource,
    responses((status = 201, description = "Connected.", body = DataSource)))]
async fn create(
    State(state): State<AppState>,
    Auth(who): Auth,
    Json(body): Json<NewDataSource>,
) -> ApiResult<(StatusCode, axum::Json<DataSource>)> {
    let created = data_sources::create(
        &state.db,
        &state.config.master_key,
        &state.config.outbound.private_targets,
        who.company_id,
        body,
    )
    .await?;
    Ok((StatusCode::CREATED, axum::Json(created)))
}

/// Changes a data source's name, schedule, enabled flag or key.
#[utoipa::path(patch, path = "/api/v1/data-sources/{id}", tag = "data-sources",
    params(("id" = Uuid, Path, description = "Id of the data source.")),
    request_body = UpdateDataSource,
    responses((status = 200, description = "The changed data source.", body = DataSource)))]
async fn update(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    Json(body): Json<UpdateDataSource>,
) -> ApiResult<axum::Json<DataSource>> {
    let id = path_id(&id, "data source")?;
    Ok(axum::Json(
        data_sources::update(
            &state.db,
            &state.config.master_key,
            who.company_id,
            id,
            body,
        )
        .await?,
    ))
}

/// Disconnects a data source.
#[utoipa::path(delete, path = "/api/v1/data-sources/{id}", tag = "data-sources",
    params(("id" = Uuid, Path, description = "Id of the data source.")),
    responses((status = 204, description = "Disconnected.")))]
async fn remove(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let id = path_id(&id, "data source")?;
    data_sources::delete(&state.db, who.company_id, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Pulls now: records a `crm_pull` job and answers at once.
#[utoipa::path(post, path = "/api/v1/data-sources/{id}/pull", tag = "data-sources",
    params(("id" = Uuid, Path, description = "Id of the data source.")),
    responses(
        (status = 202, description = "The pull job was recorded.", body = PullAccepted),
        (status = 409, description = "The pull could not be recorded.", body = ErrorBody),
    ))]
async fn pull(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, axum::Json<PullAccepted>)> {
    let id = path_id(&id, "data source")?;
    let job = data_sources::request_pull(&state.db, who.company_id, id).await?;
    state
        .push_after_commit(jobs::queue::Kind::CrmPull, &[job])
        .await;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(PullAccepted {
            job: JobRef {
                id: job,
                kind: "crm_pull",
            },
        }),
    ))
}
