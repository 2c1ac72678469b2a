//! The people already in the company: listing them and changing or removing one. Kept apart
//! from invitations because these changes must guard the company's last owner, which needs the
//! owner rows locked first.

use super::scope::check_scope;
use super::{member_json, owners_only, role_of};
use crate::access::{Role, Scope};
use crate::actor::Actor;
use crate::audit::Change;
use crate::door::{self, Committed, Jobs, Who};
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use domain::ids::CompanyId;
use serde_json::json;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// A member of the company.
#[derive(Clone, Debug)]
pub struct Member {
    pub id: Uuid,
    pub email: String,
    pub role: Role,
    pub scope: Scope,
    pub last_sign_in_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// A member as stored.
struct MemberRow {
    id: Uuid,
    email: String,
    role: String,
    facility_ids: Option<Vec<Uuid>>,
    last_sign_in_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
}

impl From<MemberRow> for Member {
    fn from(r: MemberRow) -> Self {
        Self {
            id: r.id,
            email: r.email,
            role: role_of(&r.role),
            scope: Scope::from_column(r.facility_ids),
            last_sign_in_at: r.last_sign_in_at,
            created_at: r.created_at,
        }
    }
}

/// The company's members, owners first, then by address.
pub async fn members(pool: &PgPool, company: CompanyId) -> Result<Vec<Member>> {
    let rows = sqlx::query_as!(
        MemberRow,
        "SELECT id, email, role, facility_ids, last_sign_in_at, created_at FROM users
         WHERE company_id = $1
         ORDER BY array_position(ARRAY['owner', 'admin', 'manager', 'viewer'], role), lower(email)",
        company.uuid()
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(Into::into).collect())
}

/// A change to a member: each part left out stays as it is. `facility_ids: Some(None)` gives
/// every facility.
#[derive(Clone, Debug, Default)]
pub struct MemberChange {
    pub role: Option<Role>,
    pub facility_ids: Option<Option<Vec<Uuid>>>,
}

/// Locks the company's owners and the member; the member as stored.
async fn lock_member(
    conn: &mut PgConnection,
    company: CompanyId,
    id: Uuid,
) -> Result<(Member, i64)> {
    // Every owner row is locked first, in id order, so two concurrent demotions cannot both
    // see another owner left.
    let owners = sqlx::query_scalar!(
        "SELECT id FROM users WHERE company_id = $1 AND role = 'owner' ORDER BY id FOR UPDATE",
        company.uuid()
    )
    .fetch_all(&mut *conn)
    .await?;
    let member = sqlx::query_as!(
        MemberRow,
        "SELECT id, email, role, facility_ids, last_sign_in_at, created_at FROM users
         WHERE id = $1 AND company_id = $2 FOR UPDATE",
        id,
        company.uuid()
    )
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no member with id {id}")))?;
    Ok((member.into(), owners.len() as i64))
}

/// Changes a member's role or scope. The member's next request already runs with it; the open
/// invitations the new role may no longer send are revoked (each recorded).
pub async fn update_member(
    pool: &PgPool,
    who: &Who,
    id: Uuid,
    change: MemberChange,
) -> Result<Committed<Member>> {
    let (company, by) = (who.company, &who.by());
    let acting = by.role.unwrap_or(Role::Viewer);
    let mut tx = pool.begin().await?;
    let (member, owners) = lock_member(&mut tx, company, id).await?;
    let role = change.role.unwrap_or(member.role);
    if member.role == Role::Owner || role == Role::Owner {
        owners_only(acting, "make, change or remove an owner")?;
    }
    if member.role == Role::Owner && role != Role::Owner && owners <= 1 {
        return Err(Error::Conflict(
            "this is the company's last owner: make another member owner first".to_owned(),
        ));
    }
    let requested = match change.facility_ids {
        Some(ids) => ids,
        // A role that cannot be scoped drops the old scope; otherwise it is kept.
        None if role.may_be_scoped() => member.scope.column(),
        None => None,
    };
    let scope = check_scope(&mut tx, company, role, requested).await?;
    let scope_ids = scope.column();
    sqlx::query!(
        "UPDATE users SET role = $2, facility_ids = $3 WHERE id = $1",
        id,
        role.as_str(),
        scope_ids.as_deref()
    )
    .execute(&mut *tx)
    .await?;
    // A member who may no longer invite (or invite an owner) leaves no such link live.
    let sender = Actor::user(id, &member.email);
    super::end_unbacked(&mut tx, company, by, &sender, Some(role)).await?;
    let change = Change::new("member.update").target("user", id).values(
        Some(member_json(member.role, &member.scope)),
        Some(member_json(role, &scope)),
    );
    let member = Member {
        role,
        scope,
        ..member
    };
    door::commit(tx, who, change, member, Jobs::none()).await
}

/// Removes a member: the account and every session of it end at once, and the open
/// invitations the member sent are revoked (each recorded).
pub async fn remove_member(pool: &PgPool, who: &Who, id: Uuid) -> Result<Committed<Member>> {
    let (company, by) = (who.company, &who.by());
    let acting = by.role.unwrap_or(Role::Viewer);
    let mut tx = pool.begin().await?;
    let (member, owners) = lock_member(&mut tx, company, id).await?;
    if member.role == Role::Owner {
        owners_only(acting, "remove an owner")?;
        if owners <= 1 {
            return Err(Error::Conflict(
                "this is the company's last owner: make another member owner first".to_owned(),
            ));
        }
    }
    sqlx::query!("DELETE FROM users WHERE id = $1", id)
        .execute(&mut *tx)
        .await?;
    // An invitation outlives neither the member who sent it nor their say in the company.
    let sender = Actor::user(id, &member.email);
    super::end_unbacked(&mut tx, company, by, &sender, None).await?;
    let change = Change::new("member.remove").target("user", id).values(
        Some(json!({ "email": member.email, "role": member.role.as_str(), "facility_ids": member.scope.column() })),
        None,
    );
    door::commit(tx, who, change, member, Jobs::none()).await
}
