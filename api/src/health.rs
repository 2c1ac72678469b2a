//! Liveness and readiness, without a key.

use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::time::Duration;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
}

async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// Ready when PostgreSQL and Redis both answer within two seconds.
async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Value>) {
    let limit = Duration::from_secs(2);
    let pg = tokio::time::timeout(limit, sqlx::query("SELECT 1").execute(&state.db)).await;
    let pg_ok = matches!(pg, Ok(Ok(_)));
    let mut conn = state.redis.clone();
    let redis =
        tokio::time::timeout(limit, redis::cmd("PING").query_async::<String>(&mut conn)).await;
    let redis_ok = matches!(redis, Ok(Ok(_)));
    let word = |ok: bool| if ok { "ok" } else { "unreachable" };
    let status = if pg_ok && redis_ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        Json(json!({
            "status": if status == StatusCode::OK { "ready" } else { "not ready" },
            "postgres": word(pg_ok),
            "redis": word(redis_ok),
        })),
    )
}
