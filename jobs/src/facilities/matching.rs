//! Which facility a snapshot is for: matched by id, external id and source system, or name,
//! created from the name when nothing matches, and its details refreshed from the snapshot.

use super::{name_conflict, not_found};
use crate::error::{Error, Result, ValidationError};
use domain::ids::CompanyId;
use domain::values::{HttpUrl, Quantity, Text};
use sqlx::PgConnection;
use uuid::Uuid;

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
pub(crate) async fn resolve_for_sync(
    conn: &mut PgConnection,
    company_id: CompanyId,
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
            company_id.uuid(),
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
    company_id: CompanyId,
    id: Option<Uuid>,
    ext: Option<&str>,
    src: Option<&str>,
    name: Option<&str>,
) -> Result<Option<(Uuid, String)>> {
    if let Some(id) = id {
        let row = sqlx::query!(
            "SELECT id, name FROM facilities WHERE company_id = $1 AND id = $2",
            company_id.uuid(),
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
            company_id.uuid(),
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
            company_id.uuid(),
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
