//! Invitations: how a person joins a company. They live apart from members because they run on
//! a token sent by mail, and accepting one is the only path that creates a member.

use super::scope::{check_scope, known_facilities};
use super::{member_json, owners_only, role_of};
use crate::access::{Role, Scope};
use crate::actor::{Actor, ActorKind};
use crate::audit::Change;
use crate::config::MasterKey;
use crate::door::{self, Committed, Jobs, Who};
use crate::error::{Error, Result, ValidationError};
use crate::sessions::NewSession;
use chrono::{DateTime, Duration, Utc};
use domain::ids::CompanyId;
use serde_json::json;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// How long an invitation link works.
pub const INVITATION_LIFETIME: Duration = Duration::days(7);

/// Least time between two invitation mails to one address, from any company: invitations
/// cannot be used to flood an inbox (sign-up keeps the same spacing).
pub const MAIL_SPACING: Duration = Duration::minutes(5);
/// Most invitations a company sends in any hour.
pub const INVITATIONS_PER_HOUR: i64 = 50;
/// Subject of the invitation mail: fixed, so no text a company chose is in it.
pub const INVITATION_SUBJECT: &str = "An invitation to join a company on the pricing service";
/// Subject of the note to an invited address that has an account already.
pub const TAKEN_SUBJECT: &str = "An invitation to an address that has an account";

/// An invitation.
#[derive(Clone, Debug)]
pub struct Invitation {
    pub id: Uuid,
    pub email: String,
    pub role: Role,
    pub scope: Scope,
    pub invited_by: Actor,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub accepted_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// An invitation as stored.
struct InvitationRow {
    id: Uuid,
    email: String,
    role: String,
    facility_ids: Option<Vec<Uuid>>,
    invited_by: serde_json::Value,
    created_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
    accepted_at: Option<DateTime<Utc>>,
    revoked_at: Option<DateTime<Utc>>,
}

impl From<InvitationRow> for Invitation {
    fn from(r: InvitationRow) -> Self {
        Self {
            id: r.id,
            email: r.email,
            role: role_of(&r.role),
            scope: Scope::from_column(r.facility_ids),
            invited_by: Actor::from_json(&r.invited_by),
            created_at: r.created_at,
            expires_at: r.expires_at,
            accepted_at: r.accepted_at,
            revoked_at: r.revoked_at,
        }
    }
}

/// The company's invitations not yet accepted, revoked or expired, newest first.
pub async fn open_invitations(pool: &PgPool, company: CompanyId) -> Result<Vec<Invitation>> {
    let rows = sqlx::query_as!(
        InvitationRow,
        "SELECT id, email, role, facility_ids, invited_by, created_at, expires_at, accepted_at,
                revoked_at
         FROM team_invitations
         WHERE company_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL
           AND expires_at > now()
         ORDER BY created_at DESC, id DESC",
        company.uuid()
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(Into::into).collect())
}

/// What an invitation asks for.
#[derive(Clone, Debug)]
pub struct NewInvitation {
    pub email: String,
    pub role: Role,
    pub facility_ids: Option<Vec<Uuid>>,
}

/// Invites a person: records the invitation, queues its mail and records the change, in one
/// transaction. An address with an account (here or elsewhere) is answered and listed alike,
/// and its holder gets a note instead of a link, so the answer tells nothing about accounts.
/// An open invitation to the same address is replaced under the rule of a revoke, and
/// recorded as one. At most one invitation mail per address per [`MAIL_SPACING`] and
/// [`INVITATIONS_PER_HOUR`] per company: past either, [`Error::Busy`] with the wait and nothing
/// written.
pub async fn invite(
    pool: &PgPool,
    key: &MasterKey,
    public_base_url: &str,
    who: &Who,
    new: NewInvitation,
) -> Result<Committed<Invitation>> {
    let (company, by) = (who.company, &who.by());
    let email = crate::tenancy::check_email(&new.email)?.to_owned();
    if new.role == Role::Owner {
        owners_only(by.role.unwrap_or(Role::Viewer), "invite an owner")?;
    }
    let mut tx = pool.begin().await?;
    // The company's invitations, then the address's (from any company), one at a time, so
    // that invitations sent at once are counted one after another.
    let company_name = sqlx::query_scalar!(
        "SELECT name FROM companies WHERE id = $1 FOR NO KEY UPDATE",
        company.uuid()
    )
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query!(
        "SELECT pg_advisory_xact_lock(hashtextextended('invitation:' || lower($1), 0))",
        email
    )
    .execute(&mut *tx)
    .await?;
    let scope = check_scope(&mut tx, company, new.role, new.facility_ids).await?;
    let open = replaced(&mut tx, company, &email, by.role.unwrap_or(Role::Viewer)).await?;
    check_limits(&mut tx, company, &email).await?;
    for (id, old) in open {
        let change = Change::new("invitation.revoke")
            .target("invitation", id)
            .values(Some(json!({ "email": old })), None);
        crate::audit::record(&mut tx, company, by, &change).await?;
    }
    let taken = sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM users WHERE lower(email) = lower($1)) AS "taken!""#,
        email
    )
    .fetch_one(&mut *tx)
    .await?;
    let token = crate::crypto::random_token();
    let id = Uuid::now_v7();
    let scope_ids = scope.column();
    let row = sqlx::query!(
        "INSERT INTO team_invitations
             (id, company_id, email, role, facility_ids, token_hash, invited_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         RETURNING created_at, expires_at",
        id,
        company.uuid(),
        email,
        new.role.as_str(),
        scope_ids.as_deref(),
        crate::crypto::token_hash(&token),
        by.actor.json(),
        Utc::now() + INVITATION_LIFETIME
    )
    .fetch_one(&mut *tx)
    .await?;
    let text = Mail {
        inviter: by.actor,
        company: &company_name,
        role: new.role,
        base: public_base_url,
    };
    let (subject, body) = if taken {
        (TAKEN_SUBJECT, text.taken())
    } else {
        (INVITATION_SUBJECT, text.invitation(&token))
    };
    crate::mail::queue(&mut tx, key, &email, subject, &body).await?;
    let change = Change::new("invitation.create")
        .target("invitation", id)
        .values(None, Some(json!({ "email": email, "role": new.role.as_str(), "facility_ids": scope.column() })));
    let invitation = Invitation {
        id,
        email,
        role: new.role,
        scope,
        invited_by: by.actor.clone(),
        created_at: row.created_at,
        expires_at: row.expires_at,
        accepted_at: None,
        revoked_at: None,
    };
    door::commit(tx, who, change, invitation, Jobs::none()).await
}

/// Revokes the company's open invitation to `email`, which a new one replaces, under the rule
/// of a revoke (an owner's invitation is an owner's to revoke); the ids and addresses revoked.
async fn replaced(
    conn: &mut PgConnection,
    company: CompanyId,
    email: &str,
    acting: Role,
) -> Result<Vec<(Uuid, String)>> {
    let open = sqlx::query!(
        "SELECT id, email, role FROM team_invitations
         WHERE company_id = $1 AND lower(email) = lower($2)
           AND accepted_at IS NULL AND revoked_at IS NULL
         FOR UPDATE",
        company.uuid(),
        email
    )
    .fetch_all(&mut *conn)
    .await?;
    if open.iter().any(|i| role_of(&i.role) == Role::Owner) {
        owners_only(acting, "revoke or replace an owner's invitation")?;
    }
    let ids: Vec<Uuid> = open.iter().map(|i| i.id).collect();
    sqlx::query!(
        "UPDATE team_invitations SET revoked_at = now() WHERE id = ANY($1)",
        &ids
    )
    .execute(&mut *conn)
    .await?;
    Ok(open.into_iter().map(|i| (i.id, i.email)).collect())
}

/// Refuses an invitation past the address's spacing or the company's hourly number.
async fn check_limits(conn: &mut PgConnection, company: CompanyId, email: &str) -> Result<()> {
    let now = Utc::now();
    let last = sqlx::query_scalar!(
        "SELECT max(created_at) FROM mail_outbox
         WHERE lower(to_address) = lower($1) AND created_at > $2 AND subject IN ($3, $4)",
        email,
        now - MAIL_SPACING,
        INVITATION_SUBJECT,
        TAKEN_SUBJECT
    )
    .fetch_one(&mut *conn)
    .await?;
    if let Some(last) = last {
        return Err(Error::Busy {
            message: format!(
                "an invitation was mailed to {email} less than 5 minutes ago: one invitation mail per address per 5 minutes; retry in {} s",
                wait(last + MAIL_SPACING, now)
            ),
            retry_after_secs: wait(last + MAIL_SPACING, now),
        });
    }
    let hour = Duration::hours(1);
    let sent = sqlx::query!(
        r#"SELECT count(*) AS "n!", min(created_at) AS first FROM team_invitations
           WHERE company_id = $1 AND created_at > $2"#,
        company.uuid(),
        now - hour
    )
    .fetch_one(&mut *conn)
    .await?;
    if sent.n >= INVITATIONS_PER_HOUR {
        let retry = wait(sent.first.unwrap_or(now) + hour, now);
        return Err(Error::Busy {
            message: format!(
                "the company sent {} invitations in the last hour: at most {INVITATIONS_PER_HOUR} an hour; retry in {retry} s",
                sent.n
            ),
            retry_after_secs: retry,
        });
    }
    Ok(())
}

/// Whole seconds from `now` until `until`, at least one.
fn wait(until: DateTime<Utc>, now: DateTime<Utc>) -> u64 {
    u64::try_from((until - now).num_seconds() + 1)
        .unwrap_or(1)
        .max(1)
}

/// What an invitation mail says. Only fields the service checked name the sender (the
/// inviting member's own login address); the company's name, which its members chose, is
/// quoted and its links defused ([`crate::mail::quoted`]), and never in the subject.
struct Mail<'a> {
    inviter: &'a Actor,
    company: &'a str,
    role: Role,
    base: &'a str,
}

impl Mail<'_> {
    fn opening(&self, whom: &str) -> String {
        let company = crate::mail::quoted(self.company);
        let article = if self.role == Role::Admin { "an" } else { "a" };
        let role = self.role;
        match self.inviter.kind {
            ActorKind::User => format!(
                "\"{}\", a member of the company {company} on the pricing service at {}, \
                 invited {whom} to join it as {article} {role}.",
                self.inviter.name, self.base
            ),
            _ => format!(
                "The company {company} on the pricing service at {} invited {whom} to join \
                 it as {article} {role}.",
                self.base
            ),
        }
    }

    fn invitation(&self, token: &str) -> String {
        format!(
            "{}\n(A company's name is chosen by its members.)\n\n\
             To join, open this link within 7 days (it works once) and choose your password:\n\n\
             {}/invitations/accept?token={token}\n\n\
             If you did not expect this, ignore this mail: nothing is created.\n",
            self.opening("you"),
            self.base
        )
    }

    fn taken(&self) -> String {
        format!(
            "{}\n(A company's name is chosen by its members.)\n\n\
             This address already has an account, and a person belongs to one company, so \
             nothing was created and nothing changes for your account. To join that company, \
             ask it to invite another address.\n\n\
             Your account: log in at {base}/login, or choose a new password at \
             {base}/forgot-password.\n",
            self.opening("this address"),
            base = self.base
        )
    }
}

/// Revokes an open invitation; its link stops working at once.
pub async fn revoke_invitation(
    pool: &PgPool,
    who: &Who,
    id: Uuid,
) -> Result<Committed<Invitation>> {
    let (company, by) = (who.company, &who.by());
    let mut tx = pool.begin().await?;
    let mut invitation: Invitation = sqlx::query_as!(
        InvitationRow,
        "SELECT id, email, role, facility_ids, invited_by, created_at, expires_at, accepted_at,
                revoked_at
         FROM team_invitations WHERE id = $1 AND company_id = $2 FOR UPDATE",
        id,
        company.uuid()
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| Error::not_found(format!("no invitation with id {id}")))?
    .into();
    if invitation.accepted_at.is_some() {
        return Err(Error::Conflict(format!(
            "the invitation {id} was accepted: remove the member instead"
        )));
    }
    if invitation.role == Role::Owner {
        owners_only(
            by.role.unwrap_or(Role::Viewer),
            "revoke an owner's invitation",
        )?;
    }
    if invitation.revoked_at.is_some() {
        return Ok(Committed::unchanged(invitation));
    }
    let t = sqlx::query_scalar!(
        "UPDATE team_invitations SET revoked_at = now() WHERE id = $1 RETURNING revoked_at",
        id
    )
    .fetch_one(&mut *tx)
    .await?;
    invitation.revoked_at = Some(t.unwrap_or_else(Utc::now));
    let change = Change::new("invitation.revoke")
        .target("invitation", id)
        .values(Some(json!({ "email": invitation.email })), None);
    door::commit(tx, who, change, invitation, Jobs::none()).await
}

fn invalid_link() -> Error {
    ValidationError::new("token", "is invalid, expired, revoked or already used").into()
}

/// What a live invitation link is for (shown before its form: opening the link creates
/// nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    pub company_name: String,
    pub email: String,
    pub role: Role,
}

pub async fn pending(pool: &PgPool, token: &str) -> Result<Pending> {
    let mut conn = pool.acquire().await?;
    let r = sqlx::query!(
        "SELECT c.name, i.company_id, i.email, i.role, i.invited_by
         FROM team_invitations i JOIN companies c ON c.id = i.company_id
         WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL
           AND i.expires_at > now()",
        crate::crypto::token_hash(token.trim())
    )
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(invalid_link)?;
    let role = role_of(&r.role);
    if !super::still_backed(&mut conn, r.company_id.into(), &r.invited_by, role).await? {
        return Err(unbacked());
    }
    Ok(Pending {
        company_name: r.name,
        email: r.email,
        role,
    })
}

fn unbacked() -> Error {
    ValidationError::new(
        "token",
        "was sent by someone who may no longer invite to this company: ask it for a new \
         invitation",
    )
    .into()
}

/// Accepts a live invitation: creates the member with the invitation's role and scope and the
/// chosen password, uses the link up, records the change, and starts a session.
pub async fn accept(
    pool: &PgPool,
    token: &str,
    password: &str,
    client_addr: Option<&str>,
) -> Result<NewSession> {
    let password_hash = crate::tenancy::hash_off_thread(password).await?;
    let mut tx = pool.begin().await?;
    let inv = sqlx::query!(
        "UPDATE team_invitations SET accepted_at = now()
         WHERE token_hash = $1 AND accepted_at IS NULL AND revoked_at IS NULL
           AND expires_at > now()
         RETURNING id, company_id, email, role, facility_ids, invited_by",
        crate::crypto::token_hash(token.trim())
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(invalid_link)?;
    let company: CompanyId = inv.company_id.into();
    let role = role_of(&inv.role);
    // Checked as it is used: whoever sent it may still have been demoted or revoked since.
    if !super::still_backed(&mut tx, company, &inv.invited_by, role).await? {
        return Err(unbacked());
    }
    // The scope is checked again: a facility deleted since the invitation drops out of it.
    let scope = match inv.facility_ids {
        None => Scope::All,
        Some(ids) => Scope::Only(known_facilities(&mut tx, company, &ids).await?),
    };
    let user_id = Uuid::now_v7();
    let scope_ids = scope.column();
    sqlx::query!(
        "INSERT INTO users (id, company_id, email, password_hash, role, facility_ids)
         VALUES ($1, $2, $3, $4, $5, $6)",
        user_id,
        company.uuid(),
        inv.email,
        password_hash,
        role.as_str(),
        scope_ids.as_deref()
    )
    .execute(&mut *tx)
    .await
    .map_err(|e| {
        crate::error::conflict_on_unique(e, |_| {
            "this address got an account meanwhile: log in instead".to_owned()
        })
    })?;
    let who = Who {
        company,
        actor: Actor::user(user_id, &inv.email),
        role: Some(role),
        // Only the dashboard's invitation page accepts an invitation.
        via: crate::door::Via::Dashboard,
        client_addr: client_addr.map(str::to_owned),
    };
    let change = Change::new("invitation.accept")
        .target("user", user_id)
        .values(None, Some(member_json(role, &scope)));
    // Nothing to push: the new member signs in on the next line.
    door::commit(tx, &who, change, (), Jobs::none())
        .await?
        .into_value();
    crate::sessions::start_new_user(pool, user_id).await
}
