//! Facilities of a company: CRUD and the matching rules the sync uses. Every query is scoped by
//! company: another company's facility is reported exactly like one that does not exist.

mod matching;
pub use matching::{resolve_for_sync, Resolved};

use crate::error::{conflict_on_unique, Error, Result, ValidationError};
use chrono::{DateTime, NaiveDate, Utc};
use domain::ids::{CompanyId, FacilityId};
use domain::values::{HttpUrl, Quantity, Text};
use serde::Serialize;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

#[derive(Clone, Debug, Serialize, sqlx::FromRow)]
pub struct Facility {
    /// The service's id of the facility.
    pub id: Uuid,
    /// The CRM's facility id.
    pub external_id: Option<String>,
    /// Free-form label of the originating system.
    pub source_system: Option<String>,
    /// Name, unique within the company.
    pub name: String,
    /// Postal address.
    pub address: Option<String>,
    /// The facility's website.
    pub website_url: Option<String>,
    /// Rentable area in square feet.
    pub rentable_sqft: Option<f64>,
    /// When the facility was created.
    pub created_at: DateTime<Utc>,
    /// When it was last changed.
    pub updated_at: DateTime<Utc>,
    /// Date of the latest sync record, if any.
    pub last_sync_date: Option<NaiveDate>,
}

/// Body of create and update. On update, an absent field stays as it is (`None`) and
/// `Some(None)` clears it.
#[derive(Debug, Default)]
pub struct FacilityInput {
    /// The CRM's facility id (unique per company together with `source_system`).
    pub external_id: Option<Option<Text<200>>>,
    /// Free-form label of the originating system.
    pub source_system: Option<Option<Text<100>>>,
    /// Name, unique within the company: required on creation, never cleared.
    pub name: Option<Option<Text<200>>>,
    /// Postal address.
    pub address: Option<Option<Text<500>>>,
    /// The facility's website.
    pub website_url: Option<Option<HttpUrl>>,
    /// Rentable area in square feet.
    pub rentable_sqft: Option<Option<Quantity>>,
}

fn name_conflict(e: sqlx::Error) -> Error {
    conflict_on_unique(e, |constraint| {
        if constraint.contains("external") {
            "another facility of this company has the same source_system and external_id".to_owned()
        } else {
            "another facility of this company has the same name".to_owned()
        }
    })
}

fn not_found(id: impl std::fmt::Display) -> Error {
    Error::not_found(format!("no facility with id {id}"))
}

/// A 404 unless the facility is the company's: routes that take a facility id and a body call
/// it before reading the body, so a foreign or unknown facility is a 404 whatever the body is.
/// One short query on the pool; no connection is kept.
pub async fn ensure_owned(pool: &PgPool, company_id: CompanyId, id: FacilityId) -> Result<()> {
    let found = sqlx::query_scalar!(
        "SELECT id FROM facilities WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        id.uuid()
    )
    .fetch_optional(pool)
    .await?;
    found.map(|_| ()).ok_or_else(|| not_found(id))
}

/// The name of a facility of the company (404 for another company's).
pub async fn name_of(
    conn: &mut PgConnection,
    company_id: CompanyId,
    id: FacilityId,
) -> Result<String> {
    sqlx::query_scalar!(
        "SELECT name FROM facilities WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        id.uuid()
    )
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| not_found(id))
}

/// The name of a facility of the company, its row locked until the caller's transaction ends
/// (decisions about one facility are made one at a time).
pub async fn lock_owned(
    conn: &mut PgConnection,
    company_id: CompanyId,
    id: FacilityId,
) -> Result<String> {
    sqlx::query_scalar!(
        "SELECT name FROM facilities WHERE company_id = $1 AND id = $2 FOR UPDATE",
        company_id.uuid(),
        id.uuid()
    )
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| not_found(id))
}

/// The company's facilities that `scope` sees, by name.
pub async fn list(
    pool: &PgPool,
    company_id: CompanyId,
    scope: &crate::access::Scope,
) -> Result<Vec<Facility>> {
    Ok(sqlx::query_as!(
        Facility,
        r#"SELECT f.id, f.external_id, f.source_system, f.name, f.address, f.website_url, f.rentable_sqft,
                  f.created_at, f.updated_at,
                  (SELECT max(s.snapshot_date) FROM sync_records s WHERE s.facility_id = f.id) AS last_sync_date
           FROM facilities f WHERE f.company_id = $1 AND ($2::uuid[] IS NULL OR f.id = ANY($2))
           ORDER BY lower(f.name), f.id"#,
        company_id.uuid(),
        scope.ids()
    )
    .fetch_all(pool)
    .await?)
}

pub async fn get(pool: &PgPool, company_id: CompanyId, id: FacilityId) -> Result<Facility> {
    sqlx::query_as!(
        Facility,
        r#"SELECT f.id, f.external_id, f.source_system, f.name, f.address, f.website_url, f.rentable_sqft,
                  f.created_at, f.updated_at,
                  (SELECT max(s.snapshot_date) FROM sync_records s WHERE s.facility_id = f.id) AS last_sync_date
           FROM facilities f WHERE f.company_id = $1 AND f.id = $2"#,
        company_id.uuid(),
        id.uuid()
    )
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| not_found(id))
}

fn flat<T>(v: Option<Option<T>>) -> Option<T> {
    v.flatten()
}

pub async fn create(
    pool: &PgPool,
    company_id: CompanyId,
    input: FacilityInput,
) -> Result<Facility> {
    let name = flat(input.name).ok_or_else(|| ValidationError::new("name", "is required"))?;
    let external_id = flat(input.external_id);
    let source_system = flat(input.source_system);
    let address = flat(input.address);
    let website_url = flat(input.website_url);
    let id = Uuid::now_v7();
    sqlx::query!(
        "INSERT INTO facilities (id, company_id, external_id, source_system, name, address, website_url, rentable_sqft)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        id,
        company_id.uuid(),
        external_id.as_ref().map(Text::as_str),
        source_system.as_ref().map(Text::as_str),
        name.as_str(),
        address.as_ref().map(Text::as_str),
        website_url.as_ref().map(HttpUrl::as_str),
        flat(input.rentable_sqft).map(Quantity::get),
    )
    .execute(pool)
    .await
    .map_err(name_conflict)?;
    get(pool, company_id, id.into()).await
}

pub async fn update(
    pool: &PgPool,
    company_id: CompanyId,
    id: FacilityId,
    input: FacilityInput,
) -> Result<Facility> {
    if matches!(input.name, Some(None)) {
        return Err(ValidationError::new("name", "cannot be removed").into());
    }
    // For each field: whether the body names it, and the new value.
    let set = |v: &Option<Option<String>>| (v.is_some(), v.clone().flatten());
    let to_s = |v: &Option<Option<Text<200>>>| {
        v.as_ref()
            .map(|o| o.as_ref().map(|t| t.as_str().to_owned()))
    };
    let (ext_set, ext) = set(&to_s(&input.external_id));
    let (src_set, src) = set(&input
        .source_system
        .as_ref()
        .map(|o| o.as_ref().map(|t| t.as_str().to_owned())));
    let (_, name) = set(&to_s(&input.name));
    let (addr_set, addr) = set(&input
        .address
        .as_ref()
        .map(|o| o.as_ref().map(|t| t.as_str().to_owned())));
    let (url_set, url) = set(&input
        .website_url
        .as_ref()
        .map(|o| o.as_ref().map(|u| u.as_str().to_owned())));
    let sqft_set = input.rentable_sqft.is_some();
    let sqft = input.rentable_sqft.flatten().map(Quantity::get);
    let updated = sqlx::query_scalar!(
        "UPDATE facilities SET
            external_id   = CASE WHEN $3 THEN $4 ELSE external_id END,
            source_system = CASE WHEN $5 THEN $6 ELSE source_system END,
            name          = coalesce($7, name),
            address       = CASE WHEN $8 THEN $9 ELSE address END,
            website_url   = CASE WHEN $10 THEN $11 ELSE website_url END,
            rentable_sqft = CASE WHEN $12 THEN $13 ELSE rentable_sqft END,
            updated_at    = now()
         WHERE company_id = $1 AND id = $2
         RETURNING id",
        company_id.uuid(),
        id.uuid(),
        ext_set,
        ext,
        src_set,
        src,
        name,
        addr_set,
        addr,
        url_set,
        url,
        sqft_set,
        sqft
    )
    .fetch_optional(pool)
    .await
    .map_err(name_conflict)?;
    match updated {
        None => Err(not_found(id)),
        Some(_) => get(pool, company_id, id).await,
    }
}

/// Deletes a facility and, through the foreign keys, all of its data.
pub async fn delete(pool: &PgPool, company_id: CompanyId, id: FacilityId) -> Result<()> {
    let deleted = sqlx::query!(
        "DELETE FROM facilities WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        id.uuid()
    )
    .execute(pool)
    .await?;
    if deleted.rows_affected() == 0 {
        return Err(not_found(id));
    }
    Ok(())
}

/// Stores the facility's pricing overrides as given (checked by `crate::pricing::store`); 404
/// when the company has no such facility.
pub async fn set_pricing_overrides(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    overrides: &serde_json::Value,
) -> Result<()> {
    let updated = sqlx::query!(
        "UPDATE facilities SET pricing_settings = $3, updated_at = now()
         WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        facility_id.uuid(),
        overrides
    )
    .execute(conn)
    .await?;
    if updated.rows_affected() == 0 {
        return Err(Error::not_found(format!(
            "no facility with id {facility_id}"
        )));
    }
    Ok(())
}

/// Sets the facility's lease-up mode (kept by `crate::lease_up::record`).
pub async fn set_mode(
    conn: &mut PgConnection,
    id: FacilityId,
    mode: domain::lease_up::Mode,
) -> Result<()> {
    sqlx::query!(
        "UPDATE facilities SET mode = $2 WHERE id = $1 AND mode <> $2",
        id.uuid(),
        mode.as_str()
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Locks the facility's row until the transaction ends: work that must see a facility's history
/// as one stable set (the ingest's lease-up evaluation) runs one at a time per facility.
pub async fn lock(conn: &mut PgConnection, id: FacilityId) -> Result<()> {
    sqlx::query!(
        "SELECT id FROM facilities WHERE id = $1 FOR UPDATE",
        id.uuid()
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(())
}
