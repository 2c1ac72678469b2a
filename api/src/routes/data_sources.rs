//! Connected CRMs: the providers, connect (after a connection test unless `verify: false`),
//! test a connection without storing it, change (name, schedule, enabled, a new key), disconnect,
//! pull now (one date or a backfill range) and the pulls of a source. Credentials are sealed at
//! rest and only a masked hint is ever shown.

use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{parse_json, path_id, Json};
use crate::state::AppState;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, get, post};
use axum::Router;
use jobs::crm::provider::{self, State as ProviderState};
use jobs::data_sources::{self, DataSource, NewDataSource, Pull, PullRange, UpdateDataSource};
use serde_json::{json, Value};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/data-sources", get(list).post(create))
        .route("/api/v1/data-sources/providers", get(providers))
        .route("/api/v1/data-sources/test", post(test))
        .route("/api/v1/data-sources/{id}", delete(remove).patch(update))
        .route("/api/v1/data-sources/{id}/pull", post(pull))
        .route("/api/v1/data-sources/{id}/pulls", get(pulls))
}

async fn list(State(state): State<AppState>, Auth(who): Auth) -> ApiResult<axum::Json<Value>> {
    let items = data_sources::list(&state.db, who.company_id).await?;
    Ok(axum::Json(json!({
        "data_sources": items,
        "providers": {
            "live": provider::names(ProviderState::Live),
            "coming_soon": provider::names(ProviderState::ComingSoon),
        },
    })))
}

async fn providers(Auth(_): Auth) -> axum::Json<Value> {
    let all: Vec<_> = provider::PROVIDERS.iter().map(|p| p.info).collect();
    axum::Json(json!({ "providers": all }))
}

async fn create(
    State(state): State<AppState>,
    Auth(who): Auth,
    Json(body): Json<NewDataSource>,
) -> ApiResult<(StatusCode, axum::Json<DataSource>)> {
    let created = data_sources::create(
        &state.db,
        &state.config.master_key,
        &state.config.outbound.private_targets,
        &state.crm_client()?,
        who.company_id,
        body,
    )
    .await?;
    Ok((StatusCode::CREATED, axum::Json(created)))
}

async fn test(
    State(state): State<AppState>,
    Auth(_): Auth,
    Json(body): Json<NewDataSource>,
) -> ApiResult<axum::Json<Value>> {
    data_sources::test(
        &state.crm_client()?,
        &state.config.outbound.private_targets,
        &body,
    )
    .await?;
    Ok(axum::Json(json!({ "ok": true })))
}

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

async fn remove(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let id = path_id(&id, "data source")?;
    data_sources::delete(&state.db, who.company_id, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The body is optional: empty for the default date, else `{date}` or `{from, to}`.
async fn pull(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, axum::Json<Value>)> {
    let id = path_id(&id, "data source")?;
    let range: PullRange = if body.iter().all(u8::is_ascii_whitespace) {
        PullRange::default()
    } else {
        parse_json(&body)?
    };
    let pull = data_sources::request_pull(&state.db, who.company_id, id, &range).await?;
    state
        .push_after_commit(jobs::queue::Kind::CrmPull, &[pull.job_id])
        .await;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(json!({ "job": { "id": pull.job_id, "kind": "crm_pull" }, "pull": pull })),
    ))
}

async fn pulls(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Value>> {
    let id = path_id(&id, "data source")?;
    let items: Vec<Pull> = data_sources::pulls(&state.db, who.company_id, id).await?;
    Ok(axum::Json(json!({ "pulls": items })))
}
