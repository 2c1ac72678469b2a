//! The open invitations someone sent, which end when the sender's say in the company does: an
//! invitation is checked against the sender's standing when it is accepted, not only when it
//! was sent, so a member removed or demoted, or a key revoked, leaves no live link behind.

use crate::access::{Permission, Role};
use crate::actor::{Actor, ActorKind};
use crate::audit::{By, Change};
use crate::error::Result;
use domain::ids::CompanyId;
use serde_json::json;
use sqlx::PgConnection;

/// Revokes, in the caller's transaction, the open invitations `sender` sent that its role
/// `now` no longer lets it send (`None`: removed or revoked, so all of them; a role without
/// [`Permission::Administer`]: all of them; an admin: those inviting an owner), each recorded
/// as `invitation.revoke` by `by`.
pub(crate) async fn end_unbacked(
    conn: &mut PgConnection,
    company: CompanyId,
    by: &By<'_>,
    sender: &Actor,
    now: Option<Role>,
) -> Result<()> {
    let kind = match sender.kind {
        ActorKind::User => "user",
        ActorKind::ApiKey => "api_key",
        ActorKind::System => return Ok(()),
    };
    let (Some(id), false) = (sender.id, now.is_some_and(|r| r.allows(Permission::Own))) else {
        return Ok(());
    };
    // Still an admin: only the invitations of owners, which need an owner, end.
    let only_owners = now.is_some_and(|r| r.allows(Permission::Administer));
    let ended = sqlx::query!(
        "UPDATE team_invitations SET revoked_at = now()
         WHERE company_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL
           AND invited_by->>'type' = $2 AND invited_by->>'id' = $3
           AND (NOT $4 OR role = 'owner')
         RETURNING id, email, role",
        company.uuid(),
        kind,
        id.to_string(),
        only_owners
    )
    .fetch_all(&mut *conn)
    .await?;
    for invitation in ended {
        let change = Change::new("invitation.revoke")
            .target("invitation", invitation.id)
            .values(
                Some(json!({
                    "email": invitation.email,
                    "role": invitation.role,
                    "invited_by": sender.label(),
                })),
                None,
            );
        crate::audit::record(&mut *conn, company, by, &change).await?;
    }
    Ok(())
}

/// Whether the sender of an invitation (its stored `invited_by`) may still send it, read in the
/// accepting transaction: a member of the company whose role administers it (owns it, for an
/// owner's invitation), or a key of the company not revoked whose role administers it. The
/// revocations above end such links when the standing changes; this covers an invitation sent
/// in the moment its sender was being demoted.
pub(crate) async fn still_backed(
    conn: &mut PgConnection,
    company: CompanyId,
    invited_by: &serde_json::Value,
    role: Role,
) -> Result<bool> {
    let sender = Actor::from_json(invited_by);
    let Some(id) = sender.id else {
        return Ok(false);
    };
    let standing = match sender.kind {
        ActorKind::User => {
            sqlx::query_scalar!(
                "SELECT role FROM users WHERE id = $1 AND company_id = $2",
                id,
                company.uuid()
            )
            .fetch_optional(&mut *conn)
            .await?
        }
        ActorKind::ApiKey => {
            sqlx::query_scalar!(
            "SELECT role FROM api_keys WHERE id = $1 AND company_id = $2 AND revoked_at IS NULL",
            id,
            company.uuid()
        )
            .fetch_optional(&mut *conn)
            .await?
        }
        ActorKind::System => None,
    };
    let needs = if role == Role::Owner {
        Permission::Own
    } else {
        Permission::Administer
    };
    Ok(standing
        .and_then(|r| Role::parse(&r))
        .is_some_and(|r| r.allows(needs)))
}
