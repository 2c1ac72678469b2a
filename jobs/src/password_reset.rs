//! Password reset: a single-use token valid for one hour, stored hashed, mailed as a link.

use crate::error::{Result, ValidationError};
use base64::Engine as _;
use chrono::{Duration, Utc};
use rand::RngCore;
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use uuid::Uuid;

/// How long a reset link stays valid.
pub const TOKEN_LIFETIME: Duration = Duration::hours(1);

fn token_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// Records a reset for `email` if it belongs to a user, and queues the mail with the link, in
/// one transaction. Does the same lookup whether or not the user exists and reports nothing
/// either way, so the answer cannot be used to probe for accounts. Returns whether a mail was
/// queued (for tests and logs only; never for the response).
pub async fn request(pool: &PgPool, email: &str, public_base_url: &str) -> Result<bool> {
    let email = email.trim();
    if email.is_empty() || email.len() > 254 {
        return Ok(false);
    }
    let mut tx = pool.begin().await?;
    let user = sqlx::query!(
        "SELECT id, email FROM users WHERE lower(email) = lower($1)",
        email
    )
    .fetch_optional(&mut *tx)
    .await?;
    let Some(user) = user else {
        return Ok(false);
    };
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let expires_at = Utc::now() + TOKEN_LIFETIME;
    sqlx::query!(
        "INSERT INTO password_reset_tokens (id, user_id, token_hash, expires_at) VALUES ($1, $2, $3, $4)",
        Uuid::now_v7(),
        user.id,
        token_hash(&token),
        expires_at
    )
    .execute(&mut *tx)
    .await?;
    let link = format!("{public_base_url}/reset-password?token={token}");
    let body = format!(
        "Someone asked to reset the password of this account.\n\n\
         To choose a new password, open this link within one hour (it works once):\n\n{link}\n\n\
         If you did not ask for this, ignore this mail: your password stays as it is.\n"
    );
    crate::mail::queue(&mut tx, &user.email, "Reset your password", &body).await?;
    tx.commit().await?;
    Ok(true)
}

/// Sets a new password with a token from a reset mail. The token is used up; every other
/// outstanding token of the user is voided too.
pub async fn complete(pool: &PgPool, token: &str, new_password: &str) -> Result<()> {
    let hash = crate::tenancy::hash_password(new_password)?;
    let mut tx = pool.begin().await?;
    let user_id = sqlx::query_scalar!(
        "UPDATE password_reset_tokens SET used_at = now()
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
         RETURNING user_id",
        token_hash(token.trim())
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| ValidationError::new("token", "is invalid, expired or already used"))?;
    sqlx::query!(
        "UPDATE users SET password_hash = $2 WHERE id = $1",
        user_id,
        hash
    )
    .execute(&mut *tx)
    .await?;
    sqlx::query!(
        "UPDATE password_reset_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL",
        user_id
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}
