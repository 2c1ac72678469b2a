//! A company's people: members with a role and an optional facility scope, and invitations
//! (a mail with a single-use link, valid [`INVITATION_LIFETIME`], whose page sets the new
//! member's password). Every change is recorded in the audit log in its own transaction.
//!
//! Rules: only an owner makes, changes or removes an owner; the last owner can be neither
//! removed nor demoted (409); a person belongs to one company, so an address with an account
//! is never made a member (its holder is told by mail instead of getting a link, and the
//! answer is the same as for a new address); a new invitation replaces an open one to the same
//! address only where the caller may revoke it; an invitation lives only while its sender may
//! send it: a member removed or demoted below admin, or a key revoked, takes the open
//! invitations they sent with them (an owner made admin, those inviting an owner), and
//! accepting checks the sender's standing again; a scope is for managers and viewers and lists
//! facilities of the company.
//!
//! `invitations` and `members` hold the use cases of each; `scope` the facility-scope check
//! they share with API keys. What both sides need (stored roles, the owner rule) is here.

mod invitations;
mod members;
mod scope;
mod sent;
pub(crate) use sent::end_unbacked;
use sent::still_backed;

pub use invitations::{
    accept, invite, open_invitations, pending, revoke_invitation, Invitation, NewInvitation,
    Pending, INVITATIONS_PER_HOUR, INVITATION_LIFETIME, INVITATION_SUBJECT, MAIL_SPACING,
    TAKEN_SUBJECT,
};
pub use members::{members, remove_member, update_member, Member, MemberChange};
pub(crate) use scope::check_scope;
pub use scope::MAX_SCOPE;

use crate::access::{Permission, Role, Scope};
use crate::error::{Error, Result};
use serde_json::json;

fn role_of(stored: &str) -> Role {
    // The columns' checks allow only roles.
    Role::parse(stored).unwrap_or(Role::Viewer)
}

fn member_json(role: Role, scope: &Scope) -> serde_json::Value {
    json!({ "role": role.as_str(), "facility_ids": scope.column() })
}

fn owners_only(acting: Role, what: &str) -> Result<()> {
    if acting.allows(Permission::Own) {
        Ok(())
    } else {
        Err(Error::Forbidden(format!(
            "only an owner may {what}: this needs {}",
            Permission::Own.needs()
        )))
    }
}
