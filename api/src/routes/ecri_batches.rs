//! ECRI batches of a facility: create a draft from the engine's suggestions, edit its lines,
//! approve it (the `ecri.approved` webhook), cancel it, download its letters, and read its
//! outcome. Each route calls the `jobs::ecri_batches` use case its dashboard twin calls.

use crate::access::Acting;
use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::{batch_ids, path_id, Json, Query};
use crate::openapi::ErrorBody;
use crate::requests::{ApproveEcriBatch, EcriBatchEdits, EcriBatchQuery, NewEcriBatch};
use crate::state::AppState;
use crate::views::ecri_batches::{EcriBatch, EcriBatchList, EcriBatchSummary};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use jobs::ecri_batches::{self as batches, Status};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(one, edit))
        .routes(routes!(approve))
        .routes(routes!(cancel))
        .routes(routes!(letters))
}

/// The answer for one batch, with its outcome once approved, its sentences' amounts in the
/// company's currency as it is now.
pub(crate) async fn answer(
    state: &AppState,
    batch: batches::Batch,
    company: domain::ids::CompanyId,
) -> ApiResult<EcriBatch> {
    let outcome = batches::outcome::outcome(&state.db, &batch).await?;
    let currency = jobs::tenancy::currency(&state.db, company).await?;
    Ok(EcriBatch::of(batch, outcome, currency))
}

/// Creates a draft batch from the facility's current ECRI suggestions (`{}` for every one
/// with an increase; `sizes` and/or `tenant_ids` to take some). A tenant with an approved
/// increase not yet in force is left out; with the `holdout_pct` setting, that share of the
/// eligible tenants is drawn at random as the control group.
#[utoipa::path(post, path = "/api/v1/facilities/{id}/ecri-batches", tag = "ecri",
    params(("id" = Uuid, Path, description = "Id of the facility.")),
    request_body = NewEcriBatch,
    responses(
        (status = 201, description = "The draft.", body = EcriBatch),
        (status = 404, description = "No such facility.", body = ErrorBody),
        (status = 409, description = "Nothing to batch (no snapshot, no suggested increase, the stop-loss, or every suggestion already approved).", body = ErrorBody),
        (status = 422, description = "A size or tenant not in the roll.", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    acting: Acting,
    Path(id): Path<String>,
    Json(body): Json<NewEcriBatch>,
) -> ApiResult<(StatusCode, axum::Json<EcriBatch>)> {
    let facility_id = path_id(&id, "facility")?;
    let done = batches::create(&state.db, &acting.who, facility_id, &body.into()).await?;
    let batch = state.finish(done).await;
    Ok((
        StatusCode::CREATED,
        axum::Json(answer(&state, batch, acting.who.company).await?),
    ))
}

/// The facility's batches, newest first (at most 200), without their lines.
#[utoipa::path(get, path = "/api/v1/facilities/{id}/ecri-batches", tag = "ecri",
    params(("id" = Uuid, Path, description = "Id of the facility."), EcriBatchQuery),
    responses((status = 200, description = "The batches.", body = EcriBatchList)))]
async fn list(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
    Query(q): Query<EcriBatchQuery>,
) -> ApiResult<axum::Json<EcriBatchList>> {
    let facility_id = path_id(&id, "facility")?;
    let status = match q.status.as_deref() {
        None => None,
        Some(s) => Some(Status::parse(s).ok_or_else(|| {
            ApiError::Invalid(format!(
                "query parameter status: '{s}' is not one of draft, approved, cancelled"
            ))
        })?),
    };
    let listed = batches::list(&state.db, who.company_id, facility_id, status).await?;
    Ok(axum::Json(EcriBatchList {
        batches: listed
            .iter()
            .map(|s| EcriBatchSummary::of(&s.batch, s.totals))
            .collect(),
    }))
}

/// One batch with its lines and, once approved, its outcome.
#[utoipa::path(get, path = "/api/v1/facilities/{id}/ecri-batches/{batch_id}", tag = "ecri",
    params(("id" = Uuid, Path, description = "Id of the facility."),
           ("batch_id" = Uuid, Path, description = "Id of the batch.")),
    responses((status = 200, description = "The batch.", body = EcriBatch),
              (status = 404, description = "No such batch.", body = ErrorBody)))]
async fn one(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path((id, bid)): Path<(String, String)>,
) -> ApiResult<axum::Json<EcriBatch>> {
    let (facility_id, batch_id) = batch_ids(&id, &bid)?;
    let batch = batches::get(&state.db, who.company_id, facility_id, batch_id).await?;
    Ok(axum::Json(answer(&state, batch, who.company_id).await?))
}

/// Edits a draft's lines: a new rent (every guardrail still applies; a refusal names the line
/// and the guardrail) or a line left out. All edits or none.
#[utoipa::path(patch, path = "/api/v1/facilities/{id}/ecri-batches/{batch_id}", tag = "ecri",
    params(("id" = Uuid, Path, description = "Id of the facility."),
           ("batch_id" = Uuid, Path, description = "Id of the batch.")),
    request_body = EcriBatchEdits,
    responses(
        (status = 200, description = "The batch as edited.", body = EcriBatch),
        (status = 404, description = "No such batch.", body = ErrorBody),
        (status = 409, description = "The batch is not a draft.", body = ErrorBody),
        (status = 422, description = "An edit names no line, or its rent breaks a guardrail.", body = ErrorBody),
    ))]
async fn edit(
    State(state): State<AppState>,
    acting: Acting,
    Path((id, bid)): Path<(String, String)>,
    Json(body): Json<EcriBatchEdits>,
) -> ApiResult<axum::Json<EcriBatch>> {
    let (facility_id, batch_id) = batch_ids(&id, &bid)?;
    let edits: Vec<batches::LineEdit> = body.lines.into_iter().map(Into::into).collect();
    let done = batches::edit(&state.db, &acting.who, facility_id, batch_id, &edits).await?;
    let batch = state.finish(done).await;
    Ok(axum::Json(answer(&state, batch, acting.who.company).await?))
}

/// Approves a draft as a fresh decision: every line is checked again (the roll, flags and
/// settings of now, the stop-loss, other batches' increases within the cooldown and control
/// groups) under a lock on the facility; then the holdout is drawn, the notice date (today
/// unless given) and the effective date (notice date + the facility's notice days) are set, and
/// an `ecri.approved` webhook event recorded.
#[utoipa::path(post, path = "/api/v1/facilities/{id}/ecri-batches/{batch_id}/approve", tag = "ecri",
    params(("id" = Uuid, Path, description = "Id of the facility."),
           ("batch_id" = Uuid, Path, description = "Id of the batch.")),
    request_body = ApproveEcriBatch,
    responses(
        (status = 200, description = "The approved batch.", body = EcriBatch),
        (status = 404, description = "No such batch.", body = ErrorBody),
        (status = 409, description = "The batch is not a draft, every line is left out, or lines no longer pass (each named with the guardrail it breaks; send drop_failing to leave them out).", body = ErrorBody),
        (status = 422, description = "A notice date in the past or over 90 days ahead.", body = ErrorBody),
    ))]
async fn approve(
    State(state): State<AppState>,
    acting: Acting,
    Path((id, bid)): Path<(String, String)>,
    Json(body): Json<ApproveEcriBatch>,
) -> ApiResult<axum::Json<EcriBatch>> {
    let (facility_id, batch_id) = batch_ids(&id, &bid)?;
    let request = batches::Approve {
        notice_date: body.notice_date,
        drop_failing: body.drop_failing,
    };
    let done = batches::approve(&state.db, &acting.who, facility_id, batch_id, &request).await?;
    let approved = state.finish(done).await;
    Ok(axum::Json(
        answer(&state, approved, acting.who.company).await?,
    ))
}

/// Cancels a draft.
#[utoipa::path(post, path = "/api/v1/facilities/{id}/ecri-batches/{batch_id}/cancel", tag = "ecri",
    params(("id" = Uuid, Path, description = "Id of the facility."),
           ("batch_id" = Uuid, Path, description = "Id of the batch.")),
    responses(
        (status = 200, description = "The cancelled batch.", body = EcriBatch),
        (status = 404, description = "No such batch.", body = ErrorBody),
        (status = 409, description = "The batch is not a draft.", body = ErrorBody),
    ))]
async fn cancel(
    State(state): State<AppState>,
    acting: Acting,
    Path((id, bid)): Path<(String, String)>,
) -> ApiResult<axum::Json<EcriBatch>> {
    let (facility_id, batch_id) = batch_ids(&id, &bid)?;
    let done = batches::cancel(&state.db, &acting.who, facility_id, batch_id).await?;
    let batch = state.finish(done).await;
    Ok(axum::Json(answer(&state, batch, acting.who.company).await?))
}

/// One row per customer of an approved batch for a mail merge (a customer's units together,
/// named `<facility>-<notice date>.csv`): the tenants, the facility's name and address, the
/// unit sizes, the current and new rent, the increase, the notice and effective dates, then
/// the customer's name and mailing address (empty for a viewer's key: a viewer never sees who
/// pays) and the units listed. A cohort line is one row with an empty `tenant_id` and its
/// `tenant_count`.
#[utoipa::path(get, path = "/api/v1/facilities/{id}/ecri-batches/{batch_id}/letters.csv", tag = "ecri",
    params(("id" = Uuid, Path, description = "Id of the facility."),
           ("batch_id" = Uuid, Path, description = "Id of the batch.")),
    responses(
        (status = 200, description = "The letters.", content_type = "text/csv", body = String),
        (status = 404, description = "No such batch.", body = ErrorBody),
        (status = 409, description = "The batch is not approved.", body = ErrorBody),
    ))]
async fn letters(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path((id, bid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let (facility_id, batch_id) = batch_ids(&id, &bid)?;
    let personal = who.role.sees_tenants();
    let l = batches::letters(&state.db, who.company_id, facility_id, batch_id, personal).await?;
    Ok(crate::exports::letters(&l))
}
