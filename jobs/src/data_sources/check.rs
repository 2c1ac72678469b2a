//! Checking a data source before it is stored: its schedule's spacing, its provider's needs
//! (address, credential fields, account id) and the connection test.

use super::{NewDataSource, MIN_SCHEDULE_INTERVAL};
use crate::crm::provider::{self, Connection, Credential, ProviderInfo, State};
use crate::crm::{CrmClient, PullError};
use crate::error::{Result, ValidationError};
use crate::outbound::guard::PrivateTargets;
use chrono::{DateTime, Utc};
use domain::ids::CompanyId;
use std::str::FromStr;

/// Most firings looked at when a new schedule's spacing is checked (an hourly one for a year).
const SPACING_CHECKED: usize = 24 * 366;

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

/// A new source's provider and connection, checked.
pub struct Checked {
    pub info: &'static ProviderInfo,
    pub connection: Connection,
}

/// Checks a new source against its provider's needs: a live provider, an address (or the
/// provider's default), the credential fields and account id it takes, and nothing else.
pub fn check_new(policy: &PrivateTargets, new: &NewDataSource) -> Result<Checked, ValidationError> {
    let name = new.provider.trim().to_lowercase();
    let Some(p) = provider::find(&name) else {
        return Err(ValidationError::new(
            "provider",
            format!(
                "must be one of {} (coming soon: {})",
                provider::names(State::Live).join(", "),
                provider::names(State::ComingSoon).join(", ")
            ),
        ));
    };
    let info = &p.info;
    if info.state == State::ComingSoon {
        return Err(ValidationError::new(
            "provider",
            format!(
                "the {} adapter is coming soon; live now: {}",
                info.name,
                provider::names(State::Live).join(", ")
            ),
        ));
    }
    let base_url = match (new.base_url.as_deref(), info.default_base_url) {
        (Some(raw), _) if !raw.trim().is_empty() => {
            crate::outbound::parse_https_url("base_url", raw, policy)?.to_string()
        }
        (_, Some(default)) => default.to_owned(),
        (_, None) => return Err(ValidationError::new("base_url", "is required")),
    };
    let secret = match (&new.api_secret, info.needs_secret()) {
        (Some(s), true) => Some(s.as_str().to_owned()),
        (None, true) => {
            return Err(ValidationError::new(
                "api_secret",
                format!("is required by {}", info.name),
            ))
        }
        (Some(_), false) => {
            return Err(ValidationError::new(
                "api_secret",
                format!("is not used by {}", info.name),
            ))
        }
        (None, false) => None,
    };
    let account_id = match (&new.account_id, info.needs_account_id) {
        (Some(a), true) if crate::crm::is_dot_segment(a.as_str().trim()) => {
            return Err(ValidationError::new(
                "account_id",
                "must not be `.` or `..` (it becomes a part of the CRM's path)",
            ))
        }
        (Some(a), true) if !a.as_str().trim().is_empty() => Some(a.as_str().trim().to_owned()),
        (_, true) => {
            return Err(ValidationError::new(
                "account_id",
                format!("is required by {} (its company id)", info.name),
            ))
        }
        (Some(_), false) => {
            return Err(ValidationError::new(
                "account_id",
                format!("is not used by {}", info.name),
            ))
        }
        (None, false) => None,
    };
    Ok(Checked {
        info,
        connection: Connection {
            base_url,
            credential: Credential {
                key: new.api_key.as_str().to_owned(),
                secret,
            },
            account_id,
        },
    })
}

/// The connection test: one cheap request with the credential, one attempt, within
/// `CRM_TEST_TIMEOUT_MS` all told; nothing is stored. At most `CRM_TESTS_PER_COMPANY` of a
/// company and `CRM_TESTS_PER_PROCESS` in all run at once ([`crate::Error::Busy`] beyond). A
/// failure is a validation error naming what went wrong in the fixed words of
/// `crate::crm::PullError`.
pub async fn test_connection(crm: &CrmClient, company: CompanyId, checked: &Checked) -> Result<()> {
    let adapter = provider::find(checked.info.name)
        .and_then(|p| p.adapter)
        .ok_or_else(|| ValidationError::new("provider", "has no adapter"))?;
    let _running = crm.connection_tests().start(company)?;
    let limit = crm.settings().test_timeout;
    let mut session = crm.test_session();
    let outcome = tokio::time::timeout(limit, adapter.check(&mut session, &checked.connection))
        .await
        .unwrap_or(Err(PullError::Timeout(limit)));
    outcome.map_err(|e| ValidationError::new("connection", format!("the test failed: {e}")).into())
}

/// Checks a new source and tests its connection (the body of `POST .../test`), recorded as
/// `data_source.test` once it passed (the database is not touched while the CRM answers).
pub async fn test(
    pool: &sqlx::PgPool,
    crm: &CrmClient,
    policy: &PrivateTargets,
    who: &crate::door::Who,
    new: &NewDataSource,
) -> Result<crate::door::Committed<()>> {
    let checked = check_new(policy, new)?;
    test_connection(crm, who.company, &checked).await?;
    let tx = pool.begin().await?;
    let change = crate::audit::Change::new("data_source.test").values(
        None,
        Some(serde_json::json!({
            "provider": checked.info.name,
            "base_url": checked.connection.base_url,
        })),
    );
    crate::door::commit(tx, who, change, (), crate::door::Jobs::none()).await
}
