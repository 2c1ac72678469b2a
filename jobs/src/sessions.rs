//! Dashboard sessions, kept in PostgreSQL. The browser holds a random token; only its SHA-256
//! is stored. A session ends at its idle expiry (pushed forward as the user works, at most once
//! a minute so most page views stay a read) or its absolute expiry, whichever comes first; on
//! logout; and, with every other session of the user, on "log out everywhere" and on a
//! password reset.

use crate::audit::Change;
use crate::door::{self, Committed, Jobs};
use crate::error::Result;
use chrono::{DateTime, Duration, Utc};
use domain::ids::CompanyId;
use sqlx::PgPool;
use uuid::Uuid;

/// A session unused this long ends.
pub const IDLE_LIFETIME: Duration = Duration::hours(12);
/// No session lives longer than this, however busy.
pub const ABSOLUTE_LIFETIME: Duration = Duration::days(7);

use crate::crypto::{random_token, token_hash};

/// A new session: the token goes into the cookie and is never stored.
#[derive(Debug)]
pub struct NewSession {
    pub token: String,
    pub expires_at: DateTime<Utc>,
}

/// Starts a session for a user whose password was just checked.
///
/// Only while the user's password is still the one checked: a reset that commits between the
/// check and this insert (which ends every session of the user) leaves no session behind
/// (`None`). The user's row is share-locked by the insert, so a reset either waits for the new
/// session and then ends it, or has already changed the hash and the insert finds no row.
pub async fn start(
    pool: &PgPool,
    verified: &crate::tenancy::Verified,
) -> Result<Option<NewSession>> {
    insert(pool, verified.user_id, Some(&verified.password_hash)).await
}

/// Inserts a session for `user_id`, when `password_hash` is given only while it is still the
/// user's (see [`start`]); `None` when no such user row was there.
async fn insert(
    pool: &PgPool,
    user_id: Uuid,
    password_hash: Option<&str>,
) -> Result<Option<NewSession>> {
    let token = random_token();
    let now = Utc::now();
    let absolute = now + ABSOLUTE_LIFETIME;
    let inserted = sqlx::query!(
        "INSERT INTO web_sessions (id, token_hash, user_id, csrf_token, idle_expires_at, absolute_expires_at)
         SELECT $1, $2, u.id, $4, $5, $6 FROM users u
         WHERE u.id = $3 AND ($7::text IS NULL OR u.password_hash = $7)
         FOR SHARE",
        Uuid::now_v7(),
        token_hash(&token),
        user_id,
        random_token(),
        now + IDLE_LIFETIME,
        absolute,
        password_hash
    )
    .execute(pool)
    .await?
    .rows_affected();
    Ok((inserted == 1).then_some(NewSession {
        token,
        expires_at: absolute,
    }))
}

/// The signed-in user behind a live session, with what every page of the dashboard shows.
#[derive(Debug, Clone)]
pub struct Session {
    pub id: Uuid,
    pub user_id: Uuid,
    pub email: String,
    pub company_id: CompanyId,
    pub company_name: String,
    pub subscription_state: String,
    pub trial_ends_at: Option<DateTime<Utc>>,
    /// The currency the company's figures are shown in.
    pub currency: domain::values::Currency,
    pub csrf_token: String,
    /// What the user may do.
    pub role: crate::access::Role,
    /// The facilities the user may see.
    pub scope: crate::access::Scope,
}

impl Session {
    /// The actor a change made in this session is recorded under.
    pub fn actor(&self) -> crate::actor::Actor {
        crate::actor::Actor::user(self.user_id, &self.email)
    }

    /// The user's actor, role and scope.
    pub fn access(&self) -> crate::access::Access {
        crate::access::Access {
            actor: self.actor(),
            role: self.role,
            scope: self.scope.clone(),
        }
    }

    /// The subscription state in force now (an ended trial is `expired`).
    pub fn effective_state(&self, now: DateTime<Utc>) -> &str {
        crate::tenancy::effective_state(&self.subscription_state, self.trial_ends_at, now)
    }

    /// Whole days left of a running trial (rounded up), `None` outside a trial.
    pub fn trial_days_left(&self, now: DateTime<Utc>) -> Option<u64> {
        crate::tenancy::trial_days_left(&self.subscription_state, self.trial_ends_at, now)
    }

    /// Whether the company may use the API and the pages that act through it.
    pub fn has_access(&self, now: DateTime<Utc>) -> bool {
        crate::tenancy::has_access(self.effective_state(now))
    }
}

/// Looks a presented token up; `None` for an unknown or ended session. Pushes the idle expiry
/// forward when the last push is more than a minute old.
pub async fn lookup(pool: &PgPool, token: &str) -> Result<Option<Session>> {
    if token.is_empty() || token.len() > 100 {
        return Ok(None);
    }
    let now = Utc::now();
    let row = sqlx::query!(
        r#"WITH s AS (
               SELECT id, user_id, csrf_token, last_seen_at, absolute_expires_at FROM web_sessions
               WHERE token_hash = $1 AND idle_expires_at > $2 AND absolute_expires_at > $2
           ), touched AS (
               UPDATE web_sessions SET last_seen_at = $2,
                      idle_expires_at = least($2 + make_interval(secs => $3), absolute_expires_at)
               WHERE id = (SELECT id FROM s) AND last_seen_at < $2 - interval '60 seconds'
           )
           SELECT s.id AS "id!", s.user_id AS "user_id!", s.csrf_token AS "csrf_token!",
                  u.email, c.id AS "company_id!", c.name AS "company_name!",
                  c.subscription_state AS "subscription_state!", c.trial_ends_at,
                  c.currency AS "currency!", u.role, u.facility_ids
           FROM s JOIN users u ON u.id = s.user_id JOIN companies c ON c.id = u.company_id"#,
        token_hash(token),
        now,
        IDLE_LIFETIME.num_seconds() as f64
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| Session {
        id: r.id,
        user_id: r.user_id,
        email: r.email,
        company_id: r.company_id.into(),
        company_name: r.company_name,
        subscription_state: r.subscription_state,
        trial_ends_at: r.trial_ends_at,
        currency: domain::values::Currency::parse(&r.currency).unwrap_or_default(),
        csrf_token: r.csrf_token,
        // The column's check allows only roles.
        role: crate::access::Role::parse(&r.role).unwrap_or(crate::access::Role::Viewer),
        scope: crate::access::Scope::from_column(r.facility_ids),
    }))
}

/// Ends the signed-in user's session (logout), recorded as `session.end`.
pub async fn end(
    pool: &PgPool,
    who: &crate::door::Who,
    session: &Session,
) -> Result<Committed<()>> {
    let mut tx = pool.begin().await?;
    sqlx::query!("DELETE FROM web_sessions WHERE id = $1", session.id)
        .execute(&mut *tx)
        .await?;
    let change = Change::new("session.end").target("user", session.user_id);
    door::commit(tx, who, change, (), Jobs::none()).await
}

/// Ends every session of the signed-in user ("log out everywhere"), recorded as
/// `session.end_all` with how many ended.
pub async fn end_everywhere(
    pool: &PgPool,
    who: &crate::door::Who,
    session: &Session,
) -> Result<Committed<u64>> {
    let mut tx = pool.begin().await?;
    let ended = end_all(&mut tx, session.user_id).await?;
    let change = Change::new("session.end_all")
        .target("user", session.user_id)
        .values(None, Some(serde_json::json!({ "sessions_ended": ended })));
    door::commit(tx, who, change, ended, Jobs::none()).await
}

/// Ends every session of a user; returns how many.
pub(crate) async fn end_all(conn: &mut sqlx::PgConnection, user_id: Uuid) -> Result<u64> {
    Ok(
        sqlx::query!("DELETE FROM web_sessions WHERE user_id = $1", user_id)
            .execute(conn)
            .await?
            .rows_affected(),
    )
}

/// Deletes sessions that have ended; returns how many.
pub async fn purge_ended(pool: &PgPool) -> Result<u64> {
    Ok(sqlx::query!(
        "DELETE FROM web_sessions WHERE idle_expires_at < now() OR absolute_expires_at < now()"
    )
    .execute(pool)
    .await?
    .rows_affected())
}

/// A session for a user created just now (by a sign-up link): there is no earlier password
/// hash to check it against.
pub(crate) async fn start_new_user(pool: &PgPool, user_id: Uuid) -> Result<NewSession> {
    insert(pool, user_id, None)
        .await?
        .ok_or_else(|| crate::Error::Internal("the new user was gone before its session".into()))
}
