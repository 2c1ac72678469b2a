//! What the API answers for a data source's pulls, built from `jobs::data_sources::pulls`.

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use uuid::Uuid;

/// A recorded pull.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct Pull {
    /// Id of the pull.
    pub id: Uuid,
    /// Id of its data source.
    pub source_id: Uuid,
    /// The `crm_pull` job running it.
    pub job_id: Uuid,
    /// `on_demand` or `schedule`.
    pub trigger: String,
    /// First date pulled (set when the pull starts, for a default date).
    pub date_from: Option<NaiveDate>,
    /// Last date pulled.
    pub date_to: Option<NaiveDate>,
    /// `queued`, `running`, `succeeded`, `failed` or `skipped`.
    pub status: String,
    /// When the pull was requested.
    pub requested_at: DateTime<Utc>,
    /// When it (last) started.
    pub started_at: Option<DateTime<Utc>>,
    /// When it finished.
    pub finished_at: Option<DateTime<Utc>>,
    /// Snapshots stored for a facility and date not seen before.
    pub snapshots_created: i32,
    /// Snapshots that replaced a stored one (a repeated pull changes nothing).
    pub snapshots_updated: i32,
    /// Facilities the pull created.
    pub facilities_created: i32,
    /// Facilities the pull matched.
    pub facilities_matched: i32,
    /// What could not be mapped or was left out, in fixed words (the first 50).
    #[schema(value_type = Vec<String>)]
    pub warnings: serde_json::Value,
    /// A failed or skipped pull's reason, in fixed words.
    pub error: Option<String>,
}

impl From<jobs::data_sources::Pull> for Pull {
    fn from(r: jobs::data_sources::Pull) -> Self {
        Self {
            id: r.id,
            source_id: r.source_id,
            job_id: r.job_id,
            trigger: r.trigger,
            date_from: r.date_from,
            date_to: r.date_to,
            status: r.status,
            requested_at: r.requested_at,
            started_at: r.started_at,
            finished_at: r.finished_at,
            snapshots_created: r.snapshots_created,
            snapshots_updated: r.snapshots_updated,
            facilities_created: r.facilities_created,
            facilities_matched: r.facilities_matched,
            warnings: r.warnings,
            error: r.error,
        }
    }
}
