//! `GET /api/v1/jobs/:id`: follow a job that a 202 (or a sync's `job`) named: its state,
//! attempts, and its result or error. Only the company that caused the job sees it.

use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::path_id;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(job))
}

/// A job of the company: its state, attempts, and its result or error.
#[utoipa::path(get, path = "/api/v1/jobs/{id}", tag = "account",
    params(("id" = Uuid, Path, description = "Id of the job, as a 202 or a sync named it.")),
    responses((status = 200, description = "The job.", body = crate::views::job_runs::JobView)))]
async fn job(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<crate::views::job_runs::JobView>> {
    let id = path_id(&id, "job")?;
    jobs::runs::company_job(&state.db, who.company_id, &who.scope, id)
        .await?
        .map(|job| Json(job.into()))
        .ok_or_else(|| ApiError::NotFound(format!("no job with id {id}")))
}
