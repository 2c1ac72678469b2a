//! API key management: list, create (the full key is in this response only), revoke.

use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{path_id, Json};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, get};
use axum::Router;
use jobs::tenancy::{self, ApiKeyInfo, CreatedKey};
use serde::Deserialize;
use serde_json::{json, Value};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/api-keys", get(list).post(create))
        .route("/api/v1/api-keys/{id}", delete(revoke))
}

async fn list(State(state): State<AppState>, Auth(who): Auth) -> ApiResult<axum::Json<Value>> {
    let keys = tenancy::list_api_keys(&state.db, who.company_id).await?;
    Ok(axum::Json(json!({ "api_keys": keys })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewKey {
    name: Option<String>,
}

async fn create(
    State(state): State<AppState>,
    Auth(who): Auth,
    Json(body): Json<NewKey>,
) -> ApiResult<(StatusCode, axum::Json<CreatedKey>)> {
    let name = body.name.unwrap_or_else(|| "unnamed".to_owned());
    let key = tenancy::create_api_key(&state.db, &state.hasher, who.company_id, &name).await?;
    Ok((StatusCode::CREATED, axum::Json(key)))
}

async fn revoke(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<ApiKeyInfo>> {
    let id = path_id(&id, "API key")?;
    Ok(axum::Json(
        tenancy::revoke_api_key(&state.db, Some(who.company_id), id).await?,
    ))
}
