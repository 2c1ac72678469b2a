//! Connected CRMs: list, connect, change (name, schedule, enabled, a new key), disconnect,
//! pull now. Credentials are sealed at rest and only a
//! masked hint is ever shown.

use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{path_id, Json};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, get, post};
use axum::Router;
use jobs::data_sources::{self, DataSource, NewDataSource, UpdateDataSource};
use serde_json::{json, Value};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/data-sources", get(list).post(create))
        .route("/api/v1/data-sources/{id}", delete(remove).patch(update))
        .route("/api/v1/data-sources/{id}/pull", post(pull))
}

async fn list(State(state): State<AppState>, Auth(who): Auth) -> ApiResult<axum::Json<Value>> {
    let items = data_sources::list(&state.db, who.company_id).await?;
    Ok(axum::Json(json!({
        "data_sources": items,
        "providers": { "live": data_sources::LIVE_PROVIDERS, "coming_soon": data_sources::COMING_SOON },
    })))
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
        who.company_id,
        body,
    )
    .await?;
    Ok((StatusCode::CREATED, axum::Json(created)))
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

async fn pull(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, axum::Json<Value>)> {
    let id = path_id(&id, "data source")?;
    let job = data_sources::request_pull(&state.db, who.company_id, id).await?;
    state
        .push_after_commit(jobs::queue::Kind::CrmPull, &[job])
        .await;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(json!({ "job": { "id": job, "kind": "crm_pull" } })),
    ))
}
