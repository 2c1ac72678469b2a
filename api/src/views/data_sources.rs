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

/// Whether a provider can be connected today.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum State {
    Live,
    ComingSoon,
}

impl From<jobs::crm::provider::State> for State {
    fn from(s: jobs::crm::provider::State) -> Self {
        match s {
            jobs::crm::provider::State::Live => Self::Live,
            jobs::crm::provider::State::ComingSoon => Self::ComingSoon,
        }
    }
}

/// What a provider is and what connecting it takes.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct ProviderInfo {
    /// The value of `provider` in the API.
    #[schema(value_type = String)]
    pub name: &'static str,
    /// The provider's name for people.
    #[schema(value_type = String)]
    pub label: &'static str,
    /// `live` (can be connected) or `coming_soon` (announced).
    pub state: State,
    /// Credential fields a connection needs, of `api_key` and `api_secret`.
    #[schema(value_type = Vec<String>)]
    pub credential_fields: &'static [&'static str],
    /// Whether the connection takes a `base_url` (required unless there is a default).
    pub takes_base_url: bool,
    /// The address used when none is given.
    #[schema(value_type = Option<String>)]
    pub default_base_url: Option<&'static str>,
    /// Whether the connection needs the CRM's own account (company) id, `account_id`.
    pub needs_account_id: bool,
    /// Whether the CRM can answer for a past date (otherwise a backfill stores its present state).
    pub has_history: bool,
}

impl From<jobs::crm::provider::ProviderInfo> for ProviderInfo {
    fn from(p: jobs::crm::provider::ProviderInfo) -> Self {
        Self {
            name: p.name,
            label: p.label,
            state: p.state.into(),
            credential_fields: p.credential_fields,
            takes_base_url: p.takes_base_url,
            default_base_url: p.default_base_url,
            needs_account_id: p.needs_account_id,
            has_history: p.has_history,
        }
    }
}
