//! What the API answers for connected CRMs, built from `jobs::data_sources`.

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct DataSource {
    /// Id of the data source.
    pub id: Uuid,
    /// The CRM provider.
    pub provider: String,
    /// Name shown in lists.
    pub name: String,
    /// The CRM's base URL.
    pub base_url: String,
    /// The CRM's own account (company) id, when the provider needs one.
    pub account_id: Option<String>,
    /// Masked hint of the sealed API key.
    pub credential_hint: String,
    /// Cron expression with seconds of the scheduled pull.
    pub schedule: String,
    /// Whether scheduled pulls run.
    pub enabled: bool,
    /// When the last pull finished.
    pub last_pull_at: Option<DateTime<Utc>>,
    /// Outcome of the last pull.
    pub last_pull_status: Option<String>,
    /// Error of the last pull, in fixed words.
    pub last_error: Option<String>,
    /// When the data source was connected.
    pub created_at: DateTime<Utc>,
}

impl From<jobs::data_sources::DataSource> for DataSource {
    fn from(r: jobs::data_sources::DataSource) -> Self {
        Self {
            id: r.id,
            provider: r.provider,
            name: r.name,
            base_url: r.base_url,
            account_id: r.account_id,
            credential_hint: r.credential_hint,
            schedule: r.schedule,
            enabled: r.enabled,
            last_pull_at: r.last_pull_at,
            last_pull_status: r.last_pull_status,
            last_error: r.last_error,
            created_at: r.created_at,
        }
    }
}
