//! Companies and users: creation, passwords, subscription state and usage. API keys are
//! [`api_keys`].

mod api_keys;
use api_keys::insert_key;
pub use api_keys::{
    authenticate, create_api_key, create_api_key_with, generate_key, list_api_keys,
    revoke_any_api_key, revoke_api_key, well_formed, ApiKeyInfo, CreatedKey, KeyHasher, Principal,
    KEY_PREFIX,
};
use domain::ids::CompanyId;

use crate::error::{conflict_on_unique, Error, Result};
use argon2::password_hash::{rand_core::OsRng, PasswordHasher, SaltString};
use base64::Engine as _;
use chrono::{DateTime, Duration, Utc};
use rand::RngCore;
use serde::Serialize;
use sqlx::PgPool;
use uuid::Uuid;

/// Subscription states of a company.
pub const SUBSCRIPTION_STATES: [&str; 5] =
    ["trialing", "active", "past_due", "canceled", "expired"];

/// The state in force now: a trial whose end has passed counts as `expired`.
pub fn effective_state(
    state: &str,
    trial_ends_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> &str {
    match (state, trial_ends_at) {
        ("trialing", Some(end)) if end <= now => "expired",
        _ => state,
    }
}

/// Whole days left of a running trial (rounded up), `None` outside a trial.
pub fn trial_days_left(
    state: &str,
    trial_ends_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Option<u64> {
    trial_ends_at.filter(|_| state == "trialing").map(|end| {
        (end - now)
            .num_seconds()
            .max(0)
            .unsigned_abs()
            .div_ceil(86_400)
    })
}

/// Whether a company in `effective` state may use the API (402 otherwise). `past_due` keeps
/// access while payment is retried.
pub fn has_access(effective: &str) -> bool {
    matches!(effective, "trialing" | "active" | "past_due")
}

pub struct NewCompany<'a> {
    pub name: &'a str,
    pub email: &'a str,
    pub password: Option<&'a str>,
    pub trial_days: u32,
}

#[derive(Debug, Serialize)]
pub struct CreatedCompany {
    pub company_id: CompanyId,
    pub user_id: Uuid,
    pub api_key: String,
}

/// The rules a new password must meet (checked before any costly hashing).
pub fn check_password_rules(password: &str) -> Result<()> {
    if password.chars().count() < 8 {
        return Err(crate::error::ValidationError::new(
            "password",
            "must be at least 8 characters",
        )
        .into());
    }
    if password.len() > 1024 {
        return Err(
            crate::error::ValidationError::new("password", "must be at most 1024 bytes").into(),
        );
    }
    Ok(())
}

/// Hashes a password with argon2 (tens of milliseconds of CPU: call it off the async threads).
pub fn hash_password(password: &str) -> Result<String> {
    check_password_rules(password)?;
    let salt = SaltString::generate(&mut OsRng);
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| crate::Error::Internal(format!("password hashing failed: {e}")))
}

/// A user whose password checked out, and the hash it was checked against: a session is
/// started only while that hash is still the user's ([`crate::sessions::start`]).
#[derive(Debug, Clone)]
pub struct Verified {
    pub user_id: Uuid,
    pub company_id: Uuid,
    pub password_hash: String,
}

/// Checks a user's e-mail and password; the user's id and company when they match. The argon2
/// check (tens of milliseconds of CPU) runs on a blocking thread, so a burst of logins does not
/// stall the async workers.
pub async fn verify_password(
    pool: &PgPool,
    email: &str,
    password: &str,
) -> Result<Option<Verified>> {
    use argon2::password_hash::{PasswordHash, PasswordVerifier};
    if email.contains('\0') {
        // PostgreSQL text cannot hold a NUL, so no address has one: not a user.
        return Ok(None);
    }
    let row = sqlx::query!(
        "SELECT id, company_id, password_hash FROM users WHERE lower(email) = lower($1)",
        email.trim()
    )
    .fetch_optional(pool)
    .await?;
    // An unknown address (or a user without a password) is checked against a stand-in hash of
    // the same cost, so the answer takes as long as for a known one and does not tell which
    // addresses have an account.
    let (user, stored) = match row {
        Some(r) => match r.password_hash {
            Some(hash) => (
                Some(Verified {
                    user_id: r.id,
                    company_id: r.company_id,
                    password_hash: hash.clone(),
                }),
                hash,
            ),
            None => (None, STAND_IN_HASH.clone()),
        },
        None => (None, STAND_IN_HASH.clone()),
    };
    let password = password.to_owned();
    let matches = tokio::task::spawn_blocking(move || {
        PasswordHash::new(&stored).is_ok_and(|parsed| {
            argon2::Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
    })
    .await
    .map_err(|e| crate::Error::Internal(format!("password check stopped: {e}")))?;
    Ok(user.filter(|_| matches))
}

/// A hash of a random secret, made once with the parameters of real password hashes: what an
/// unknown address is checked against. No password matches it.
static STAND_IN_HASH: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let mut secret = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut secret);
    hash_password(&base64::engine::general_purpose::STANDARD.encode(secret))
        .unwrap_or_else(|_| "$argon2id$v=19$m=19456,t=2,p=1$c3RhbmRpbg$".to_owned())
});

/// Creates a company in trial with its first user and first API key, in one transaction.
pub async fn create_company(
    pool: &PgPool,
    hasher: &KeyHasher,
    new: NewCompany<'_>,
) -> Result<CreatedCompany> {
    let name = domain::values::Text::<200>::parse(new.name)
        .map_err(|m| crate::error::ValidationError::new("name", m))?;
    let email = check_email(new.email)?;
    let password_hash = match new.password {
        Some(p) => Some(hash_off_thread(p).await?),
        None => None,
    };
    let mut tx = pool.begin().await?;
    let created =
        insert_company(&mut tx, hasher, &name, email, password_hash, new.trial_days).await?;
    tx.commit().await?;
    Ok(created)
}

/// An e-mail address as a login: trimmed, 3 to 254 bytes, one `@` at least, no whitespace,
/// control or invisible formatting characters.
pub fn check_email(email: &str) -> Result<&str> {
    let email = email.trim();
    if !(3..=254).contains(&email.len())
        || !email.contains('@')
        || email.contains(char::is_whitespace)
        || email.contains(domain::values::is_forbidden_in_text)
    {
        return Err(
            crate::error::ValidationError::new("email", "must be an e-mail address").into(),
        );
    }
    Ok(email)
}

/// [`hash_password`] on a blocking thread (the rules checked first).
pub async fn hash_off_thread(password: &str) -> Result<String> {
    check_password_rules(password)?;
    let p = password.to_owned();
    tokio::task::spawn_blocking(move || hash_password(&p))
        .await
        .map_err(|e| crate::Error::Internal(format!("password hashing stopped: {e}")))?
}

/// Creates a company in trial with its first user (`password_hash` already made, or none) and
/// first API key, in the caller's transaction; a taken address is a conflict.
pub(crate) async fn insert_company(
    tx: &mut sqlx::PgConnection,
    hasher: &KeyHasher,
    name: &domain::values::Text<200>,
    email: &str,
    password_hash: Option<String>,
    trial_days: u32,
) -> Result<CreatedCompany> {
    let trial_ends_at = Utc::now() + Duration::days(i64::from(trial_days));
    let company_id = Uuid::now_v7();
    let user_id = Uuid::now_v7();
    sqlx::query!(
        "INSERT INTO companies (id, name, subscription_state, trial_ends_at) VALUES ($1, $2, 'trialing', $3)",
        company_id,
        name.as_str(),
        trial_ends_at
    )
    .execute(&mut *tx)
    .await?;
    sqlx::query!(
        "INSERT INTO users (id, company_id, email, password_hash) VALUES ($1, $2, $3, $4)",
        user_id,
        company_id,
        email,
        password_hash
    )
    .execute(&mut *tx)
    .await
    .map_err(|e| conflict_on_unique(e, |_| "a user with this e-mail already exists".to_owned()))?;
    let key = insert_key(
        &mut *tx,
        hasher,
        company_id.into(),
        "default",
        crate::access::Role::Admin,
    )
    .await?;
    Ok(CreatedCompany {
        company_id: company_id.into(),
        user_id,
        api_key: key.api_key,
    })
}

/// Sets a company's subscription state (and optionally its trial end).
pub async fn set_subscription(
    pool: &PgPool,
    company_id: CompanyId,
    state: &str,
    trial_ends_at: Option<DateTime<Utc>>,
) -> Result<()> {
    if !SUBSCRIPTION_STATES.contains(&state) {
        return Err(crate::error::ValidationError::new(
            "state",
            format!("must be one of {}", SUBSCRIPTION_STATES.join(", ")),
        )
        .into());
    }
    let updated = sqlx::query!(
        "UPDATE companies SET subscription_state = $2, trial_ends_at = coalesce($3, trial_ends_at) WHERE id = $1",
        company_id.uuid(),
        state,
        trial_ends_at
    )
    .execute(pool)
    .await?;
    if updated.rows_affected() == 0 {
        return Err(Error::not_found(format!("no company with id {company_id}")));
    }
    Ok(())
}

#[derive(Debug, Serialize)]
pub struct CompanyInfo {
    pub id: Uuid,
    pub name: String,
    pub plan: String,
    pub subscription_state: String,
    pub trial_ends_at: Option<DateTime<Utc>>,
    pub time_zone: String,
    /// ISO 4217 code of the currency its figures are shown in.
    pub currency: String,
    pub created_at: DateTime<Utc>,
}

pub async fn company(pool: &PgPool, company_id: CompanyId) -> Result<CompanyInfo> {
    fetch_company(pool, company_id).await
}

async fn fetch_company<'e>(
    conn: impl sqlx::PgExecutor<'e>,
    company_id: CompanyId,
) -> Result<CompanyInfo> {
    sqlx::query_as!(
        CompanyInfo,
        "SELECT id, name, plan, subscription_state, trial_ends_at, time_zone, currency, created_at FROM companies WHERE id = $1",
        company_id.uuid()
    )
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no company with id {company_id}")))
}

/// The currency the company's figures are written in, as it is now: an answer whose
/// explanations carry amounts writes them in it.
pub async fn currency(pool: &PgPool, company_id: CompanyId) -> Result<domain::values::Currency> {
    currency_of(&mut *pool.acquire().await?, company_id).await
}

/// The currency the company's figures are written in (USD for a code the service no longer
/// knows).
pub(crate) async fn currency_of(
    conn: &mut sqlx::PgConnection,
    company_id: CompanyId,
) -> Result<domain::values::Currency> {
    let code = sqlx::query_scalar!(
        "SELECT currency FROM companies WHERE id = $1",
        company_id.uuid()
    )
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no company with id {company_id}")))?;
    Ok(domain::values::Currency::parse(&code).unwrap_or_default())
}

/// Changes the company's settings (an absent one stays) and answers the company: the
/// currency its figures are shown in (amounts are not converted). `PATCH /api/v1/company` and
/// the overview page's form.
pub async fn update_company(
    pool: &PgPool,
    who: &crate::door::Who,
    currency: Option<domain::values::Currency>,
) -> Result<crate::door::Committed<CompanyInfo>> {
    let mut tx = pool.begin().await?;
    // The row is held from the "before" to the commit: a concurrent change records the value
    // this one leaves.
    let before = sqlx::query_scalar!(
        "SELECT currency FROM companies WHERE id = $1 FOR NO KEY UPDATE",
        who.company.uuid()
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| Error::not_found(format!("no company with id {}", who.company)))?;
    if let Some(currency) = currency {
        sqlx::query!(
            "UPDATE companies SET currency = $2 WHERE id = $1",
            who.company.uuid(),
            currency.code()
        )
        .execute(&mut *tx)
        .await?;
    }
    let after = fetch_company(&mut *tx, who.company).await?;
    let change = crate::audit::Change::new("company.update").values(
        Some(serde_json::json!({ "currency": before })),
        Some(serde_json::json!({ "currency": after.currency })),
    );
    crate::door::commit(tx, who, change, after, crate::door::Jobs::none()).await
}

#[derive(Debug, Serialize)]
pub struct UsageCounts {
    pub facilities: i64,
    pub sync_records: i64,
    pub sync_records_this_month: i64,
    pub active_api_keys: i64,
}

/// Usage counts for the status page; `month_start` is the first day of the current UTC month.
pub async fn usage(
    pool: &PgPool,
    company_id: CompanyId,
    month_start: chrono::NaiveDate,
) -> Result<UsageCounts> {
    let r = sqlx::query!(
        r#"SELECT
             (SELECT count(*) FROM facilities WHERE company_id = $1) AS "facilities!",
             -- company_days counts every record by date, kept in step by the records' triggers.
             (SELECT coalesce(sum(snapshots), 0)::int8 FROM company_days WHERE company_id = $1) AS "sync_records!",
             (SELECT count(*) FROM sync_records WHERE company_id = $1 AND created_at >= $2::date) AS "sync_records_this_month!",
             (SELECT count(*) FROM api_keys WHERE company_id = $1 AND revoked_at IS NULL) AS "active_api_keys!""#,
        company_id.uuid(),
        month_start
    )
    .fetch_one(pool)
    .await?;
    Ok(UsageCounts {
        facilities: r.facilities,
        sync_records: r.sync_records,
        sync_records_this_month: r.sync_records_this_month,
        active_api_keys: r.active_api_keys,
    })
}

/// Locks the company's row until the caller's transaction ends: creations that must respect a
/// per-company cap take it first, so two concurrent ones cannot both pass the count.
/// The company's audit retention, its row locked until the transaction ends (the "before" of a
/// change to it).
pub(crate) async fn lock_retention(
    conn: &mut sqlx::PgConnection,
    company: CompanyId,
) -> Result<i32> {
    Ok(sqlx::query_scalar!(
        "SELECT audit_retention_days FROM companies WHERE id = $1 FOR UPDATE",
        company.uuid()
    )
    .fetch_one(conn)
    .await?)
}

pub(crate) async fn set_retention(
    conn: &mut sqlx::PgConnection,
    company: CompanyId,
    days: i32,
) -> Result<()> {
    sqlx::query!(
        "UPDATE companies SET audit_retention_days = $2 WHERE id = $1",
        company.uuid(),
        days
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A member as a sign-in records them.
pub(crate) struct SignedInMember {
    pub company: CompanyId,
    pub email: String,
    pub role: crate::access::Role,
}

/// Stamps the member's last sign-in; the member, or `None` when the account is gone.
pub(crate) async fn stamp_sign_in(
    conn: &mut sqlx::PgConnection,
    user_id: Uuid,
) -> Result<Option<SignedInMember>> {
    let row = sqlx::query!(
        "UPDATE users SET last_sign_in_at = now() WHERE id = $1 RETURNING company_id, email, role",
        user_id
    )
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|r| SignedInMember {
        company: r.company_id.into(),
        email: r.email,
        role: crate::access::Role::parse(&r.role).unwrap_or(crate::access::Role::Viewer),
    }))
}

/// Sets a user's password (a reset's); their address.
pub(crate) async fn set_password_hash(
    conn: &mut sqlx::PgConnection,
    user_id: Uuid,
    password_hash: &str,
) -> Result<String> {
    Ok(sqlx::query_scalar!(
        "UPDATE users SET password_hash = $2 WHERE id = $1 RETURNING email",
        user_id,
        password_hash
    )
    .fetch_one(conn)
    .await?)
}

pub(crate) async fn lock_company(
    conn: &mut sqlx::PgConnection,
    company_id: CompanyId,
) -> Result<()> {
    sqlx::query!(
        "SELECT id FROM companies WHERE id = $1 FOR UPDATE",
        company_id.uuid()
    )
    .fetch_one(conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests;
