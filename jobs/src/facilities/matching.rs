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
    /// The details the payload would have changed and did not, its sender not being allowed to
    /// (`address`, `website_url`, `rentable_sqft`, `external_id`).
    pub ignored: Vec<&'static str>,
}

/// Who sends a snapshot, as matching sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sender<'a> {
    /// The facilities it may match: `None` for all of the company's. A sender limited to some
    /// matches only among them and never creates one, so whether a name or an external id
    /// belongs to a facility outside its scope never shows in the answer.
    pub scope: Option<&'a [Uuid]>,
    /// Whether it may change a facility's details (the role `PUT /api/v1/facilities/{id}`
    /// needs); without it they are left alone and named in [`Resolved::ignored`].
    pub edits: bool,
}

impl Sender<'_> {
    /// The service, a CRM connection, an upload: every facility, details applied.
    pub(crate) const ANY: Sender<'static> = Sender {
        scope: None,
        edits: true,
    };
}

/// What a scoped sender is told when the snapshot matches none of its facilities, whether or
/// not it names one outside them.
pub(crate) const OUTSIDE_SCOPE: &str =
    "the snapshot's facility is not one of the facilities this key or member may see";

/// Finds the facility a sync payload names, in the order of the interface: `id`, then
/// `external_id` with `source_system`, then `name` (case-insensitive); creates it when nothing
/// matches and a name is given. A payload `id` that names no facility of the company falls
/// through to the other fields (the caller reports it, see [`Resolved::unmatched_id`]); with no
/// other field to match it is a 404. Runs inside the caller's
/// transaction; a concurrent creation of the same facility is resolved by the unique indexes.
/// (The demo seed's; a sync resolves through [`resolve_for_sender`].)
#[cfg(feature = "demo-seed")]
pub(crate) async fn resolve_for_sync(
    conn: &mut PgConnection,
    company_id: CompanyId,
    r: &domain::sync::payload::FacilityRef,
) -> Result<Resolved> {
    resolve_for_sender(conn, company_id, r, Sender::ANY).await
}

/// The facility a snapshot is for, as `resolve_for_sync` finds it, for a `sender` that may be
/// limited to some facilities (it matches only among them and creates none) or may not change
/// their details (left alone, named in [`Resolved::ignored`]).
pub(crate) async fn resolve_for_sender(
    conn: &mut PgConnection,
    company_id: CompanyId,
    r: &domain::sync::payload::FacilityRef,
    sender: Sender<'_>,
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
        let keys = Keys {
            id: r.id,
            ext,
            src,
            name,
        };
        if let Some(found) = find_for_sync(conn, company_id, &keys, sender.scope).await? {
            let (sqft, ignored) = if sender.edits {
                (update_from_sync(conn, found.0, r).await?, vec![])
            } else {
                left_alone(conn, found.0, r).await?
            };
            return Ok(Resolved {
                id: found.0,
                name: found.1,
                rentable_sqft: sqft,
                created: false,
                unmatched_id: r.id.filter(|id| *id != found.0),
                ignored,
            });
        }
        if sender.scope.is_some() {
            return Err(Error::not_found(OUTSIDE_SCOPE));
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
                ignored: vec![],
            });
        }
    }
    Err(Error::Conflict(
        "the facility changed while this sync was matching it; send the sync again".to_owned(),
    ))
}

/// What a snapshot identifies its facility by.
struct Keys<'a> {
    id: Option<Uuid>,
    ext: Option<&'a str>,
    src: Option<&'a str>,
    name: Option<&'a str>,
}

/// The facility the keys match, in the interface's order, among the company's facilities in
/// `scope` (all of them when `None`).
async fn find_for_sync(
    conn: &mut PgConnection,
    company_id: CompanyId,
    k: &Keys<'_>,
    scope: Option<&[Uuid]>,
) -> Result<Option<(Uuid, String)>> {
    let (ext, src, name) = (k.ext, k.src, k.name);
    if let Some(id) = k.id {
        let row = sqlx::query!(
            "SELECT id, name FROM facilities
             WHERE company_id = $1 AND id = $2 AND ($3::uuid[] IS NULL OR id = ANY($3))",
            company_id.uuid(),
            id,
            scope as Option<&[Uuid]>
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
             WHERE company_id = $1 AND coalesce(source_system, '') = coalesce($2, '') AND external_id = $3
               AND ($4::uuid[] IS NULL OR id = ANY($4))",
            company_id.uuid(),
            src,
            ext,
            scope as Option<&[Uuid]>
        )
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(r) = row {
            return Ok(Some((r.id, r.name)));
        }
    }
    if let Some(name) = name {
        let row = sqlx::query!(
            "SELECT id, name FROM facilities WHERE company_id = $1 AND lower(name) = lower($2)
               AND ($3::uuid[] IS NULL OR id = ANY($3))",
            company_id.uuid(),
            name,
            scope as Option<&[Uuid]>
        )
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(r) = row {
            return Ok(Some((r.id, r.name)));
        }
    }
    Ok(None)
}

/// The details a sync carries that differ from the facility's, for a sender that may not change
/// them: nothing is written. Returns the facility's rentable area and the fields left alone.
async fn left_alone(
    conn: &mut PgConnection,
    id: Uuid,
    r: &domain::sync::payload::FacilityRef,
) -> Result<(Option<f64>, Vec<&'static str>)> {
    let cur = sqlx::query!(
        "SELECT external_id, address, website_url, rentable_sqft FROM facilities WHERE id = $1",
        id
    )
    .fetch_one(&mut *conn)
    .await?;
    let differs = |sent: Option<&str>, stored: Option<&str>| sent.is_some() && sent != stored;
    let mut ignored = vec![];
    // An external id is only ever adopted by a facility that has none.
    if r.external_id.is_some() && cur.external_id.is_none() {
        ignored.push("external_id");
    }
    if differs(r.address.as_ref().map(Text::as_str), cur.address.as_deref()) {
        ignored.push("address");
    }
    let url = r.website_url.as_ref().map(HttpUrl::as_str);
    if differs(url, cur.website_url.as_deref()) {
        ignored.push("website_url");
    }
    let sqft = r.rentable_sqft.map(Quantity::get);
    if sqft.is_some() && sqft != cur.rentable_sqft {
        ignored.push("rentable_sqft");
    }
    Ok((cur.rentable_sqft, ignored))
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
