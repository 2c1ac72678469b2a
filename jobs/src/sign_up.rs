//! Sign-up by mail, so that the sign-up form does not tell which addresses have accounts.
//!
//! The form's [`request`] checks what can be checked without looking anything up (company
//! name, address, password rules), hashes the password and records the request: the same
//! single insert whether or not the address has an account, so neither the answer nor its
//! timing tells. The worker then handles the requests ([`process_requests`]): a new address
//! gets a link that creates the account ([`confirm`]; a single-use token, stored hashed, valid
//! for [`TOKEN_LIFETIME`]); an address with an account gets a note telling its owner that
//! someone tried, with the way to log in or reset the password. At most one sign-up mail goes
//! to an address per [`MAIL_SPACING`], so the form cannot be used to flood an inbox.

use crate::config::MasterKey;
use crate::error::{Result, ValidationError};
use crate::sessions::NewSession;
use crate::tenancy::KeyHasher;
use chrono::{Duration, Utc};
use domain::values::Text;
use sqlx::PgPool;
use uuid::Uuid;

/// How long a sign-up link stays valid.
pub const TOKEN_LIFETIME: Duration = Duration::hours(24);
/// Least time between two sign-up mails to one address.
pub const MAIL_SPACING: Duration = Duration::minutes(5);
/// Subject of the mail with the link that creates the account.
pub const CONFIRM_SUBJECT: &str = "Finish creating your account";
/// Subject of the note to the owner of an address that has an account.
pub const EXISTS_SUBJECT: &str = "Someone tried to create an account with your address";

/// The stored hash of a token as a link or a form carries it (surrounding space dropped).
fn token_hash(token: &str) -> Vec<u8> {
    crate::crypto::token_hash(token.trim())
}

/// Checks and records a sign-up: the same answer (`Ok`) whether or not the address has an
/// account. A refused field is a validation error naming it.
pub async fn request(pool: &PgPool, company_name: &str, email: &str, password: &str) -> Result<()> {
    let name = Text::<200>::parse(company_name).map_err(|m| ValidationError::new("company", m))?;
    let email = crate::tenancy::check_email(email)?;
    let password_hash = crate::tenancy::hash_off_thread(password).await?;
    sqlx::query!(
        "INSERT INTO sign_up_requests (id, company_name, email, password_hash)
         VALUES ($1, $2, $3, $4)",
        Uuid::now_v7(),
        name.as_str(),
        email,
        password_hash
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Handles up to `batch` recorded sign-ups, oldest first; each is claimed with `SKIP LOCKED`,
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
            "DELETE FROM sign_up_requests WHERE id = (
                 SELECT id FROM sign_up_requests ORDER BY requested_at
                 LIMIT 1 FOR UPDATE SKIP LOCKED)
             RETURNING company_name, email, password_hash"
        )
        .fetch_optional(&mut *tx)
        .await?
        else {
            break;
        };
        // One mail per address per spacing, whichever of the two it is.
        let recent = sqlx::query_scalar!(
            r#"SELECT EXISTS (SELECT 1 FROM mail_outbox
                   WHERE lower(to_address) = lower($1) AND created_at > $2
                     AND subject IN ($3, $4)) AS "recent!""#,
            req.email,
            Utc::now() - MAIL_SPACING,
            CONFIRM_SUBJECT,
            EXISTS_SUBJECT
        )
        .fetch_one(&mut *tx)
        .await?;
        if recent {
            tx.commit().await?;
            continue;
        }
        let taken = sqlx::query_scalar!(
            r#"SELECT EXISTS (SELECT 1 FROM users WHERE lower(email) = lower($1)) AS "taken!""#,
            req.email
        )
        .fetch_one(&mut *tx)
        .await?;
        let (subject, body) = if taken {
            (
                EXISTS_SUBJECT,
                format!(
                    "Someone asked to create an account with this address, which already has one.\n\n\
                     If it was you, log in at {public_base_url}/login, or choose a new password at \
                     {public_base_url}/forgot-password.\n\n\
                     If it was not you, ignore this mail: nothing was changed.\n"
                ),
            )
        } else {
            let token = crate::crypto::random_token();
            sqlx::query!(
                "INSERT INTO sign_up_tokens
                     (id, token_hash, company_name, email, password_hash, expires_at)
                 VALUES ($1, $2, $3, $4, $5, $6)",
                Uuid::now_v7(),
                token_hash(&token),
                req.company_name,
                req.email,
                req.password_hash,
                Utc::now() + TOKEN_LIFETIME
            )
            .execute(&mut *tx)
            .await?;
            (
                CONFIRM_SUBJECT,
                format!(
                    "Someone asked to create an account for the company {} (the name \
                     they gave) with this address.\n\n\
                     To create it, open this link within 24 hours (it works once):\n\n\
                     {public_base_url}/signup/confirm?token={token}\n\n\
                     If it was not you, ignore this mail: no account is created.\n",
                    // Whoever signs up names the company: quoted, its links defused.
                    crate::mail::quoted(&req.company_name)
                ),
            )
        };
        crate::mail::queue(&mut tx, key, &req.email, subject, &body).await?;
        tx.commit().await?;
        mailed += 1;
    }
    Ok(mailed)
}

fn invalid_token() -> crate::Error {
    ValidationError::new("token", "is invalid, expired or already used").into()
}

/// What a live sign-up link is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub company_name: String,
    pub email: String,
}

/// The sign-up a link stands for, while it is live (shown before its button: opening the link
/// does not create the account, so a mail scanner following it changes nothing).
pub async fn pending(pool: &PgPool, token: &str) -> Result<Pending> {
    sqlx::query_as!(
        Pending,
        "SELECT company_name, email FROM sign_up_tokens
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()",
        token_hash(token)
    )
    .fetch_optional(pool)
    .await?
    .ok_or_else(invalid_token)
}

/// Creates the account of a live link: the company on a trial of `trial_days`, its user with
/// the password given at sign-up, its first API key, and a session; the link is used up in the
/// same transaction as the account. An address that got an account meanwhile is a conflict.
pub async fn confirm(
    pool: &PgPool,
    hasher: &KeyHasher,
    token: &str,
    trial_days: u32,
) -> Result<NewSession> {
    let mut tx = pool.begin().await?;
    let used = sqlx::query!(
        "UPDATE sign_up_tokens SET used_at = now()
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
         RETURNING company_name, email, password_hash",
        token_hash(token)
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(invalid_token)?;
    let name =
        Text::<200>::parse(&used.company_name).map_err(|m| ValidationError::new("company", m))?;
    // A failure (the address taken meanwhile: a conflict) rolls the link's use back with it.
    let created = crate::tenancy::insert_company(
        &mut tx,
        hasher,
        &name,
        &used.email,
        Some(used.password_hash),
        trial_days,
    )
    .await?;
    tx.commit().await?;
    crate::sessions::start_new_user(pool, created.user_id).await
}

/// Deletes sign-up links that expired more than a day ago; returns how many.
pub async fn purge_expired(pool: &PgPool) -> Result<u64> {
    Ok(sqlx::query!(
        "DELETE FROM sign_up_tokens WHERE expires_at < $1",
        Utc::now() - Duration::days(1)
    )
    .execute(pool)
    .await?
    .rows_affected())
}
