//! What the API answers for API keys, built from `jobs::tenancy::api_keys`.

use super::team::RoleName;
use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ApiKey)]
pub(crate) struct ApiKeyInfo {
    /// Id of the key.
    pub id: Uuid,
    /// Name given to the key.
    pub name: String,
    /// First 12 characters of the key, to tell keys apart.
    pub prefix: String,
    /// When the key was created.
    pub created_at: DateTime<Utc>,
    /// When the key was last used (updated at most once a minute).
    pub last_used_at: Option<DateTime<Utc>>,
    /// When the key was revoked; null while it works.
    pub revoked_at: Option<DateTime<Utc>>,
    /// What the key may do.
    pub role: RoleName,
    /// The facilities the key may see; null for every facility.
    pub facility_ids: Option<Vec<Uuid>>,
}

impl From<jobs::tenancy::ApiKeyInfo> for ApiKeyInfo {
    fn from(r: jobs::tenancy::ApiKeyInfo) -> Self {
        Self {
            id: r.id,
            name: r.name,
            prefix: r.prefix,
            created_at: r.created_at,
            last_used_at: r.last_used_at,
            revoked_at: r.revoked_at,
            role: jobs::access::Role::parse(&r.role)
                .unwrap_or(jobs::access::Role::Viewer)
                .into(),
            facility_ids: r.facility_ids,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = CreatedApiKey)]
pub(crate) struct CreatedKey {
    /// Id of the key.
    pub id: Uuid,
    /// Name given to the key.
    pub name: String,
    /// First 12 characters of the key, to tell keys apart.
    pub prefix: String,
    /// When the key was created.
    pub created_at: DateTime<Utc>,
    /// What the key may do.
    pub role: RoleName,
    /// The facilities the key may see; null for every facility.
    pub facility_ids: Option<Vec<Uuid>>,
    /// The full key: returned once, never stored.
    pub api_key: String,
}

impl From<jobs::tenancy::CreatedKey> for CreatedKey {
    fn from(r: jobs::tenancy::CreatedKey) -> Self {
        Self {
            id: r.id,
            name: r.name,
            prefix: r.prefix,
            created_at: r.created_at,
            role: r.role.into(),
            facility_ids: r.facility_ids,
            api_key: r.api_key,
        }
    }
}
