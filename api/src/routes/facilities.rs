//! Facilities CRUD, scoped to the key's company.

use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{parse_json, path_id, Json, JsonBytes};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use jobs::facilities::{self, Facility, FacilityInput};
use serde_json::{json, Value};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/facilities", get(list).post(create))
        .route(
            "/api/v1/facilities/{id}",
            get(read).put(update).delete(remove),
        )
}

async fn list(State(state): State<AppState>, Auth(who): Auth) -> ApiResult<axum::Json<Value>> {
    let items = facilities::list(&state.db, who.company_id).await?;
    Ok(axum::Json(
        json!({ "facilities": items, "count": items.len() }),
    ))
}

async fn create(
    State(state): State<AppState>,
    Auth(who): Auth,
    Json(input): Json<FacilityInput>,
) -> ApiResult<(StatusCode, axum::Json<Facility>)> {
    let f = facilities::create(&state.db, who.company_id, input).await?;
    Ok((StatusCode::CREATED, axum::Json(f)))
}

async fn read(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Facility>> {
    let id = path_id(&id, "facility")?;
    Ok(axum::Json(
        facilities::get(&state.db, who.company_id, id).await?,
    ))
}

async fn update(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    JsonBytes(body): JsonBytes,
) -> ApiResult<axum::Json<Facility>> {
    let id = path_id(&id, "facility")?;
    // A foreign or unknown facility is a 404 before the body is judged.
    facilities::ensure_owned(&state.db, who.company_id, id).await?;
    let input: FacilityInput = parse_json(&body)?;
    Ok(axum::Json(
        facilities::update(&state.db, who.company_id, id, input).await?,
    ))
}

async fn remove(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let id = path_id(&id, "facility")?;
    facilities::delete(&state.db, who.company_id, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
