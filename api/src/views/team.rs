//! Members, invitations and roles, as the API answers them.

use super::decisions::Actor;
use chrono::{DateTime, Utc};
use jobs::access::{Role, Scope};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A role: `owner` (everything), `admin` (everything but owners), `manager` (pricing, ECRI and
/// street-rate decisions, uploads, competitor rates), `viewer` (reads only).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, utoipa::ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RoleName {
    Owner,
    Admin,
    Manager,
    Viewer,
}

impl From<Role> for RoleName {
    fn from(r: Role) -> Self {
        match r {
            Role::Owner => Self::Owner,
            Role::Admin => Self::Admin,
            Role::Manager => Self::Manager,
            Role::Viewer => Self::Viewer,
        }
    }
}

impl From<RoleName> for Role {
    fn from(r: RoleName) -> Self {
        match r {
            RoleName::Owner => Self::Owner,
            RoleName::Admin => Self::Admin,
            RoleName::Manager => Self::Manager,
            RoleName::Viewer => Self::Viewer,
        }
    }
}

/// A member of the company.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct Member {
    /// Id of the member.
    pub id: Uuid,
    /// The member's address, which is their login.
    pub email: String,
    /// What the member may do.
    pub role: RoleName,
    /// The facilities the member sees; null for every facility.
    pub facility_ids: Option<Vec<Uuid>>,
    /// When the member last signed in; null if never.
    pub last_sign_in_at: Option<DateTime<Utc>>,
    /// When the member joined.
    pub created_at: DateTime<Utc>,
}

fn ids(scope: &Scope) -> Option<Vec<Uuid>> {
    scope.column()
}

impl From<jobs::team::Member> for Member {
    fn from(m: jobs::team::Member) -> Self {
        Self {
            id: m.id,
            email: m.email,
            role: m.role.into(),
            facility_ids: ids(&m.scope),
            last_sign_in_at: m.last_sign_in_at,
            created_at: m.created_at,
        }
    }
}

/// An invitation to join the company.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct Invitation {
    /// Id of the invitation.
    pub id: Uuid,
    /// The address invited.
    pub email: String,
    /// The role the person gets on accepting.
    pub role: RoleName,
    /// The facilities the person will see; null for every facility.
    pub facility_ids: Option<Vec<Uuid>>,
    /// Who invited.
    pub invited_by: Actor,
    /// When it was sent.
    pub created_at: DateTime<Utc>,
    /// Until when its link works.
    pub expires_at: DateTime<Utc>,
    /// When it was revoked; null while open.
    pub revoked_at: Option<DateTime<Utc>>,
}

impl From<jobs::team::Invitation> for Invitation {
    fn from(i: jobs::team::Invitation) -> Self {
        Self {
            id: i.id,
            email: i.email,
            role: i.role.into(),
            facility_ids: ids(&i.scope),
            invited_by: i.invited_by.into(),
            created_at: i.created_at,
            expires_at: i.expires_at,
            revoked_at: i.revoked_at,
        }
    }
}
