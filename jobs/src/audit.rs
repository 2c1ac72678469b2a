//! The audit log: every change a person or a key makes (and every sign-in, good or failed), with
//! who, in which role, what, on what, the setting's value before and after where it is one, when
//! and from which address. Owners and admins read it (`GET /api/v1/audit-log`, the Audit page);
//! entries older than the company's retention are purged by the worker.

use crate::access::Role;
use crate::actor::Actor;
use crate::error::{Result, ValidationError};
use chrono::{DateTime, Utc};
use domain::ids::CompanyId;
use serde_json::Value;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// Days an entry is kept unless the company chose otherwise.
pub const DEFAULT_RETENTION_DAYS: i32 = 365;
/// The shortest and longest retention a company may choose.
pub const RETENTION_DAYS: std::ops::RangeInclusive<i32> = 30..=3650;
/// Most entries in one page of the log.
pub const MAX_PAGE: i64 = 500;

/// One change to record.
#[derive(Clone, Debug, Default)]
pub struct Change {
    /// What was done, as `noun.verb` (`api_key.create`, `pricing_settings.update`).
    pub action: String,
    /// What was acted on, as `kind:id`.
    pub target: Option<String>,
    pub facility_id: Option<Uuid>,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

impl Change {
    pub fn new(action: impl Into<String>) -> Self {
        Self {
            action: action.into(),
            ..Self::default()
        }
    }

    pub fn target(mut self, kind: &str, id: impl std::fmt::Display) -> Self {
        self.target = Some(format!("{kind}:{id}"));
        self
    }

    pub fn facility(mut self, id: Uuid) -> Self {
        self.facility_id = Some(id);
        self
    }

    pub fn values(mut self, before: Option<Value>, after: Option<Value>) -> Self {
        self.before = before;
        self.after = after;
        self
    }
}

/// Who did it and from where.
#[derive(Clone, Debug)]
pub(crate) struct By<'a> {
    pub actor: &'a Actor,
    /// `None` for the service and for a failed sign-in.
    pub role: Option<Role>,
    /// Where the change came from; `None` where the caller does not know (a sign-in).
    pub via: Option<crate::door::Via>,
    pub client_addr: Option<&'a str>,
}

/// Records one change in the caller's transaction (a use case's, through
/// [`crate::door::commit`]).
pub(crate) async fn record(
    conn: &mut PgConnection,
    company: CompanyId,
    by: &By<'_>,
    change: &Change,
) -> Result<()> {
    sqlx::query!(
        "INSERT INTO audit_log
             (company_id, actor, role, action, target, facility_id, before, after, client_addr, via)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        company.uuid(),
        by.actor.json(),
        by.role.map(Role::as_str),
        change.action,
        change.target,
        change.facility_id,
        change.before,
        change.after,
        by.client_addr,
        by.via.map(crate::door::Via::as_str)
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Records the service's key rotation in every company's log, in the rotation's transaction.
pub(crate) async fn record_in_every_company(conn: &mut PgConnection, what: &str) -> Result<()> {
    sqlx::query!(
        "INSERT INTO audit_log (company_id, actor, action, via)
         SELECT id, $1, 'master_key.rotate', 'service' FROM companies",
        crate::actor::Actor::system(what).json()
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A recorded entry.
#[derive(Clone, Debug)]
pub struct Entry {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: Actor,
    pub role: Option<String>,
    pub action: String,
    pub target: Option<String>,
    pub facility_id: Option<Uuid>,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub client_addr: Option<String>,
    /// `api`, `dashboard` or `service`; `None` for entries recorded before it was kept.
    pub via: Option<String>,
}

/// What to list: every filter is optional.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Entries at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// The actor's address or key name (case-insensitive, whole).
    pub actor: Option<String>,
    /// The action, whole (`api_key.create`), or a noun with a dot (`api_key.`) for all of its.
    pub action: Option<String>,
    pub facility_id: Option<Uuid>,
    /// Entries older than this entry (the `next` of the page before).
    pub before_id: Option<i64>,
    /// Page size, 1 to [`MAX_PAGE`].
    pub limit: i64,
}

/// A page of the log, newest first, and where the next page starts.
#[derive(Clone, Debug)]
pub struct Page {
    pub entries: Vec<Entry>,
    /// The `before` of the next page; `None` on the last.
    pub next: Option<i64>,
}

/// A page of the company's log.
pub async fn list(pool: &PgPool, company: CompanyId, f: &Filter) -> Result<Page> {
    if !(1..=MAX_PAGE).contains(&f.limit) {
        return Err(ValidationError::new("limit", format!("must be 1 to {MAX_PAGE}")).into());
    }
    for (field, value) in [("actor", &f.actor), ("action", &f.action)] {
        if value
            .as_deref()
            .is_some_and(|v| v.contains(domain::values::is_forbidden_in_text))
        {
            return Err(ValidationError::new(
                field,
                "must not contain control or invisible formatting characters",
            )
            .into());
        }
    }
    let (action_exact, action_prefix) = match f.action.as_deref() {
        Some(a) if a.ends_with('.') => (None, Some(format!("{a}%"))),
        Some(a) => (Some(a.to_owned()), None),
        None => (None, None),
    };
    let rows = sqlx::query!(
        r#"SELECT id, at, actor, role, action, target, facility_id, before, after, client_addr, via
           FROM audit_log
           WHERE company_id = $1
             AND ($2::timestamptz IS NULL OR at >= $2)
             AND ($3::text IS NULL OR lower(actor->>'name') = lower($3))
             AND ($4::text IS NULL OR action = $4)
             AND ($5::text IS NULL OR action LIKE $5)
             AND ($6::uuid IS NULL OR facility_id = $6)
             AND ($7::bigint IS NULL OR id < $7)
           ORDER BY id DESC
           LIMIT $8"#,
        company.uuid(),
        f.since,
        f.actor,
        action_exact,
        action_prefix,
        f.facility_id,
        f.before_id,
        f.limit + 1
    )
    .fetch_all(pool)
    .await?;
    let more = rows.len() as i64 > f.limit;
    let entries: Vec<Entry> = rows
        .into_iter()
        .take(f.limit as usize)
        .map(|r| Entry {
            id: r.id,
            at: r.at,
            actor: Actor::from_json(&r.actor),
            role: r.role,
            action: r.action,
            target: r.target,
            facility_id: r.facility_id,
            before: r.before,
            after: r.after,
            client_addr: r.client_addr,
            via: r.via,
        })
        .collect();
    let next = more.then(|| entries.last().map(|e| e.id)).flatten();
    Ok(Page { entries, next })
}

/// The company's retention, in days.
pub async fn retention_days(pool: &PgPool, company: CompanyId) -> Result<i32> {
    Ok(sqlx::query_scalar!(
        "SELECT audit_retention_days FROM companies WHERE id = $1",
        company.uuid()
    )
    .fetch_optional(pool)
    .await?
    .unwrap_or(DEFAULT_RETENTION_DAYS))
}

/// Sets the company's retention (30 to 3,650 days) and records the change; the old value.
pub async fn set_retention(
    pool: &PgPool,
    who: &crate::door::Who,
    days: i32,
) -> Result<crate::door::Committed<i32>> {
    let company = who.company;
    if !RETENTION_DAYS.contains(&days) {
        return Err(ValidationError::new(
            "audit_retention_days",
            format!(
                "must be {} to {} days",
                RETENTION_DAYS.start(),
                RETENTION_DAYS.end()
            ),
        )
        .into());
    }
    let mut tx = pool.begin().await?;
    let before = crate::tenancy::lock_retention(&mut tx, company).await?;
    crate::tenancy::set_retention(&mut tx, company, days).await?;
    let change = Change::new("audit_settings.update").values(
        Some(serde_json::json!({ "audit_retention_days": before })),
        Some(serde_json::json!({ "audit_retention_days": days })),
    );
    crate::door::commit(tx, who, change, before, crate::door::Jobs::none()).await
}

/// Deletes entries older than their company's retention, at most `batch`; how many.
pub async fn purge_expired(pool: &PgPool, batch: i64) -> Result<u64> {
    Ok(sqlx::query!(
        "DELETE FROM audit_log WHERE id IN (
             SELECT a.id FROM audit_log a JOIN companies c ON c.id = a.company_id
             WHERE a.at < now() - make_interval(days => c.audit_retention_days)
             LIMIT $1)",
        batch
    )
    .execute(pool)
    .await?
    .rows_affected())
}

/// Records a sign-in and stamps the member's last sign-in.
pub async fn signed_in(pool: &PgPool, user_id: Uuid, client_addr: &str) -> Result<()> {
    let mut tx = pool.begin().await?;
    if let Some(member) = crate::tenancy::stamp_sign_in(&mut tx, user_id).await? {
        let by = By {
            actor: &Actor::user(user_id, &member.email),
            role: Some(member.role),
            via: Some(crate::door::Via::Dashboard),
            client_addr: Some(client_addr),
        };
        record(
            &mut tx,
            member.company,
            &by,
            &Change::new("user.sign_in").target("user", user_id),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Records a failed sign-in with the address of a member (under the member's company); an
/// address without an account belongs to no company, and nothing is recorded for it.
pub async fn sign_in_failed(pool: &PgPool, email: &str, client_addr: &str) -> Result<()> {
    if email.contains('\0') {
        return Ok(());
    }
    sqlx::query!(
        r#"INSERT INTO audit_log (company_id, actor, action, target, client_addr, via)
           SELECT company_id, jsonb_build_object('type', 'user', 'id', id, 'name', email),
                  'user.sign_in_failed', 'user:' || id, $2, 'dashboard'
           FROM users WHERE lower(email) = lower($1)"#,
        email.trim(),
        client_addr
    )
    .execute(pool)
    .await?;
    Ok(())
}
