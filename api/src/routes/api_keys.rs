//! API key management: list, create (the full key is in this response only), revoke.

use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{path_id, Json};
use crate::state::AppState;
use crate::views::api_keys::{ApiKeyInfo, CreatedKey};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use jobs::tenancy;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(revoke))
}

#[derive(Serialize, utoipa::ToSchema)]
struct ApiKeyList {
    /// The company's keys, revoked ones included; never the key itself.
    api_keys: Vec<ApiKeyInfo>,
}

/// Lists the company's API keys.
#[utoipa::path(get, path = "/api/v1/api-keys", tag = "api-keys",
    responses((status = 200, description = "The keys.", body = ApiKeyList)))]
async fn list(State(state): State<AppState>, Auth(who): Auth) -> ApiResult<axum::Json<ApiKeyList>> {
    let api_keys = tenancy::list_api_keys(&state.db, who.company_id).await?;
    Ok(axum::Json(ApiKeyList {
        api_keys: api_keys.into_iter().map(Into::into).collect(),
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct NewKey {
    /// A name to tell the key apart (`unnamed` when absent).
    #[schema(value_type = Option<domain::values::Text<100>>)]
    name: Option<String>,
    /// What the key may do: `admin` (the default: everything but owners), `manager`
    /// (pricing, ECRI and street-rate decisions, pushes and uploads) or `viewer` (reads only,
    /// for a BI tool). A key is never an owner.
    role: Option<crate::views::team::RoleName>,
    /// Limits a `manager` or `viewer` key to these facilities of the company: everything else
    /// is invisible to it (404), and analytics count only these. Absent: every facility.
    #[schema(min_items = 1, max_items = 1000)]
    facility_ids: Option<Vec<uuid::Uuid>>,
}

/// Creates an API key; the full key is in this answer only.
#[utoipa::path(post, path = "/api/v1/api-keys", tag = "api-keys",
    request_body = NewKey,
    responses((status = 201, description = "The new key, shown once.", body = CreatedKey)))]
async fn create(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Json(body): Json<NewKey>,
) -> ApiResult<(StatusCode, axum::Json<CreatedKey>)> {
    let name = body.name.unwrap_or_else(|| "unnamed".to_owned());
    let role = body.role.map_or(jobs::access::Role::Admin, Into::into);
    let done = tenancy::create_api_key_with(
        &state.db,
        &state.hasher,
        &acting.who,
        &name,
        role,
        body.facility_ids,
    )
    .await?;
    let key = state.finish(done).await;
    Ok((StatusCode::CREATED, axum::Json(key.into())))
}

/// Revokes an API key; it stops working at once.
#[utoipa::path(delete, path = "/api/v1/api-keys/{id}", tag = "api-keys",
    params(("id" = Uuid, Path, description = "Id of the key.")),
    responses((status = 200, description = "The revoked key.", body = ApiKeyInfo)))]
async fn revoke(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<ApiKeyInfo>> {
    let id = path_id(&id, "API key")?;
    let done = tenancy::revoke_api_key(&state.db, &acting.who, id).await?;
    Ok(axum::Json(state.finish(done).await.into()))
}
