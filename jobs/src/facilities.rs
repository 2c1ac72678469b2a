//! Facilities of a company: CRUD and the matching rules the sync uses. Every query is scoped by
//! company: another company's facility is reported exactly like one that does not exist.

mod matching;
#[cfg(feature = "demo-seed")]
pub(crate) use matching::resolve_for_sync;
pub use matching::Resolved;
pub(crate) use matching::{resolve_for_sender, Sender, OUTSIDE_SCOPE};

use crate::audit::Change;
use crate::door::{self, Committed, Jobs, Who};
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
pub(crate) async fn name_of(
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
pub(crate) async fn lock_owned(
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
    fetch(pool, company_id, id).await
}

async fn fetch<'e>(
    conn: impl sqlx::PgExecutor<'e>,
    company_id: CompanyId,
    id: FacilityId,
) -> Result<Facility> {
    sqlx::query_as!(
        Facility,
        r#"SELECT f.id, f.external_id, f.source_system, f.name, f.address, f.website_url, f.rentable_sqft,
                  f.created_at, f.updated_at,
                  (SELECT max(s.snapshot_date) FROM sync_records s WHERE s.facility_id = f.id) AS last_sync_date
           FROM facilities f WHERE f.company_id = $1 AND f.id = $2"#,
        company_id.uuid(),
        id.uuid()
    )
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| not_found(id))
}

fn flat<T>(v: Option<Option<T>>) -> Option<T> {
    v.flatten()
}

/// Creates a facility, recorded as `facility.create` with its name.
pub async fn create(pool: &PgPool, who: &Who, input: FacilityInput) -> Result<Committed<Facility>> {
    let company_id = who.company;
    let name = flat(input.name).ok_or_else(|| ValidationError::new("name", "is required"))?;
    let external_id = flat(input.external_id);
    let source_system = flat(input.source_system);
    let address = flat(input.address);
    let website_url = flat(input.website_url);
    let id = Uuid::now_v7();
    let mut tx = pool.begin().await?;
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
    .execute(&mut *tx)
    .await
    .map_err(name_conflict)?;
    let facility = fetch(&mut *tx, company_id, id.into()).await?;
    let change = Change::new("facility.create")
        .target("facility", id)
        .facility(id)
        .values(None, Some(serde_json::json!({ "name": facility.name })));
    door::commit(tx, who, change, facility, Jobs::none()).await
}

/// Changes the fields the input names, recorded as `facility.update` with the facility's
/// details before and after (read under the row's lock).
pub async fn update(
    pool: &PgPool,
    who: &Who,
    id: FacilityId,
    input: FacilityInput,
) -> Result<Committed<Facility>> {
    let company_id = who.company;
    if matches!(input.name, Some(None)) {
        return Err(ValidationError::new("name", "cannot be removed").into());
    }
    let mut tx = pool.begin().await?;
    lock_owned(&mut tx, company_id, id).await?;
    let before = fetch(&mut *tx, company_id, id).await?;
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
    .fetch_optional(&mut *tx)
    .await
    .map_err(name_conflict)?;
    if updated.is_none() {
        return Err(not_found(id));
    }
    let after = fetch(&mut *tx, company_id, id).await?;
    let change = Change::new("facility.update")
        .target("facility", id)
        .facility(id.uuid())
        .values(Some(details(&before)), Some(details(&after)));
    door::commit(tx, who, change, after, Jobs::none()).await
}

/// The details of a facility a person edits, as its audit entry records them.
fn details(f: &Facility) -> serde_json::Value {
    serde_json::json!({
        "name": f.name,
        "external_id": f.external_id,
        "source_system": f.source_system,
        "address": f.address,
        "website_url": f.website_url,
        "rentable_sqft": f.rentable_sqft,
    })
}

/// Deletes a facility and, through the foreign keys, all of its data, recorded as
/// `facility.delete` with its name.
pub async fn delete(pool: &PgPool, who: &Who, id: FacilityId) -> Result<Committed<()>> {
    let mut tx = pool.begin().await?;
    let name = sqlx::query_scalar!(
        "DELETE FROM facilities WHERE company_id = $1 AND id = $2 RETURNING name",
        who.company.uuid(),
        id.uuid()
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| not_found(id))?;
    let change = Change::new("facility.delete")
        .target("facility", id)
        .facility(id.uuid())
        .values(Some(serde_json::json!({ "name": name })), None);
    door::commit(tx, who, change, (), Jobs::none()).await
}

/// The two settings a facility keeps as JSON overrides of the defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Overrides {
    Pricing,
    Ecri,
}

/// Locks the facility's row and reads one of its overrides: the "before" of a change to them,
/// read under the lock the change holds, so two concurrent changes each record the value the
/// other left. 404 when the company has no such facility.
pub(crate) async fn lock_overrides(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    which: Overrides,
) -> Result<serde_json::Value> {
    let (company, id) = (company_id.uuid(), facility_id.uuid());
    let found = match which {
        Overrides::Pricing => sqlx::query_scalar!(
            "SELECT pricing_settings FROM facilities WHERE company_id = $1 AND id = $2 FOR NO KEY UPDATE",
            company,
            id
        )
        .fetch_optional(conn)
        .await?,
        Overrides::Ecri => sqlx::query_scalar!(
            "SELECT ecri_settings FROM facilities WHERE company_id = $1 AND id = $2 FOR NO KEY UPDATE",
            company,
            id
        )
        .fetch_optional(conn)
        .await?,
    };
    found.ok_or_else(|| not_found(facility_id))
}

/// Stores one of the facility's overrides as given (checked by the use case first; the row
/// locked by [`lock_overrides`]).
pub(crate) async fn store_overrides(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    which: Overrides,
    overrides: &serde_json::Value,
) -> Result<()> {
    let id = facility_id.uuid();
    match which {
        Overrides::Pricing => {
            sqlx::query!(
                "UPDATE facilities SET pricing_settings = $2, updated_at = now() WHERE id = $1",
                id,
                overrides
            )
            .execute(conn)
            .await?
        }
        Overrides::Ecri => {
            sqlx::query!(
                "UPDATE facilities SET ecri_settings = $2, updated_at = now() WHERE id = $1",
                id,
                overrides
            )
            .execute(conn)
            .await?
        }
    };
    Ok(())
}

/// Replaces one of the facility's overrides with `body` (a JSON object), checked by `check`
/// (a bad one is a 422 and writes nothing), and records the change with the overrides before
/// and after, in one transaction that holds the facility's row. 404 for a facility that is not
/// the company's, before the body is read. The value is what `check` made of the overrides,
/// with the overrides as stored.
pub(crate) async fn replace_overrides<T>(
    pool: &sqlx::PgPool,
    who: &crate::door::Who,
    facility_id: FacilityId,
    which: Overrides,
    body: &[u8],
    check: impl FnOnce(&serde_json::Value) -> Result<T>,
) -> Result<crate::door::Committed<(T, serde_json::Value)>> {
    let mut tx = pool.begin().await?;
    let before = lock_overrides(&mut tx, who.company, facility_id, which).await?;
    crate::error::require_object(body)?;
    let overrides: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| ValidationError::new("body", format!("is not valid JSON ({e})")))?;
    let value = check(&overrides)?;
    store_overrides(&mut tx, facility_id, which, &overrides).await?;
    let action = match which {
        Overrides::Pricing => "pricing_settings.update",
        Overrides::Ecri => "ecri_settings.update",
    };
    let change = crate::audit::Change::new(action)
        .target("facility", facility_id)
        .facility(facility_id.uuid())
        .values(Some(before), Some(overrides.clone()));
    // Both settings weigh in the facility's ECRI suggestions (the pricing settings through the
    // competitor band): its stored run is made again.
    let mut jobs = crate::door::Jobs::none();
    crate::ecri::runs::request_into(
        &mut tx,
        who.company,
        facility_id,
        crate::ecri::runs::Trigger::Settings,
        &mut jobs,
    )
    .await?;
    crate::door::commit(tx, who, change, (value, overrides), jobs).await
}

/// Sets the facility's lease-up mode (kept by `crate::lease_up::record`).
pub(crate) async fn set_mode(
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
pub(crate) async fn lock(conn: &mut PgConnection, id: FacilityId) -> Result<()> {
    sqlx::query!(
        "SELECT id FROM facilities WHERE id = $1 FOR UPDATE",
        id.uuid()
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(())
}
