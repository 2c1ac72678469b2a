//! Password reset: a single-use token valid for one hour, stored hashed, mailed as a link.
//!
//! `POST /auth/forgot` only records the request ([`request`]): the same single insert
//! whether or not the address belongs to a user, so neither the answer nor its timing tells
//! whether an account exists. The worker then handles the requests ([`process_requests`]): it
//! looks the address up and mails a link, at most one per user per [`MAIL_SPACING`]. That
//! spacing (and no per-address cap) is what keeps a stranger who repeats the request from
//! locking the owner out of reset: the owner always has a link less than an hour old in the
//! inbox, and gets a fresh one five minutes after the last.

use crate::config::MasterKey;
use crate::error::{Result, ValidationError};
use chrono::{Duration, Utc};
use redis::aio::ConnectionManager;
use sqlx::PgPool;
use uuid::Uuid;

/// How long a reset link stays valid.
pub const TOKEN_LIFETIME: Duration = Duration::hours(1);
/// Least time between two reset mails to one user.
pub const MAIL_SPACING: Duration = Duration::minutes(5);

use crate::crypto::{random_token, token_hash};

/// Reset requests per client address per hour; past it a request is dropped silently.
pub const REQUESTS_PER_CLIENT_PER_HOUR: u64 = 30;
/// Reset attempts (token and new password) per client address per hour; past it, 429.
pub const RESETS_PER_CLIENT_PER_HOUR: u64 = 30;

/// The Redis counters the per-client limits count in: the connection and the deployment's
/// key prefix.
#[derive(Clone, Copy)]
pub struct Counters<'a> {
    pub redis: &'a ConnectionManager,
    pub prefix: &'a str,
}

/// Asks for a reset mail for `email` from the client at `client` (its address as the api
/// reads it): recorded within the per-client limit, dropped silently past it or when the limit
/// cannot be counted, so that the caller answers the same whatever happened (and whether or
/// not the address has an account). Never fails; a failure to record is logged.
pub async fn request(pool: &PgPool, counters: Counters<'_>, client: &str, email: &str) {
    let by_client = crate::counters::count_in_window(
        counters.redis,
        &format!("{}:forgot:client:{client}", counters.prefix),
        3600,
    )
    .await;
    match by_client {
        Ok(n) if n <= REQUESTS_PER_CLIENT_PER_HOUR => {
            if let Err(e) = record_request(pool, email).await {
                tracing::error!(error = %e, "password reset request could not be recorded");
            }
        }
        Ok(_) => tracing::warn!("password reset request dropped by the per-client limit"),
        Err(e) => {
            tracing::warn!(error = %e, "password reset request dropped: limiter unavailable")
        }
    }
}

/// Sets a new password with a mailed token, within the per-client limit
/// ([`Error::Throttled`](crate::Error::Throttled) past it); ends every session of the user and
/// lifts the login lockout of the address (the lockout page says a reset lets the owner back
/// in: whoever ran up the failed logins no longer counts against the new password).
pub async fn complete(
    pool: &PgPool,
    counters: Counters<'_>,
    client: &str,
    token: &str,
    new_password: &str,
) -> Result<()> {
    // Fails open like the other limits: an outage of Redis should not stop resets.
    if let Ok(n) = crate::counters::count_in_window(
        counters.redis,
        &format!("{}:reset:client:{client}", counters.prefix),
        3600,
    )
    .await
    {
        if n > RESETS_PER_CLIENT_PER_HOUR {
            return Err(crate::Error::Throttled {
                limit: RESETS_PER_CLIENT_PER_HOUR as u32,
                retry_after_secs: 3600,
            });
        }
    }
    let email = set_password(pool, token, new_password).await?;
    let key = crate::counters::login_account_key(counters.prefix, &email);
    if let Err(e) = crate::counters::clear(counters.redis, &key).await {
        tracing::warn!(error = %e, "login throttle unavailable");
    }
    Ok(())
}

/// Records a reset request for `email`, whatever it is (an address longer than any account's
/// is ignored). Nothing is looked up here.
async fn record_request(pool: &PgPool, email: &str) -> Result<()> {
    let email = email.trim();
    if email.is_empty() || email.len() > 254 || email.contains('\0') {
        return Ok(());
    }
    sqlx::query!(
        "INSERT INTO password_reset_requests (id, email) VALUES ($1, $2)",
        Uuid::now_v7(),
        email
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Handles up to `batch` recorded requests, oldest first; each is claimed with `SKIP LOCKED`,
/// so any number of workers can run this at once. Returns how many mails were queued.
pub async fn process_requests(
    pool: &PgPool,
    key: &MasterKey,
    public_base_url: &str,
    batch: i64,
) -> Result<usize> {
    let mut mailed = 0;
    for _ in 0..batch {
        let mut tx = pool.begin().await?;
        let Some(req) = sqlx::query!(
            "DELETE FROM password_reset_requests WHERE id = (
                 SELECT id FROM password_reset_requests ORDER BY requested_at
                 LIMIT 1 FOR UPDATE SKIP LOCKED)
             RETURNING email"
        )
        .fetch_optional(&mut *tx)
        .await?
        else {
            break;
        };
        let user = sqlx::query!(
            "SELECT id, email FROM users WHERE lower(email) = lower($1) FOR UPDATE",
            req.email
        )
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(user) = user {
            let spacing_start = Utc::now() - MAIL_SPACING;
            let recent = sqlx::query_scalar!(
                r#"SELECT EXISTS (SELECT 1 FROM password_reset_tokens
                       WHERE user_id = $1 AND created_at > $2) AS "recent!""#,
                user.id,
                spacing_start
            )
            .fetch_one(&mut *tx)
            .await?;
            if !recent {
                let token = issue_token(&mut tx, user.id).await?;
                let link = format!("{public_base_url}/reset-password?token={token}");
                let body = format!(
                    "Someone asked to reset the password of this account.\n\n\
                     To choose a new password, open this link within one hour (it works once):\n\n{link}\n\n\
                     If you did not ask for this, ignore this mail: your password stays as it is.\n"
                );
                crate::mail::queue(&mut tx, key, &user.email, "Reset your password", &body).await?;
                mailed += 1;
            }
        }
        tx.commit().await?;
    }
    Ok(mailed)
}

async fn issue_token(conn: &mut sqlx::PgConnection, user_id: Uuid) -> Result<String> {
    let token = random_token();
    sqlx::query!(
        "INSERT INTO password_reset_tokens (id, user_id, token_hash, expires_at) VALUES ($1, $2, $3, $4)",
        Uuid::now_v7(),
        user_id,
        token_hash(&token),
        Utc::now() + TOKEN_LIFETIME
    )
    .execute(conn)
    .await?;
    Ok(token)
}

/// Deletes tokens that expired more than a day ago; returns how many.
pub async fn purge_expired(pool: &PgPool) -> Result<u64> {
    let cutoff = Utc::now() - Duration::days(1);
    Ok(sqlx::query!(
        "DELETE FROM password_reset_tokens WHERE expires_at < $1",
        cutoff
    )
    .execute(pool)
    .await?
    .rows_affected())
}

fn invalid_token() -> crate::Error {
    ValidationError::new("token", "is invalid, expired or already used").into()
}

/// Sets a new password with a token from a reset mail. The token is looked up before any
/// hashing (a wrong token costs one index probe), the password is hashed on a blocking thread
/// (argon2 takes tens of milliseconds of CPU), and the token is used up in the same
/// transaction as the new password; every other outstanding token of the user is voided too.
/// Returns the user's e-mail address.
async fn set_password(pool: &PgPool, token: &str, new_password: &str) -> Result<String> {
    crate::tenancy::check_password_rules(new_password)?;
    let hash = token_hash(token.trim());
    let live = sqlx::query_scalar!(
        "SELECT user_id FROM password_reset_tokens
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()",
        hash
    )
    .fetch_optional(pool)
    .await?;
    if live.is_none() {
        return Err(invalid_token());
    }
    let password = new_password.to_owned();
    let password_hash =
        tokio::task::spawn_blocking(move || crate::tenancy::hash_password(&password))
            .await
            .map_err(|e| crate::Error::Internal(format!("password hashing stopped: {e}")))??;
    let mut tx = pool.begin().await?;
    let user_id = sqlx::query_scalar!(
        "UPDATE password_reset_tokens SET used_at = now()
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
         RETURNING user_id",
        hash
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(invalid_token)?;
    let email = crate::tenancy::set_password_hash(&mut tx, user_id, &password_hash).await?;
    sqlx::query!(
        "UPDATE password_reset_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL",
        user_id
    )
    .execute(&mut *tx)
    .await?;
    // Whoever knew the old password may be signed in: every session of the user ends.
    crate::sessions::end_all(&mut tx, user_id).await?;
    tx.commit().await?;
    Ok(email)
}
