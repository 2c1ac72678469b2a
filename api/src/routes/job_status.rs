//! `GET /api/v1/jobs/:id`: follow a job that a 202 (or a sync's `job`) named: its state,
//! attempts, and its result or error. Only the company that caused the job sees it.

use crate::auth::Auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::path_id;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::routing::get;
use axum::{Json, Router};
use jobs::runs::JobView;

pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/jobs/{id}", get(job))
}

async fn job(
    State(state): State<AppState>,
    Auth(who): Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<JobView>> {
    let id = path_id(&id, "job")?;
    jobs::runs::company_job(&state.db, who.company_id, id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::NotFound(format!("no job with id {id}")))
}
