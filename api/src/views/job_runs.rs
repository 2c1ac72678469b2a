//! What the API answers for jobs (their state and failures), built from `jobs::runs`.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct JobCounts {
    /// Jobs waiting (also between attempts).
    pub queued: i64,
    /// Jobs running now.
    pub running: i64,
    /// Jobs that failed for good.
    pub failed: i64,
    /// Jobs that succeeded.
    pub succeeded: i64,
}

impl From<jobs::runs::JobCounts> for JobCounts {
    fn from(r: jobs::runs::JobCounts) -> Self {
        Self {
            queued: r.queued,
            running: r.running,
            failed: r.failed,
            succeeded: r.succeeded,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = RecentJobFailure)]
pub(crate) struct RecentFailure {
    /// Id of the job.
    pub id: Uuid,
    /// Kind of job.
    pub kind: String,
    /// Attempts made.
    pub attempts: i32,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When it failed for good.
    pub finished_at: Option<DateTime<Utc>>,
}

impl From<jobs::runs::RecentFailure> for RecentFailure {
    fn from(r: jobs::runs::RecentFailure) -> Self {
        Self {
            id: r.id,
            kind: r.kind,
            attempts: r.attempts,
            last_error: r.last_error,
            finished_at: r.finished_at,
        }
    }
}

/// One job as the company that caused it sees it (`GET /api/v1/jobs/:id`). The payload stays
/// internal; `error` is the last attempt's error and `result` what a finished job reported.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = Job)]
pub(crate) struct JobView {
    /// Id of the job.
    pub id: Uuid,
    /// `ingest`, `pricing_run`, `webhook_delivery` or `crm_pull`.
    pub kind: String,
    /// `queued` (also between attempts), `running`, `succeeded` or `failed`.
    pub status: String,
    /// Attempts made.
    pub attempts: i32,
    /// Attempts allowed.
    pub max_attempts: i32,
    /// When the job was recorded.
    pub created_at: DateTime<Utc>,
    /// When a queued job runs next (its first run or its next attempt); null otherwise.
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// When it succeeded or finally failed.
    pub finished_at: Option<DateTime<Utc>>,
    /// Why the last attempt failed, when it did.
    pub error: Option<String>,
    /// What the job produced, when it succeeded (its shape depends on the kind).
    pub result: Option<Value>,
}

impl From<jobs::runs::JobView> for JobView {
    fn from(r: jobs::runs::JobView) -> Self {
        Self {
            id: r.id,
            kind: r.kind,
            status: r.status,
            attempts: r.attempts,
            max_attempts: r.max_attempts,
            created_at: r.created_at,
            next_attempt_at: r.next_attempt_at,
            finished_at: r.finished_at,
            error: r.error,
            result: r.result,
        }
    }
}
