//! The company's team: members with their roles, invitations, and changes to both. Owners and
//! admins only; only an owner makes, changes or removes an owner.

use crate::access::Acting;
use crate::auth::Auth;
use crate::error::ApiResult;
use crate::extract::{path_id, Json};
use crate::state::AppState;
use crate::views::team::{Invitation, Member, RoleName};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use jobs::team;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(invite))
        .routes(routes!(revoke_invitation))
        .routes(routes!(update_member, remove_member))
}

#[derive(Serialize, utoipa::ToSchema)]
struct Team {
    /// The members, owners first.
    members: Vec<Member>,
    /// Invitations sent and not yet accepted, revoked or expired, newest first.
    invitations: Vec<Invitation>,
}

/// Lists the members and the open invitations.
#[utoipa::path(get, path = "/api/v1/team", tag = "team",
    responses((status = 200, description = "The team.", body = Team)))]
async fn list(State(state): State<AppState>, Auth(who): Auth) -> ApiResult<axum::Json<Team>> {
    let members = team::members(&state.db, who.company_id).await?;
    let invitations = team::open_invitations(&state.db, who.company_id).await?;
    Ok(axum::Json(Team {
        members: members.into_iter().map(Into::into).collect(),
        invitations: invitations.into_iter().map(Into::into).collect(),
    }))
}

/// An invitation to send.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewInvitation {
    /// The person's address: their login once they accept.
    #[schema(value_type = domain::values::Text<254>)]
    pub email: String,
    /// The role they get; only an owner may invite an owner.
    pub role: RoleName,
    /// Limits a manager or viewer to these facilities: everything else of the company is
    /// invisible to them (404), and analytics count only these. Absent: every facility.
    #[schema(min_items = 1, max_items = 1000)]
    pub facility_ids: Option<Vec<uuid::Uuid>>,
}

/// Invites a person: a mail with a link that works once, for 7 days.
///
/// An open invitation to the same address is replaced (recorded as its revoke); replacing an
/// owner's invitation needs an owner, as revoking it does. An address that already has an
/// account (here or at another company) is answered and listed like any other, and its holder
/// gets a note instead of a link: a person belongs to one company. At most one invitation
/// mail per address per 5 minutes, and 50 invitations per company per hour: past either, 429
/// with `Retry-After`, and nothing is recorded.
#[utoipa::path(post, path = "/api/v1/team/invitations", tag = "team",
    request_body = NewInvitation,
    responses(
        (status = 201, description = "The invitation, mailed.", body = Invitation),
        (status = 429, description = "The address was sent an invitation less than 5 minutes ago, or the company sent 50 in the last hour (or the company's rate limit); retry after `Retry-After` seconds. Nothing is recorded.", body = crate::openapi::ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until a request will pass."))),
    ))]
async fn invite(
    State(state): State<AppState>,
    acting: Acting,
    Json(body): Json<NewInvitation>,
) -> ApiResult<(StatusCode, axum::Json<Invitation>)> {
    let done = team::invite(
        &state.db,
        &state.config.master_key,
        &state.config.public_base_url,
        &acting.who,
        team::NewInvitation {
            email: body.email,
            role: body.role.into(),
            facility_ids: body.facility_ids,
        },
    )
    .await?;
    let invitation = state.finish(done).await;
    Ok((StatusCode::CREATED, axum::Json(invitation.into())))
}

/// Revokes an open invitation: its link stops working at once.
#[utoipa::path(delete, path = "/api/v1/team/invitations/{id}", tag = "team",
    params(("id" = Uuid, Path, description = "Id of the invitation.")),
    responses(
        (status = 200, description = "The revoked invitation.", body = Invitation),
        (status = 409, description = "The invitation was accepted: remove the member instead.", body = crate::openapi::ErrorBody),
    ))]
async fn revoke_invitation(
    State(state): State<AppState>,
    acting: Acting,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Invitation>> {
    let id = path_id(&id, "invitation")?;
    let done = team::revoke_invitation(&state.db, &acting.who, id).await?;
    let invitation = state.finish(done).await;
    Ok(axum::Json(invitation.into()))
}

/// A change to a member.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemberUpdate {
    /// The new role; only an owner may make or unmake an owner.
    pub role: Option<RoleName>,
    /// The facilities the member may see (a manager or viewer); `null` gives every facility.
    /// Absent: kept (dropped when the new role is admin or owner).
    #[serde(default, deserialize_with = "crate::requests::explicit_null")]
    #[schema(value_type = Option<Vec<uuid::Uuid>>)]
    pub facility_ids: Option<Option<Vec<uuid::Uuid>>>,
}

/// Changes a member's role; their next request already runs with it.
#[utoipa::path(patch, path = "/api/v1/team/members/{id}", tag = "team",
    params(("id" = Uuid, Path, description = "Id of the member.")),
    request_body = MemberUpdate,
    responses(
        (status = 200, description = "The member as changed.", body = Member),
        (status = 409, description = "The member is the company's last owner.", body = crate::openapi::ErrorBody),
    ))]
async fn update_member(
    State(state): State<AppState>,
    acting: Acting,
    Path(id): Path<String>,
    Json(body): Json<MemberUpdate>,
) -> ApiResult<axum::Json<Member>> {
    let id = path_id(&id, "member")?;
    let done = team::update_member(
        &state.db,
        &acting.who,
        id,
        team::MemberChange {
            role: body.role.map(Into::into),
            facility_ids: body.facility_ids,
        },
    )
    .await?;
    Ok(axum::Json(state.finish(done).await.into()))
}

/// Removes a member: their account and every session of it end at once.
#[utoipa::path(delete, path = "/api/v1/team/members/{id}", tag = "team",
    params(("id" = Uuid, Path, description = "Id of the member.")),
    responses(
        (status = 200, description = "The member removed.", body = Member),
        (status = 409, description = "The member is the company's last owner.", body = crate::openapi::ErrorBody),
    ))]
async fn remove_member(
    State(state): State<AppState>,
    acting: Acting,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Member>> {
    let id = path_id(&id, "member")?;
    let done = team::remove_member(&state.db, &acting.who, id).await?;
    let member = state.finish(done).await;
    Ok(axum::Json(member.into()))
}
