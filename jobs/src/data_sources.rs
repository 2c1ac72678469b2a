//! Connected CRMs: a provider (see `crate::crm::provider`), where to reach it, a sealed
//! credential (only a masked hint is ever shown) and a pull schedule. Pulls run as `crm_pull`
//! jobs, on demand (one date or a backfill range) or from the cron tick, each recorded as a row
//! of `crm_pulls`.

pub mod pulls;
pub use pulls::{request_pull, Pull, PullRange};

mod check;
pub use check::{check_new, check_schedule, parse_schedule, test, test_connection, Checked};

use crate::audit::Change;
use crate::config::MasterKey;
use crate::crm::provider::{self, Credential, ProviderInfo};
use crate::crm::CrmClient;
use crate::crypto;
use crate::door::{self, Committed, Jobs, Who};
use crate::error::{Error, Result, ValidationError};
use crate::outbound::guard::PrivateTargets;
use chrono::{DateTime, Utc};
use domain::ids::CompanyId;
use domain::values::Text;
use serde::{Deserialize, Serialize};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// Longest backfill, in days (both ends included).
pub const MAX_PULL_DAYS: i64 = 90;
/// Pulls listed per source.
pub(crate) const PULLS_LISTED: i64 = 100;
/// Nightly at 02:00 in the company's time zone (cron with seconds).
pub const DEFAULT_SCHEDULE: &str = "0 0 2 * * *";
/// Data sources per company: each one is a scheduled request to a customer-chosen address.
pub const MAX_DATA_SOURCES: i64 = 10;
/// A schedule fires at most once per this long (checked at creation and again at each tick).
pub const MIN_SCHEDULE_INTERVAL: chrono::TimeDelta = chrono::TimeDelta::hours(1);

#[derive(Debug)]
pub struct NewDataSource {
    /// A live provider (see `providers.live` of the list).
    pub provider: String,
    /// Name shown in lists; the provider's when absent.
    pub name: Option<Text<200>>,
    /// `https://` without credentials; the adapter adds its own path and query. Optional for a
    /// provider with a default address.
    pub base_url: Option<String>,
    /// The CRM's read-only API key.
    pub api_key: Text<500>,
    /// The key's secret, for providers that sign with one (storEDGE).
    pub api_secret: Option<Text<500>>,
    /// The CRM's own account (company) id, for providers that need one (storEDGE).
    pub account_id: Option<Text<100>>,
    /// Cron expression with seconds (`sec min hour day month weekday`).
    pub schedule: Option<String>,
    /// `false` skips the connection test made before the source is stored.
    pub verify: Option<bool>,
}

#[derive(Debug, Serialize)]
pub struct DataSource {
    /// Id of the data source.
    pub id: Uuid,
    /// The CRM provider.
    pub provider: String,
    /// Name shown in lists.
    pub name: String,
    /// The CRM's base URL.
    pub base_url: String,
    /// The CRM's own account (company) id, when the provider needs one.
    pub account_id: Option<String>,
    /// Masked hint of the sealed API key.
    pub credential_hint: String,
    /// Cron expression with seconds of the scheduled pull.
    pub schedule: String,
    /// Whether scheduled pulls run.
    pub enabled: bool,
    /// When the last pull finished.
    pub last_pull_at: Option<DateTime<Utc>>,
    /// Outcome of the last pull.
    pub last_pull_status: Option<String>,
    /// Error of the last pull, in fixed words.
    pub last_error: Option<String>,
    /// When the data source was connected.
    pub created_at: DateTime<Utc>,
}

/// The sealed form of a credential: the key alone for providers without a secret (as stored
/// since the first adapter), a JSON object with both for the others.
fn seal_credential(key: &MasterKey, id: Uuid, info: &ProviderInfo, c: &Credential) -> Vec<u8> {
    let plain = if info.needs_secret() {
        serde_json::json!({ "api_key": c.key, "api_secret": c.secret }).to_string()
    } else {
        c.key.clone()
    };
    crypto::seal(key, id.as_bytes(), plain.as_bytes())
}

/// Opens a source's credential (see [`seal_credential`]).
pub fn open_credential(
    key: &MasterKey,
    id: Uuid,
    provider_name: &str,
    sealed: &[u8],
) -> std::result::Result<Credential, String> {
    let plain = crypto::open(key, id.as_bytes(), sealed).map_err(|e| format!("credential: {e}"))?;
    let plain = String::from_utf8(plain).map_err(|_| "credential is not text".to_owned())?;
    let needs_secret = provider::find(provider_name).is_some_and(|p| p.info.needs_secret());
    if !needs_secret {
        return Ok(Credential {
            key: plain,
            secret: None,
        });
    }
    #[derive(Deserialize)]
    struct Pair {
        api_key: String,
        api_secret: Option<String>,
    }
    let pair: Pair =
        serde_json::from_str(&plain).map_err(|_| "credential is not a key pair".to_owned())?;
    Ok(Credential {
        key: pair.api_key,
        secret: pair.api_secret,
    })
}

/// Checks a new source, tests its connection (unless `verify: false`; before any connection to
/// the database is taken) and stores it with its sealed credential, recorded as
/// `data_source.create`.
pub async fn create(
    pool: &PgPool,
    key: &MasterKey,
    policy: &PrivateTargets,
    crm: &CrmClient,
    who: &Who,
    new: NewDataSource,
) -> Result<Committed<DataSource>> {
    let company_id = who.company;
    let checked = check_new(policy, &new)?;
    let schedule = new
        .schedule
        .clone()
        .unwrap_or_else(|| DEFAULT_SCHEDULE.to_owned());
    check_schedule(&schedule)?;
    if new.verify != Some(false) {
        test_connection(crm, company_id, &checked).await?;
    }
    let id = Uuid::now_v7();
    let sealed = seal_credential(key, id, checked.info, &checked.connection.credential);
    let name = new
        .name
        .map_or_else(|| checked.info.name.to_owned(), Text::into_string);
    let mut tx = pool.begin().await?;
    // Serialises creations of one company, so the cap holds under concurrency.
    crate::tenancy::lock_company(&mut tx, company_id).await?;
    let count = sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM data_sources WHERE company_id = $1"#,
        company_id.uuid()
    )
    .fetch_one(&mut *tx)
    .await?;
    if count >= MAX_DATA_SOURCES {
        return Err(ValidationError::new(
            "data_sources",
            format!("a company has at most {MAX_DATA_SOURCES} data sources; delete one first"),
        )
        .into());
    }
    sqlx::query!(
        "INSERT INTO data_sources (id, company_id, provider, name, base_url, account_id, credentials_sealed, credential_hint, schedule)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        id,
        company_id.uuid(),
        checked.info.name,
        name,
        checked.connection.base_url,
        checked.connection.account_id,
        sealed,
        crypto::hint(new.api_key.as_str()),
        schedule.trim()
    )
    .execute(&mut *tx)
    .await?;
    let source = fetch(&mut *tx, company_id, id).await?;
    let change = Change::new("data_source.create")
        .target("data_source", id)
        .values(None, Some(described(&source)));
    door::commit(tx, who, change, source, Jobs::none()).await
}

/// A source as its audit entry records it (never its credential, only the hint).
fn described(s: &DataSource) -> serde_json::Value {
    serde_json::json!({
        "provider": s.provider, "name": s.name, "base_url": s.base_url,
        "schedule": s.schedule, "enabled": s.enabled, "credential_hint": s.credential_hint,
    })
}

/// A change to a data source: every field optional, absent fields stay as they are. The same
/// rules as at creation apply to what is given.
#[derive(Debug, Default)]
pub struct UpdateDataSource {
    /// New name.
    pub name: Option<Text<200>>,
    /// New cron expression with seconds; at most one pull an hour.
    pub schedule: Option<String>,
    /// Turns scheduled pulls on or off.
    pub enabled: Option<bool>,
    /// A new read-only key for the CRM (sealed again; the hint follows it).
    pub api_key: Option<Text<500>>,
    /// The new key's secret, given with it for providers that sign with one.
    pub api_secret: Option<Text<500>>,
}

/// Changes a source, recorded as `data_source.update` with the source before and after (read
/// under the row's lock).
pub async fn update(
    pool: &PgPool,
    key: &MasterKey,
    who: &Who,
    id: Uuid,
    change: UpdateDataSource,
) -> Result<Committed<DataSource>> {
    let company_id = who.company;
    if let Some(schedule) = &change.schedule {
        check_schedule(schedule)?;
    }
    let mut tx = pool.begin().await?;
    sqlx::query!(
        "SELECT id FROM data_sources WHERE company_id = $1 AND id = $2 FOR NO KEY UPDATE",
        company_id.uuid(),
        id
    )
    .fetch_optional(&mut *tx)
    .await?;
    let current = fetch(&mut *tx, company_id, id).await?;
    let info = provider::find(&current.provider).map(|p| &p.info);
    let needs_secret = info.is_some_and(ProviderInfo::needs_secret);
    let (sealed, hint) = match (&change.api_key, &change.api_secret, info) {
        (None, None, _) => (None, None),
        (Some(k), secret, Some(info)) if secret.is_some() == needs_secret => {
            let credential = Credential {
                key: k.as_str().to_owned(),
                secret: secret.as_ref().map(|s| s.as_str().to_owned()),
            };
            (
                Some(seal_credential(key, id, info, &credential)),
                Some(crypto::hint(k.as_str())),
            )
        }
        _ if needs_secret => {
            return Err(ValidationError::new(
                "api_key",
                "a new key and its api_secret are given together",
            )
            .into())
        }
        _ => {
            return Err(ValidationError::new(
                "api_secret",
                format!("is not used by {}", current.provider),
            )
            .into())
        }
    };
    let done = sqlx::query!(
        "UPDATE data_sources SET
             name = coalesce($3, name),
             schedule = coalesce($4, schedule),
             enabled = coalesce($5, enabled),
             credentials_sealed = coalesce($6, credentials_sealed),
             credential_hint = coalesce($7, credential_hint)
         WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        id,
        change.name.map(Text::into_string),
        change.schedule.as_deref().map(str::trim),
        change.enabled,
        sealed,
        hint
    )
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::not_found(format!("no data source with id {id}")));
    }
    let after = fetch(&mut *tx, company_id, id).await?;
    let change = Change::new("data_source.update")
        .target("data_source", id)
        .values(Some(described(&current)), Some(described(&after)));
    door::commit(tx, who, change, after, Jobs::none()).await
}

pub async fn list(pool: &PgPool, company_id: CompanyId) -> Result<Vec<DataSource>> {
    Ok(sqlx::query_as!(
        DataSource,
        "SELECT id, provider, name, base_url, account_id, credential_hint, schedule, enabled, last_pull_at,
                last_pull_status, last_error, created_at
         FROM data_sources WHERE company_id = $1 ORDER BY created_at",
        company_id.uuid()
    )
    .fetch_all(pool)
    .await?)
}

pub async fn get(pool: &PgPool, company_id: CompanyId, id: Uuid) -> Result<DataSource> {
    fetch(pool, company_id, id).await
}

async fn fetch<'e>(
    conn: impl sqlx::PgExecutor<'e>,
    company_id: CompanyId,
    id: Uuid,
) -> Result<DataSource> {
    sqlx::query_as!(
        DataSource,
        "SELECT id, provider, name, base_url, account_id, credential_hint, schedule, enabled, last_pull_at,
                last_pull_status, last_error, created_at
         FROM data_sources WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        id
    )
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| Error::not_found(format!("no data source with id {id}")))
}

/// Deletes a source with its pulls' history, recorded as `data_source.delete`.
pub async fn delete(pool: &PgPool, who: &Who, id: Uuid) -> Result<Committed<()>> {
    let mut tx = pool.begin().await?;
    let source = fetch(&mut *tx, who.company, id).await?;
    sqlx::query!(
        "DELETE FROM data_sources WHERE company_id = $1 AND id = $2",
        who.company.uuid(),
        id
    )
    .execute(&mut *tx)
    .await?;
    let change = Change::new("data_source.delete")
        .target("data_source", id)
        .values(Some(described(&source)), None);
    door::commit(tx, who, change, (), Jobs::none()).await
}

/// Every data source credential sealed at rest, locked until the caller's transaction ends
/// (for master key rotation).
pub(crate) async fn sealed_for_update(conn: &mut PgConnection) -> Result<Vec<(Uuid, Vec<u8>)>> {
    Ok(
        sqlx::query!("SELECT id, credentials_sealed FROM data_sources FOR UPDATE")
            .fetch_all(conn)
            .await?
            .into_iter()
            .map(|r| (r.id, r.credentials_sealed))
            .collect(),
    )
}

/// Stores data source credentials sealed again (master key rotation); returns how many.
pub(crate) async fn store_sealed(
    conn: &mut PgConnection,
    values: &[(Uuid, Vec<u8>)],
) -> Result<u64> {
    let (ids, sealed): (Vec<Uuid>, Vec<Vec<u8>>) = values.iter().cloned().unzip();
    Ok(sqlx::query!(
        "UPDATE data_sources t SET credentials_sealed = u.sealed FROM UNNEST($1::uuid[], $2::bytea[]) AS u(id, sealed)
         WHERE t.id = u.id",
        &ids,
        &sealed
    )
    .execute(conn)
    .await?
    .rows_affected())
}

/// Records that the source's schedule was handled up to `at` (never moving backwards).
pub(crate) async fn mark_ticked(
    conn: &mut PgConnection,
    id: Uuid,
    at: DateTime<Utc>,
) -> Result<()> {
    sqlx::query!(
            "UPDATE data_sources SET last_tick_at = greatest(coalesce(last_tick_at, $2), $2) WHERE id = $1",
            id,
            at
        )
    .execute(conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests;

/// What a pull needs of its source: the provider, where it is, and its sealed credential.
pub struct ForPull {
    pub company_id: Uuid,
    pub provider: String,
    pub base_url: String,
    pub account_id: Option<String>,
    pub credentials_sealed: Vec<u8>,
}

/// The source a pull job names, whatever its company (the job carries the id); `None` when it
/// was deleted.
pub async fn for_pull(pool: &PgPool, id: Uuid) -> Result<Option<ForPull>> {
    Ok(sqlx::query_as!(
        ForPull,
        "SELECT company_id, provider, base_url, account_id, credentials_sealed
         FROM data_sources WHERE id = $1",
        id
    )
    .fetch_optional(pool)
    .await?)
}
