//! API keys: generation, hashing under a server-side pepper, creation, listing, revocation and
//! lookup of the principal a request's key stands for.

use super::effective_state;
use crate::audit::Change;
use crate::config::MasterKey;
use crate::door::{self, Committed, Jobs, Who};
use crate::error::{Error, Result};
use base64::Engine as _;
use chrono::{DateTime, Utc};
use domain::ids::CompanyId;
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

#[derive(Debug, Serialize)]
pub struct CreatedKey {
    /// Id of the key.
    pub id: Uuid,
    /// Name given to the key.
    pub name: String,
    /// First 12 characters of the key, to tell keys apart.
    pub prefix: String,
    /// When the key was created.
    pub created_at: DateTime<Utc>,
    /// What the key may do.
    pub role: crate::access::Role,
    /// The facilities the key may see; `None` for every facility.
    pub facility_ids: Option<Vec<Uuid>>,
    /// The full key: returned once, never stored.
    pub api_key: String,
}

pub(super) async fn insert_key(
    conn: &mut sqlx::PgConnection,
    hasher: &KeyHasher,
    company_id: CompanyId,
    name: &str,
    role: crate::access::Role,
) -> Result<CreatedKey> {
    let api_key = generate_key();
    let id = Uuid::now_v7();
    let prefix = shown_prefix(&api_key);
    let created_at = sqlx::query_scalar!(
        "INSERT INTO api_keys (id, company_id, name, prefix, key_hash, role)
         VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING created_at",
        id,
        company_id.uuid(),
        name,
        prefix,
        hasher.hash(&api_key),
        role.as_str()
    )
    .fetch_one(&mut *conn)
    .await?;
    Ok(CreatedKey {
        id,
        name: name.to_owned(),
        prefix,
        created_at,
        role,
        facility_ids: None,
        api_key,
    })
}

/// Creates a key with the admin role (what every key could do before roles) for an existing
/// company (404 when there is no such company), recorded as `who`'s change.
pub async fn create_api_key(
    pool: &PgPool,
    hasher: &KeyHasher,
    who: &Who,
    name: &str,
) -> Result<Committed<CreatedKey>> {
    create_api_key_with(pool, hasher, who, name, crate::access::Role::Admin, None).await
}

/// Creates a key with `role` (admin, manager or viewer: a key is never an owner), limited to
/// `facility_ids` when given (managers and viewers only; see [`crate::team::check_scope`]),
/// recorded as `api_key.create` with its name, role and facilities.
pub async fn create_api_key_with(
    pool: &PgPool,
    hasher: &KeyHasher,
    who: &Who,
    name: &str,
    role: crate::access::Role,
    facility_ids: Option<Vec<Uuid>>,
) -> Result<Committed<CreatedKey>> {
    let company_id = who.company;
    if role == crate::access::Role::Owner {
        return Err(crate::error::ValidationError::new(
            "role",
            "must be admin, manager or viewer: a key is never an owner",
        )
        .into());
    }
    let name = domain::values::Text::<100>::parse(name)
        .map_err(|m| crate::error::ValidationError::new("name", m))?;
    let mut tx = pool.begin().await?;
    let exists = sqlx::query_scalar!(
        "SELECT id FROM companies WHERE id = $1 FOR SHARE",
        company_id.uuid()
    )
    .fetch_optional(&mut *tx)
    .await?;
    if exists.is_none() {
        return Err(Error::not_found(format!("no company with id {company_id}")));
    }
    let scope = crate::team::check_scope(&mut tx, company_id, role, facility_ids).await?;
    let mut key = insert_key(&mut tx, hasher, company_id, name.as_str(), role).await?;
    if let Some(ids) = scope.column() {
        sqlx::query!(
            "UPDATE api_keys SET facility_ids = $2 WHERE id = $1",
            key.id,
            &ids
        )
        .execute(&mut *tx)
        .await?;
    }
    key.facility_ids = scope.column();
    let change = Change::new("api_key.create")
        .target("api_key", key.id)
        .values(
            None,
            Some(serde_json::json!({
                "name": key.name,
                "role": role.as_str(),
                "facility_ids": key.facility_ids,
            })),
        );
    door::commit(tx, who, change, key, Jobs::none()).await
}

#[derive(Debug, Serialize)]
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
    /// What the key may do: `admin`, `manager` or `viewer`.
    pub role: String,
    /// The facilities the key may see; `None` for every facility.
    pub facility_ids: Option<Vec<Uuid>>,
}

pub async fn list_api_keys(pool: &PgPool, company_id: CompanyId) -> Result<Vec<ApiKeyInfo>> {
    Ok(sqlx::query_as!(
        ApiKeyInfo,
        "SELECT id, name, prefix, created_at, last_used_at, revoked_at, role, facility_ids FROM api_keys
         WHERE company_id = $1 ORDER BY created_at, id",
        company_id.uuid()
    )
    .fetch_all(pool)
    .await?)
}

/// Revokes one of the company's keys (404 for another company's), recorded as
/// `api_key.revoke`, with the open invitations the key sent; a key revoked already stays as
/// it was.
pub async fn revoke_api_key(pool: &PgPool, who: &Who, id: Uuid) -> Result<Committed<ApiKeyInfo>> {
    let mut tx = pool.begin().await?;
    let (_, key) = revoke_in(&mut tx, Some(who.company), id).await?;
    end_invitations(&mut tx, who, &key).await?;
    let change = Change::new("api_key.revoke").target("api_key", id);
    door::commit(tx, who, change, key, Jobs::none()).await
}

/// Revokes any company's key: the operator's command (`api admin revoke-key`), recorded in
/// the key's company as the service's change.
pub async fn revoke_any_api_key(pool: &PgPool, id: Uuid) -> Result<ApiKeyInfo> {
    let mut tx = pool.begin().await?;
    let (company, key) = revoke_in(&mut tx, None, id).await?;
    let who = Who::system(company, "operator");
    end_invitations(&mut tx, &who, &key).await?;
    let change = Change::new("api_key.revoke").target("api_key", id);
    Ok(door::commit(tx, &who, change, key, Jobs::none())
        .await?
        .into_value())
}

/// A revoked key's open invitations end with it (each recorded as revoked by `who`).
async fn end_invitations(conn: &mut sqlx::PgConnection, who: &Who, key: &ApiKeyInfo) -> Result<()> {
    let sender = crate::actor::Actor::api_key(key.id, &key.name);
    crate::team::end_unbacked(conn, who.company, &who.by(), &sender, None).await
}

async fn revoke_in(
    conn: &mut sqlx::PgConnection,
    company_id: Option<CompanyId>,
    id: Uuid,
) -> Result<(CompanyId, ApiKeyInfo)> {
    let r = sqlx::query!(
        "UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
         WHERE id = $1 AND ($2::uuid IS NULL OR company_id = $2)
         RETURNING company_id, id, name, prefix, created_at, last_used_at, revoked_at, role,
                   facility_ids",
        id,
        company_id.map(CompanyId::uuid)
    )
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no API key with id {id}")))?;
    let key = ApiKeyInfo {
        id: r.id,
        name: r.name,
        prefix: r.prefix,
        created_at: r.created_at,
        last_used_at: r.last_used_at,
        revoked_at: r.revoked_at,
        role: r.role,
        facility_ids: r.facility_ids,
    };
    Ok((r.company_id.into(), key))
}

/// Who a request acts for.
#[derive(Clone, Debug)]
pub struct Principal {
    pub company_id: CompanyId,
    pub key_id: Uuid,
    /// The key's name, as decisions record their actor.
    pub key_name: String,
    pub subscription_state: String,
    pub trial_ends_at: Option<DateTime<Utc>>,
    /// What the key may do.
    pub role: crate::access::Role,
    /// The facilities the key may see.
    pub scope: crate::access::Scope,
}

impl Principal {
    /// The actor a change made with this key is recorded under.
    pub fn actor(&self) -> crate::actor::Actor {
        crate::actor::Actor::api_key(self.key_id, &self.key_name)
    }

    /// The key's actor, role and scope.
    pub fn access(&self) -> crate::access::Access {
        crate::access::Access {
            actor: self.actor(),
            role: self.role,
            scope: self.scope.clone(),
        }
    }

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
               SELECT id, company_id, name, key_hash, last_used_at, role, facility_ids FROM api_keys
               WHERE key_hash = $1 AND revoked_at IS NULL
           ), touched AS (
               UPDATE api_keys SET last_used_at = now()
               WHERE id = (SELECT id FROM k)
                 AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds')
           )
           SELECT k.id AS "key_id!", k.name AS "key_name!", k.key_hash AS "key_hash!", c.id AS "company_id!",
                  k.role AS "role!", k.facility_ids,
                  c.subscription_state AS "subscription_state!", c.trial_ends_at
           FROM k JOIN companies c ON c.id = k.company_id"#,
        hash
    )
    .fetch_optional(pool)
    .await?;
    Ok(row
        .filter(|r| hasher.verify(key, &r.key_hash))
        .map(|r| Principal {
            company_id: r.company_id.into(),
            key_id: r.key_id,
            key_name: r.key_name,
            subscription_state: r.subscription_state,
            trial_ends_at: r.trial_ends_at,
            // The column's check allows only roles.
            role: crate::access::Role::parse(&r.role).unwrap_or(crate::access::Role::Viewer),
            scope: crate::access::Scope::from_column(r.facility_ids),
        }))
}
