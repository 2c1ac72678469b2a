//! Facilities of a company: CRUD and the matching rules the sync uses. Every query is scoped by
//! company: another company's facility is reported exactly like one that does not exist.

use crate::error::{conflict_on_unique, Error, Result, ValidationError};
use chrono::{DateTime, NaiveDate, Utc};
use domain::values::{HttpUrl, Quantity, Text};
use serde::{Deserialize, Deserializer, Serialize};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

#[derive(Clone, Debug, Serialize, sqlx::FromRow, utoipa::ToSchema)]
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

/// `Some(None)` for an explicit `null`, `None` when the field is absent.
fn explicit_null<'de, D, T>(de: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(de).map(Some)
}

/// Body of create and update. On update, an absent field stays as it is and `null` clears it.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
pub struct FacilityInput {
    /// The CRM's facility id (unique per company together with `source_system`).
    #[serde(default, deserialize_with = "explicit_null")]
    #[schema(value_type = Option<Text<200>>)]
    pub external_id: Option<Option<Text<200>>>,
    /// Free-form label of the originating system.
    #[serde(default, deserialize_with = "explicit_null")]
    #[schema(value_type = Option<Text<100>>)]
    pub source_system: Option<Option<Text<100>>>,
    /// Name, unique within the company: required on creation, never cleared.
    #[serde(default, deserialize_with = "explicit_null")]
    #[schema(value_type = Option<Text<200>>)]
    pub name: Option<Option<Text<200>>>,
    /// Postal address.
    #[serde(default, deserialize_with = "explicit_null")]
    #[schema(value_type = Option<Text<500>>)]
    pub address: Option<Option<Text<500>>>,
    /// The facility's website.
    #[serde(default, deserialize_with = "explicit_null")]
    #[schema(value_type = Option<HttpUrl>)]
    pub website_url: Option<Option<HttpUrl>>,
    /// Rentable area in square feet.
    #[serde(default, deserialize_with = "explicit_null")]
    #[schema(value_type = Option<Quantity>)]
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

fn not_found(id: Uuid) -> Error {
    Error::not_found(format!("no facility with id {id}"))
}

/// A 404 unless the facility is the company's: routes that take a facility id and a body call
/// it before reading the body, so a foreign or unknown facility is a 404 whatever the body is.
/// One short query on the pool; no connection is kept.
pub async fn ensure_owned(pool: &PgPool, company_id: Uuid, id: Uuid) -> Result<()> {
    let found = sqlx::query_scalar!(
        "SELECT id FROM facilities WHERE company_id = $1 AND id = $2",
        company_id,
        id
    )
    .fetch_optional(pool)
    .await?;
    found.map(|_| ()).ok_or_else(|| not_found(id))
}

pub async fn list(pool: &PgPool, company_id: Uuid) -> Result<Vec<Facility>> {
    Ok(sqlx::query_as!(
        Facility,
        r#"SELECT f.id, f.external_id, f.source_system, f.name, f.address, f.website_url, f.rentable_sqft,
                  f.created_at, f.updated_at,
                  (SELECT max(s.snapshot_date) FROM sync_records s WHERE s.facility_id = f.id) AS last_sync_date
           FROM facilities f WHERE f.company_id = $1 ORDER BY lower(f.name), f.id"#,
        company_id
    )
    .fetch_all(pool)
    .await?)
}

pub async fn get(pool: &PgPool, company_id: Uuid, id: Uuid) -> Result<Facility> {
    sqlx::query_as!(
        Facility,
        r#"SELECT f.id, f.external_id, f.source_system, f.name, f.address, f.website_url, f.rentable_sqft,
                  f.created_at, f.updated_at,
                  (SELECT max(s.snapshot_date) FROM sync_records s WHERE s.facility_id = f.id) AS last_sync_date
           FROM facilities f WHERE f.company_id = $1 AND f.id = $2"#,
        company_id,
        id
    )
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| not_found(id))
}

fn flat<T>(v: Option<Option<T>>) -> Option<T> {
    v.flatten()
}

pub async fn create(pool: &PgPool, company_id: Uuid, input: FacilityInput) -> Result<Facility> {
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
        company_id,
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
    get(pool, company_id, id).await
}

pub async fn update(
    pool: &PgPool,
    company_id: Uuid,
    id: Uuid,
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
        company_id,
        id,
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
pub async fn delete(pool: &PgPool, company_id: Uuid, id: Uuid) -> Result<()> {
    let deleted = sqlx::query!(
        "DELETE FROM facilities WHERE company_id = $1 AND id = $2",
        company_id,
        id
    )
    .execute(pool)
    .await?;
    if deleted.rows_affected() == 0 {
        return Err(not_found(id));
    }
    Ok(())
}

/// The facility a sync names, and whether it was created by this call.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub id: Uuid,
    pub name: String,
    pub rentable_sqft: Option<f64>,
    pub created: bool,
    /// The payload's `id` when it named no facility of the company and the other fields
    /// matched (or created) this one instead.
    pub unmatched_id: Option<Uuid>,
}

/// Finds the facility a sync payload names, in the order of the interface: `id`, then
/// `external_id` with `source_system`, then `name` (case-insensitive); creates it when nothing
/// matches and a name is given. A payload `id` that names no facility of the company falls
/// through to the other fields (the caller reports it, see [`Resolved::unmatched_id`]); with no
/// other field to match it is a 404. Runs inside the caller's
/// transaction; a concurrent creation of the same facility is resolved by the unique indexes.
pub async fn resolve_for_sync(
    conn: &mut PgConnection,
    company_id: Uuid,
    r: &domain::sync::payload::FacilityRef,
) -> Result<Resolved> {
    let ext = r.external_id.as_ref().map(Text::as_str);
    let src = r.source_system.as_ref().map(Text::as_str);
    let name = r.name.as_ref().map(Text::as_str);
    if r.id.is_none() && ext.is_none() && name.is_none() {
        return Err(ValidationError::new(
            "facility",
            "must identify a facility by id, external_id (with source_system) or name",
        )
        .into());
    }
    // Two passes: a creation that loses a race to a concurrent creation finds the winner's row.
    for _ in 0..2 {
        if let Some(found) = find_for_sync(conn, company_id, r.id, ext, src, name).await? {
            let sqft = update_from_sync(conn, found.0, r).await?;
            return Ok(Resolved {
                id: found.0,
                name: found.1,
                rentable_sqft: sqft,
                created: false,
                unmatched_id: r.id.filter(|id| *id != found.0),
            });
        }
        let Some(name) = name else {
            return Err(ValidationError::new(
                "facility",
                "matches no facility, and a new facility needs a name",
            )
            .into());
        };
        let id = Uuid::now_v7();
        let inserted = sqlx::query_scalar!(
            "INSERT INTO facilities (id, company_id, external_id, source_system, name, address, website_url, rentable_sqft)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT DO NOTHING RETURNING id",
            id,
            company_id,
            ext,
            ext.and(src),
            name,
            r.address.as_ref().map(Text::as_str),
            r.website_url.as_ref().map(HttpUrl::as_str),
            r.rentable_sqft.map(Quantity::get),
        )
        .fetch_optional(&mut *conn)
        .await?;
        if inserted.is_some() {
            return Ok(Resolved {
                id,
                name: name.to_owned(),
                rentable_sqft: r.rentable_sqft.map(Quantity::get),
                created: true,
                unmatched_id: r.id,
            });
        }
    }
    Err(Error::Conflict(
        "the facility changed while this sync was matching it; send the sync again".to_owned(),
    ))
}

async fn find_for_sync(
    conn: &mut PgConnection,
    company_id: Uuid,
    id: Option<Uuid>,
    ext: Option<&str>,
    src: Option<&str>,
    name: Option<&str>,
) -> Result<Option<(Uuid, String)>> {
    if let Some(id) = id {
        let row = sqlx::query!(
            "SELECT id, name FROM facilities WHERE company_id = $1 AND id = $2",
            company_id,
            id
        )
        .fetch_optional(&mut *conn)
        .await?;
        match row {
            Some(r) => return Ok(Some((r.id, r.name))),
            // Nothing else to match by: the id was the whole identification.
            None if ext.is_none() && name.is_none() => return Err(not_found(id)),
            None => {}
        }
    }
    if let Some(ext) = ext {
        let row = sqlx::query!(
            "SELECT id, name FROM facilities
             WHERE company_id = $1 AND coalesce(source_system, '') = coalesce($2, '') AND external_id = $3",
            company_id,
            src,
            ext
        )
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(r) = row {
            return Ok(Some((r.id, r.name)));
        }
    }
    if let Some(name) = name {
        let row = sqlx::query!(
            "SELECT id, name FROM facilities WHERE company_id = $1 AND lower(name) = lower($2)",
            company_id,
            name
        )
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(r) = row {
            return Ok(Some((r.id, r.name)));
        }
    }
    Ok(None)
}

/// Applies the descriptive fields a sync carries (address, website, area) and adopts the CRM's
/// external id when the facility has none yet; writes only when something changes. Returns the
/// facility's rentable area after the update.
async fn update_from_sync(
    conn: &mut PgConnection,
    id: Uuid,
    r: &domain::sync::payload::FacilityRef,
) -> Result<Option<f64>> {
    let ext = r.external_id.as_ref().map(Text::as_str);
    let src = r.source_system.as_ref().map(Text::as_str);
    let addr = r.address.as_ref().map(Text::as_str);
    let url = r.website_url.as_ref().map(HttpUrl::as_str);
    let sqft = r.rentable_sqft.map(Quantity::get);
    if ext.is_none() && addr.is_none() && url.is_none() && sqft.is_none() {
        return Ok(
            sqlx::query_scalar!("SELECT rentable_sqft FROM facilities WHERE id = $1", id)
                .fetch_one(&mut *conn)
                .await?,
        );
    }
    let row = sqlx::query!(
        r#"WITH cur AS (SELECT * FROM facilities WHERE id = $1),
           upd AS (
             UPDATE facilities f SET
               external_id   = coalesce(f.external_id, $2),
               source_system = CASE WHEN f.external_id IS NULL AND $2::text IS NOT NULL THEN $3 ELSE f.source_system END,
               address       = coalesce($4, f.address),
               website_url   = coalesce($5, f.website_url),
               rentable_sqft = coalesce($6, f.rentable_sqft),
               updated_at    = now()
             FROM cur
             WHERE f.id = cur.id AND (
               (cur.external_id IS NULL AND $2::text IS NOT NULL)
               OR cur.address IS DISTINCT FROM coalesce($4, cur.address)
               OR cur.website_url IS DISTINCT FROM coalesce($5, cur.website_url)
               OR cur.rentable_sqft IS DISTINCT FROM coalesce($6, cur.rentable_sqft))
             RETURNING f.rentable_sqft)
           SELECT coalesce((SELECT rentable_sqft FROM upd), (SELECT rentable_sqft FROM cur)) AS rentable_sqft"#,
        id,
        ext,
        src,
        addr,
        url,
        sqft
    )
    .fetch_one(&mut *conn)
    .await
    .map_err(name_conflict)?;
    Ok(row.rentable_sqft)
}
