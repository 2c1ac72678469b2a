//! Connected CRMs: the providers, connect (after a connection test unless `verify: false`),
//! test a connection without storing it, change (name, schedule, enabled, a new key), disconnect,
//! pull now (one date or a backfill range) and the pulls of a source. Credentials are sealed at
//! rest and only a masked hint is ever shown.

use super::JobRef;
use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{parse_json, path_id, Json};
use crate::openapi::ErrorBody;
use crate::requests::{NewDataSource, PullRange, UpdateDataSource};
use crate::state::AppState;
use crate::views::data_sources::{DataSource, ProviderInfo};
use crate::views::pulls::Pull;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use jobs::crm::provider::{self, State as ProviderState};
use jobs::data_sources;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(providers))
        .routes(routes!(test))
        .routes(routes!(remove, update))
        .routes(routes!(pull))
        .routes(routes!(pulls))
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
    live: Vec<&'static str>,
    /// Providers announced but not yet available.
    #[schema(value_type = Vec<String>)]
    coming_soon: Vec<&'static str>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct ProviderList {
    /// Every provider of the registry, live ones first.
    providers: Vec<ProviderInfo>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct ConnectionOk {
    /// Always true: the CRM answered the test with the credential.
    ok: bool,
}

#[derive(Serialize, utoipa::ToSchema)]
struct PullAccepted {
    /// The `crm_pull` job; its result says what was stored and left out.
    job: JobRef,
    /// The pull's row, as `GET .../pulls` lists it.
    pull: Pull,
}

#[derive(Serialize, utoipa::ToSchema)]
struct PullList {
    /// The source's latest pulls (at most 100), newest first.
    pulls: Vec<Pull>,
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
        data_sources: items.into_iter().map(Into::into).collect(),
        providers: Providers {
            live: provider::names(ProviderState::Live),
            coming_soon: provider::names(ProviderState::ComingSoon),
        },
    }))
}

/// Lists every CRM provider with its state and what connecting it takes.
#[utoipa::path(get, path = "/api/v1/data-sources/providers", tag = "data-sources",
    responses((status = 200, description = "The providers.", body = ProviderList)))]
async fn providers(Auth(_): Auth) -> axum::Json<ProviderList> {
    axum::Json(ProviderList {
        providers: provider::PROVIDERS.iter().map(|p| p.info.into()).collect(),
    })
}

/// Connects a CRM with its read-only credential (sealed at rest; only a hint is shown), after
/// a connection test unless `verify` is false.
#[utoipa::path(post, path = "/api/v1/data-sources", tag = "data-sources",
    request_body = NewDataSource,
    responses(
        (status = 201, description = "Connected.", body = DataSource),
        (status = 429, description = "Too many connection tests of this account, or of the service, are running; retry after `Retry-After` seconds.", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Json(body): Json<NewDataSource>,
) -> ApiResult<(StatusCode, axum::Json<DataSource>)> {
    let done = data_sources::create(
        &state.db,
        &state.config.master_key,
        &state.config.outbound.private_targets,
        &state.crm_client()?,
        &acting.who,
        body.into(),
    )
    .await?;
    let created = state.finish(done).await;
    Ok((StatusCode::CREATED, axum::Json(created.into())))
}

/// Tests a connection with one cheap request to the CRM; stores nothing.
#[utoipa::path(post, path = "/api/v1/data-sources/test", tag = "data-sources",
    request_body = NewDataSource,
    responses(
        (status = 200, description = "The CRM answered with the credential.", body = ConnectionOk),
        (status = 429, description = "Too many connection tests of this account, or of the service, are running; retry after `Retry-After` seconds.", body = ErrorBody),
    ))]
async fn test(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Json(body): Json<NewDataSource>,
) -> ApiResult<axum::Json<ConnectionOk>> {
    let done = data_sources::test(
        &state.db,
        &state.crm_client()?,
        &state.config.outbound.private_targets,
        &acting.who,
        &body.into(),
    )
    .await?;
    state.finish(done).await;
    Ok(axum::Json(ConnectionOk { ok: true }))
}

/// Changes a data source's name, schedule, enabled flag or key (with its secret, for storEDGE).
#[utoipa::path(patch, path = "/api/v1/data-sources/{id}", tag = "data-sources",
    params(("id" = Uuid, Path, description = "Id of the data source.")),
    request_body = UpdateDataSource,
    responses((status = 200, description = "The changed data source.", body = DataSource)))]
async fn update(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    Json(body): Json<UpdateDataSource>,
) -> ApiResult<axum::Json<DataSource>> {
    let id = path_id(&id, "data source")?;
    let key = &state.config.master_key;
    let done = data_sources::update(&state.db, key, &acting.who, id, body.into()).await?;
    Ok(axum::Json(state.finish(done).await.into()))
}

/// Disconnects a data source.
#[utoipa::path(delete, path = "/api/v1/data-sources/{id}", tag = "data-sources",
    params(("id" = Uuid, Path, description = "Id of the data source.")),
    responses((status = 204, description = "Disconnected.")))]
async fn remove(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let id = path_id(&id, "data source")?;
    let done = data_sources::delete(&state.db, &acting.who, id).await?;
    state.finish(done).await;
    Ok(StatusCode::NO_CONTENT)
}

/// Pulls now: records a `crm_pull` job and its pull row, and answers at once. The body is
/// optional: none for yesterday in the company's time zone, `{date}`, or a backfill
/// `{from, to}` of at most 90 days.
#[utoipa::path(post, path = "/api/v1/data-sources/{id}/pull", tag = "data-sources",
    params(("id" = Uuid, Path, description = "Id of the data source.")),
    request_body(content = Option<PullRange>, description = "The dates to pull; optional."),
    responses(
        (status = 202, description = "The pull was recorded.", body = PullAccepted),
        (status = 409, description = "The pull could not be recorded.", body = ErrorBody),
    ))]
async fn pull(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, axum::Json<PullAccepted>)> {
    let id = path_id(&id, "data source")?;
    let range: PullRange = if body.iter().all(u8::is_ascii_whitespace) {
        PullRange::default()
    } else {
        parse_json(&body)?
    };
    let done = data_sources::request_pull(&state.db, &acting.who, id, &range.into()).await?;
    let pull = state.finish(done).await;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(PullAccepted {
            job: JobRef {
                id: pull.job_id,
                kind: "crm_pull",
            },
            pull: pull.into(),
        }),
    ))
}

/// Lists a data source's latest pulls, newest first.
#[utoipa::path(get, path = "/api/v1/data-sources/{id}/pulls", tag = "data-sources",
    params(("id" = Uuid, Path, description = "Id of the data source.")),
    responses((status = 200, description = "The pulls.", body = PullList)))]
async fn pulls(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<PullList>> {
    let id = path_id(&id, "data source")?;
    let pulls = data_sources::pulls::list(&state.db, who.company_id, id).await?;
    Ok(axum::Json(PullList {
        pulls: pulls.into_iter().map(Into::into).collect(),
    }))
}
