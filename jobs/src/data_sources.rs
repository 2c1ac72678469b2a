//! Connected CRMs: a provider, where to reach it, a sealed credential (only a masked hint is ever
//! shown) and a pull schedule. Pulls run as `crm_pull` jobs, on demand or from the cron tick.

use crate::config::MasterKey;
use crate::crypto;
use crate::domain::values::Text;
use crate::error::{Error, Result, ValidationError};
use crate::outbound::guard::PrivateTargets;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use std::str::FromStr;
use uuid::Uuid;

/// Providers with a live adapter.
pub const LIVE_PROVIDERS: [&str; 1] = ["generic_json"];
/// Providers announced, without an adapter yet.
pub const COMING_SOON: [&str; 6] = [
    "storedge",
    "sitelink",
    "storman",
    "webselfstorage",
    "hummingbird",
    "stora",
];
/// Nightly at 02:00 in the company's time zone (cron with seconds).
pub const DEFAULT_SCHEDULE: &str = "0 0 2 * * *";
/// Data sources per company: each one is a scheduled request to a customer-chosen address.
pub const MAX_DATA_SOURCES: i64 = 10;
/// A schedule fires at most once per this long (checked at creation and again at each tick).
pub const MIN_SCHEDULE_INTERVAL: chrono::TimeDelta = chrono::TimeDelta::hours(1);
/// Most firings looked at when a new schedule's spacing is checked (an hourly one for a year).
const SPACING_CHECKED: usize = 24 * 366;

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewDataSource {
    /// A live provider (see `providers.live` of the list).
    pub provider: String,
    /// Name shown in lists; the provider's when absent.
    pub name: Option<Text<200>>,
    /// `https://` without credentials; the adapter adds its own path and query.
    pub base_url: String,
    /// The CRM's read-only API key.
    pub api_key: Text<500>,
    /// Cron expression with seconds (`sec min hour day month weekday`).
    pub schedule: Option<String>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DataSource {
    /// Id of the data source.
    pub id: Uuid,
    /// The CRM provider.
    pub provider: String,
    /// Name shown in lists.
    pub name: String,
    /// The CRM's base URL.
    pub base_url: String,
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

pub fn parse_schedule(raw: &str) -> Result<cron::Schedule, ValidationError> {
    cron::Schedule::from_str(raw.trim()).map_err(|e| {
        ValidationError::new(
            "schedule",
            format!("is not a cron expression with seconds ({e})"),
        )
    })
}

/// Checks a new schedule: a cron expression with seconds whose firings are at least
/// [`MIN_SCHEDULE_INTERVAL`] apart (an expression that fires every second or minute is refused
/// rather than quietly thinned out).
pub fn check_schedule(raw: &str) -> Result<cron::Schedule, ValidationError> {
    let schedule = parse_schedule(raw)?;
    let horizon = Utc::now() + chrono::TimeDelta::days(366);
    let firings: Vec<DateTime<Utc>> = schedule
        .upcoming(Utc)
        .take_while(|t| *t < horizon)
        .take(SPACING_CHECKED)
        .collect();
    if firings
        .windows(2)
        .any(|w| w[1] - w[0] < MIN_SCHEDULE_INTERVAL)
    {
        return Err(ValidationError::new(
            "schedule",
            "fires more than once an hour; a pull may run at most hourly",
        ));
    }
    Ok(schedule)
}

pub async fn create(
    pool: &PgPool,
    key: &MasterKey,
    policy: &PrivateTargets,
    company_id: Uuid,
    new: NewDataSource,
) -> Result<DataSource> {
    let provider = new.provider.trim().to_lowercase();
    if COMING_SOON.contains(&provider.as_str()) {
        return Err(ValidationError::new(
            "provider",
            format!("the {provider} adapter is coming soon"),
        )
        .into());
    }
    if !LIVE_PROVIDERS.contains(&provider.as_str()) {
        return Err(ValidationError::new(
            "provider",
            format!(
                "must be one of {} (coming soon: {})",
                LIVE_PROVIDERS.join(", "),
                COMING_SOON.join(", ")
            ),
        )
        .into());
    }
    let base_url = crate::outbound::parse_https_url("base_url", &new.base_url, policy)?;
    let schedule = new.schedule.unwrap_or_else(|| DEFAULT_SCHEDULE.to_owned());
    check_schedule(&schedule)?;
    let id = Uuid::now_v7();
    let sealed = crypto::seal(key, id.as_bytes(), new.api_key.as_str().as_bytes());
    let name = new.name.map_or_else(|| provider.clone(), Text::into_string);
    let mut tx = pool.begin().await?;
    // Serialises creations of one company, so the cap holds under concurrency.
    crate::tenancy::lock_company(&mut tx, company_id).await?;
    let count = sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM data_sources WHERE company_id = $1"#,
        company_id
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
        "INSERT INTO data_sources (id, company_id, provider, name, base_url, credentials_sealed, credential_hint, schedule)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        id,
        company_id,
        provider,
        name,
        base_url.as_str(),
        sealed,
        crypto::hint(new.api_key.as_str()),
        schedule.trim()
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    get(pool, company_id, id).await
}

/// A change to a data source: every field optional, absent fields stay as they are. The same
/// rules as at creation apply to what is given.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDataSource {
    /// New name.
    pub name: Option<Text<200>>,
    /// New cron expression with seconds; at most one pull an hour.
    pub schedule: Option<String>,
    /// Turns scheduled pulls on or off.
    pub enabled: Option<bool>,
    /// A new read-only key for the CRM (sealed again; the hint follows it).
    pub api_key: Option<Text<500>>,
}

pub async fn update(
    pool: &PgPool,
    key: &MasterKey,
    company_id: Uuid,
    id: Uuid,
    change: UpdateDataSource,
) -> Result<DataSource> {
    if let Some(schedule) = &change.schedule {
        check_schedule(schedule)?;
    }
    let (sealed, hint) = change.api_key.as_ref().map_or((None, None), |k| {
        (
            Some(crypto::seal(key, id.as_bytes(), k.as_str().as_bytes())),
            Some(crypto::hint(k.as_str())),
        )
    });
    let done = sqlx::query!(
        "UPDATE data_sources SET
             name = coalesce($3, name),
             schedule = coalesce($4, schedule),
             enabled = coalesce($5, enabled),
             credentials_sealed = coalesce($6, credentials_sealed),
             credential_hint = coalesce($7, credential_hint)
         WHERE company_id = $1 AND id = $2",
        company_id,
        id,
        change.name.map(Text::into_string),
        change.schedule.as_deref().map(str::trim),
        change.enabled,
        sealed,
        hint
    )
    .execute(pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::not_found(format!("no data source with id {id}")));
    }
    get(pool, company_id, id).await
}

pub async fn list(pool: &PgPool, company_id: Uuid) -> Result<Vec<DataSource>> {
    Ok(sqlx::query_as!(
        DataSource,
        "SELECT id, provider, name, base_url, credential_hint, schedule, enabled, last_pull_at, last_pull_status,
                last_error, created_at
         FROM data_sources WHERE company_id = $1 ORDER BY created_at",
        company_id
    )
    .fetch_all(pool)
    .await?)
}

pub async fn get(pool: &PgPool, company_id: Uuid, id: Uuid) -> Result<DataSource> {
    sqlx::query_as!(
        DataSource,
        "SELECT id, provider, name, base_url, credential_hint, schedule, enabled, last_pull_at, last_pull_status,
                last_error, created_at
         FROM data_sources WHERE company_id = $1 AND id = $2",
        company_id,
        id
    )
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::not_found(format!("no data source with id {id}")))
}

pub async fn delete(pool: &PgPool, company_id: Uuid, id: Uuid) -> Result<()> {
    let done = sqlx::query!(
        "DELETE FROM data_sources WHERE company_id = $1 AND id = $2",
        company_id,
        id
    )
    .execute(pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::not_found(format!("no data source with id {id}")));
    }
    Ok(())
}

/// Records a pull request as a `crm_pull` job; returns the job id.
pub async fn request_pull(pool: &PgPool, company_id: Uuid, id: Uuid) -> Result<Uuid> {
    get(pool, company_id, id).await?;
    let mut tx = pool.begin().await?;
    let job = crate::runs::insert(
        &mut tx,
        crate::runs::NewJob::new(
            crate::queue::Kind::CrmPull,
            Some(company_id),
            serde_json::json!({ "source_id": id, "trigger": "on_demand" }),
        ),
    )
    .await?
    .ok_or_else(|| Error::Conflict("the pull could not be recorded".to_owned()))?;
    tx.commit().await?;
    Ok(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_fire_at_most_hourly() {
        for ok in [
            "0 0 2 * * *",
            "0 0 * * * *",
            "0 15 */2 * * *",
            "0 0 0 1 1 *",
        ] {
            assert!(check_schedule(ok).is_ok(), "{ok}");
        }
        for bad in [
            "* * * * * *",
            "0 * * * * *",
            "0 */30 * * * *",
            "0 0,59 3 * * *",
        ] {
            let e = check_schedule(bad).unwrap_err();
            assert_eq!(e.path, "schedule", "{bad}");
            assert!(e.message.contains("once an hour"), "{bad}: {e}");
        }
        assert!(check_schedule("nightly").is_err());
    }
}
