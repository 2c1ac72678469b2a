//! Companies, users and API keys: creation, key hashing and lookup, subscription state.

use crate::config::MasterKey;
use crate::error::{conflict_on_unique, Error, Result};
use argon2::password_hash::{rand_core::OsRng, PasswordHasher, SaltString};
use base64::Engine as _;
use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, Mac};
use rand::RngCore;
use serde::Serialize;
use sha2::Sha256;
use sqlx::PgPool;
use uuid::Uuid;

/// Every API key starts with this, so a leaked key is easy to recognise in logs and scanners.
pub const KEY_PREFIX: &str = "spk_";
/// Characters of a key kept in clear (after [`KEY_PREFIX`]) to tell keys apart in lists.
const SHOWN_CHARS: usize = 8;

/// Hashes API keys with HMAC-SHA256 under a server-side pepper, so a stolen table cannot be
/// checked against guesses without the pepper. The pepper is derived from the master key.
#[derive(Clone)]
pub struct KeyHasher {
    pepper: [u8; 32],
}

impl KeyHasher {
    pub fn new(master: &MasterKey) -> Self {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(master.hashing_bytes())
            .expect("HMAC takes any key length");
        mac.update(b"api-key-pepper/v1");
        Self {
            pepper: mac.finalize().into_bytes().into(),
        }
    }

    fn mac(&self, key: &str) -> Hmac<Sha256> {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.pepper).expect("HMAC takes any key length");
        mac.update(key.as_bytes());
        mac
    }

    pub fn hash(&self, key: &str) -> Vec<u8> {
        self.mac(key).finalize().into_bytes().to_vec()
    }

    /// Constant-time check of `key` against a stored hash.
    pub fn verify(&self, key: &str, stored: &[u8]) -> bool {
        self.mac(key).verify_slice(stored).is_ok()
    }
}

/// A freshly generated key: 32 random bytes, base64url, behind [`KEY_PREFIX`].
pub fn generate_key() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!(
        "{KEY_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// Whether `key` has the shape of a key this service issues (checked before any database work).
pub fn well_formed(key: &str) -> bool {
    key.strip_prefix(KEY_PREFIX).is_some_and(|rest| {
        rest.len() == 43
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

fn shown_prefix(key: &str) -> String {
    key.chars().take(KEY_PREFIX.len() + SHOWN_CHARS).collect()
}

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
    pub company_id: Uuid,
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

/// Checks a user's e-mail and password; the user's id and company when they match. The argon2
/// check (tens of milliseconds of CPU) runs on a blocking thread, so a burst of logins does not
/// stall the async workers.
pub async fn verify_password(
    pool: &PgPool,
    email: &str,
    password: &str,
) -> Result<Option<(Uuid, Uuid)>> {
    use argon2::password_hash::{PasswordHash, PasswordVerifier};
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
            Some(hash) => (Some((r.id, r.company_id)), hash),
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
    let email = new.email.trim();
    if !(3..=254).contains(&email.len())
        || !email.contains('@')
        || email.contains(char::is_whitespace)
    {
        return Err(
            crate::error::ValidationError::new("email", "must be an e-mail address").into(),
        );
    }
    let password_hash = match new.password {
        Some(p) => {
            check_password_rules(p)?;
            let p = p.to_owned();
            Some(
                tokio::task::spawn_blocking(move || hash_password(&p))
                    .await
                    .map_err(|e| {
                        crate::Error::Internal(format!("password hashing stopped: {e}"))
                    })??,
            )
        }
        None => None,
    };
    let trial_ends_at = Utc::now() + Duration::days(i64::from(new.trial_days));
    let company_id = Uuid::now_v7();
    let user_id = Uuid::now_v7();
    let mut tx = pool.begin().await?;
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
    let key = insert_key(&mut tx, hasher, company_id, "default").await?;
    tx.commit().await?;
    Ok(CreatedCompany {
        company_id,
        user_id,
        api_key: key.api_key,
    })
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = CreatedApiKey)]
pub struct CreatedKey {
    /// Id of the key.
    pub id: Uuid,
    /// Name given to the key.
    pub name: String,
    /// First 12 characters of the key, to tell keys apart.
    pub prefix: String,
    /// When the key was created.
    pub created_at: DateTime<Utc>,
    /// The full key: returned once, never stored.
    pub api_key: String,
}

async fn insert_key(
    conn: &mut sqlx::PgConnection,
    hasher: &KeyHasher,
    company_id: Uuid,
    name: &str,
) -> Result<CreatedKey> {
    let api_key = generate_key();
    let id = Uuid::now_v7();
    let prefix = shown_prefix(&api_key);
    let created_at = sqlx::query_scalar!(
        "INSERT INTO api_keys (id, company_id, name, prefix, key_hash) VALUES ($1, $2, $3, $4, $5)
         RETURNING created_at",
        id,
        company_id,
        name,
        prefix,
        hasher.hash(&api_key)
    )
    .fetch_one(&mut *conn)
    .await?;
    Ok(CreatedKey {
        id,
        name: name.to_owned(),
        prefix,
        created_at,
        api_key,
    })
}

/// Creates a key for an existing company (404 when there is no such company).
pub async fn create_api_key(
    pool: &PgPool,
    hasher: &KeyHasher,
    company_id: Uuid,
    name: &str,
) -> Result<CreatedKey> {
    let name = domain::values::Text::<100>::parse(name)
        .map_err(|m| crate::error::ValidationError::new("name", m))?;
    let mut tx = pool.begin().await?;
    let exists = sqlx::query_scalar!(
        "SELECT id FROM companies WHERE id = $1 FOR SHARE",
        company_id
    )
    .fetch_optional(&mut *tx)
    .await?;
    if exists.is_none() {
        return Err(Error::not_found(format!("no company with id {company_id}")));
    }
    let key = insert_key(&mut tx, hasher, company_id, name.as_str()).await?;
    tx.commit().await?;
    Ok(key)
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = ApiKey)]
pub struct ApiKeyInfo {
    /// Id of the key.
    pub id: Uuid,
    /// Name given to the key.
    pub name: String,
    /// First 12 characters of the key, to tell keys apart.
    pub prefix: String,
    /// When the key was created.
    pub created_at: DateTime<Utc>,
    /// When the key was last used (updated at most once a minute).
    pub last_used_at: Option<DateTime<Utc>>,
    /// When the key was revoked; null while it works.
    pub revoked_at: Option<DateTime<Utc>>,
}

pub async fn list_api_keys(pool: &PgPool, company_id: Uuid) -> Result<Vec<ApiKeyInfo>> {
    Ok(sqlx::query_as!(
        ApiKeyInfo,
        "SELECT id, name, prefix, created_at, last_used_at, revoked_at FROM api_keys
         WHERE company_id = $1 ORDER BY created_at, id",
        company_id
    )
    .fetch_all(pool)
    .await?)
}

/// Revokes a key. With `company_id` the key must belong to that company. Revoking twice is
/// harmless; the first revocation time is kept.
pub async fn revoke_api_key(
    pool: &PgPool,
    company_id: Option<Uuid>,
    id: Uuid,
) -> Result<ApiKeyInfo> {
    sqlx::query_as!(
        ApiKeyInfo,
        "UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
         WHERE id = $1 AND ($2::uuid IS NULL OR company_id = $2)
         RETURNING id, name, prefix, created_at, last_used_at, revoked_at",
        id,
        company_id
    )
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::not_found(format!("no API key with id {id}")))
}

/// Who a request acts for.
#[derive(Clone, Debug)]
pub struct Principal {
    pub company_id: Uuid,
    pub key_id: Uuid,
    pub subscription_state: String,
    pub trial_ends_at: Option<DateTime<Utc>>,
}

impl Principal {
    pub fn effective_state(&self, now: DateTime<Utc>) -> &str {
        effective_state(&self.subscription_state, self.trial_ends_at, now)
    }
}

/// Looks up a presented key; `None` for a malformed, unknown or revoked key. Marks the key as
/// used at most once a minute, so the lookup stays a read on most requests.
pub async fn authenticate(
    pool: &PgPool,
    hasher: &KeyHasher,
    key: &str,
) -> Result<Option<Principal>> {
    if !well_formed(key) {
        return Ok(None);
    }
    let hash = hasher.hash(key);
    let row = sqlx::query!(
        r#"WITH k AS (
               SELECT id, company_id, key_hash, last_used_at FROM api_keys
               WHERE key_hash = $1 AND revoked_at IS NULL
           ), touched AS (
               UPDATE api_keys SET last_used_at = now()
               WHERE id = (SELECT id FROM k)
                 AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds')
           )
           SELECT k.id AS "key_id!", k.key_hash AS "key_hash!", c.id AS "company_id!",
                  c.subscription_state AS "subscription_state!", c.trial_ends_at
           FROM k JOIN companies c ON c.id = k.company_id"#,
        hash
    )
    .fetch_optional(pool)
    .await?;
    Ok(row
        .filter(|r| hasher.verify(key, &r.key_hash))
        .map(|r| Principal {
            company_id: r.company_id,
            key_id: r.key_id,
            subscription_state: r.subscription_state,
            trial_ends_at: r.trial_ends_at,
        }))
}

/// Sets a company's subscription state (and optionally its trial end).
pub async fn set_subscription(
    pool: &PgPool,
    company_id: Uuid,
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
        company_id,
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
    pub created_at: DateTime<Utc>,
}

pub async fn company(pool: &PgPool, company_id: Uuid) -> Result<CompanyInfo> {
    sqlx::query_as!(
        CompanyInfo,
        "SELECT id, name, plan, subscription_state, trial_ends_at, time_zone, created_at FROM companies WHERE id = $1",
        company_id
    )
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::not_found(format!("no company with id {company_id}")))
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
    company_id: Uuid,
    month_start: chrono::NaiveDate,
) -> Result<UsageCounts> {
    let r = sqlx::query!(
        r#"SELECT
             (SELECT count(*) FROM facilities WHERE company_id = $1) AS "facilities!",
             (SELECT count(*) FROM sync_records WHERE company_id = $1) AS "sync_records!",
             (SELECT count(*) FROM sync_records WHERE company_id = $1 AND created_at >= $2::date) AS "sync_records_this_month!",
             (SELECT count(*) FROM api_keys WHERE company_id = $1 AND revoked_at IS NULL) AS "active_api_keys!""#,
        company_id,
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
pub async fn lock_company(conn: &mut sqlx::PgConnection, company_id: Uuid) -> Result<()> {
    sqlx::query!(
        "SELECT id FROM companies WHERE id = $1 FOR UPDATE",
        company_id
    )
    .fetch_one(conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_address_is_checked_against_a_hash_of_the_same_cost() {
        use argon2::password_hash::PasswordHash;
        let real = hash_password("correct horse battery").unwrap();
        let stand_in = PasswordHash::new(&STAND_IN_HASH).expect("a real argon2 hash");
        let real = PasswordHash::new(&real).unwrap();
        assert_eq!(stand_in.algorithm, real.algorithm);
        assert_eq!(stand_in.version, real.version);
        assert_eq!(stand_in.params, real.params);
        assert!(stand_in.hash.is_some());
    }

    #[test]
    fn keys_are_well_formed_and_hash_stably() {
        let hasher = KeyHasher::new(&MasterKey::new([7; 32]));
        let key = generate_key();
        assert!(well_formed(&key), "{key}");
        assert!(!well_formed("spk_short"));
        assert!(!well_formed(&key.replace("spk_", "xyz_")));
        let h = hasher.hash(&key);
        assert!(hasher.verify(&key, &h));
        assert!(!hasher.verify(&generate_key(), &h));
        let other = KeyHasher::new(&MasterKey::new([8; 32]));
        assert_ne!(other.hash(&key), h);
    }

    #[test]
    fn trial_expiry_is_derived() {
        let now = Utc::now();
        assert_eq!(
            effective_state("trialing", Some(now - Duration::seconds(1)), now),
            "expired"
        );
        assert_eq!(
            effective_state("trialing", Some(now + Duration::days(1)), now),
            "trialing"
        );
        assert_eq!(
            effective_state("active", Some(now - Duration::days(9)), now),
            "active"
        );
        assert!(has_access("past_due"));
        assert!(!has_access("expired"));
        assert!(!has_access("canceled"));
    }
}
