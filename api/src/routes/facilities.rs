//! Facilities CRUD, scoped to the key's company.

use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{parse_json, path_id, Json, JsonBytes};
use crate::openapi::ErrorBody;
use crate::requests::FacilityInput;
use crate::state::AppState;
use crate::views::facilities::Facility;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use jobs::facilities;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(read, update, remove))
}

/// The company's facilities, by name.
#[derive(Serialize, utoipa::ToSchema)]
struct FacilityList {
    /// Every facility of the company, ordered by name.
    facilities: Vec<Facility>,
    /// How many there are.
    count: usize,
}

/// Lists the company's facilities, ordered by name, each with its latest sync date.
#[utoipa::path(get, path = "/api/v1/facilities", tag = "facilities",
    responses((status = 200, description = "The facilities.", body = FacilityList)))]
async fn list(
    State(state): State<AppState>,
    Auth(who): Auth,
) -> ApiResult<axum::Json<FacilityList>> {
    let facilities = facilities::list(&state.db, who.company_id, &who.scope).await?;
    Ok(axum::Json(FacilityList {
        count: facilities.len(),
        facilities: facilities.into_iter().map(Into::into).collect(),
    }))
}

/// Creates a facility (`name` required).
#[utoipa::path(post, path = "/api/v1/facilities", tag = "facilities",
    request_body = FacilityInput,
    responses(
        (status = 201, description = "Created.", body = Facility),
        (status = 409, description = "Another facility has the name, or the source system and external id.", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Json(input): Json<FacilityInput>,
) -> ApiResult<(StatusCode, axum::Json<Facility>)> {
    let done = facilities::create(&state.db, &acting.who, input.into()).await?;
    let f = state.finish(done).await;
    Ok((StatusCode::CREATED, axum::Json(f.into())))
}

/// Reads one facility.
#[utoipa::path(get, path = "/api/v1/facilities/{id}", tag = "facilities",
    params(("id" = Uuid, Path, description = "Id of the facility.")),
    responses((status = 200, description = "The facility.", body = Facility)))]
async fn read(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Facility>> {
    let id = path_id(&id, "facility")?;
    Ok(axum::Json(
        facilities::get(&state.db, who.company_id, id).await?.into(),
    ))
}

/// Changes a facility: an absent field stays, `null` clears it (except `name`).
#[utoipa::path(put, path = "/api/v1/facilities/{id}", tag = "facilities",
    params(("id" = Uuid, Path, description = "Id of the facility.")),
    request_body = FacilityInput,
    responses(
        (status = 200, description = "The changed facility.", body = Facility),
        (status = 409, description = "Another facility has the name, or the source system and external id.", body = ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    Auth(who): Auth,
    acting: crate::access::Acting,
    Path(id): Path<String>,
    JsonBytes(body): JsonBytes,
) -> ApiResult<axum::Json<Facility>> {
    let id = path_id(&id, "facility")?;
    // A foreign or unknown facility is a 404 before the body is judged.
    facilities::ensure_owned(&state.db, who.company_id, id).await?;
    let input: FacilityInput = parse_json(&body)?;
    let done = facilities::update(&state.db, &acting.who, id, input.into()).await?;
    Ok(axum::Json(state.finish(done).await.into()))
}

/// Deletes a facility and all of its data.
#[utoipa::path(delete, path = "/api/v1/facilities/{id}", tag = "facilities",
    params(("id" = Uuid, Path, description = "Id of the facility.")),
    responses((status = 204, description = "Deleted.")))]
async fn remove(
    State(state): State<AppState>,
    acting: crate::access::Acting,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let id = path_id(&id, "facility")?;
    let done = facilities::delete(&state.db, &acting.who, id).await?;
    state.finish(done).await;
    Ok(StatusCode::NO_CONTENT)
}
