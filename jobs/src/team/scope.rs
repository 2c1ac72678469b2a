//! The facility scope of a member, an invitation or an API key: checked in one place so every
//! way of granting access limits it by the same rules.

use crate::access::{Role, Scope};
use crate::error::{Result, ValidationError};
use domain::ids::CompanyId;
use sqlx::PgConnection;
use uuid::Uuid;

/// Most facilities in one scope.
pub const MAX_SCOPE: usize = 1_000;

/// Those of `ids` that are facilities of the company.
pub(super) async fn known_facilities(
    conn: &mut PgConnection,
    company: CompanyId,
    ids: &[Uuid],
) -> Result<Vec<Uuid>> {
    Ok(sqlx::query_scalar!(
        r#"SELECT id AS "id!" FROM facilities WHERE company_id = $1 AND id = ANY($2)"#,
        company.uuid(),
        ids
    )
    .fetch_all(conn)
    .await?)
}

/// Checks a requested scope: `None` is every facility; a list must be of managers or viewers,
/// not empty, at most [`MAX_SCOPE`] long, and name only facilities of the company.
pub(crate) async fn check_scope(
    conn: &mut PgConnection,
    company: CompanyId,
    role: Role,
    facility_ids: Option<Vec<Uuid>>,
) -> Result<Scope> {
    let Some(mut ids) = facility_ids else {
        return Ok(Scope::All);
    };
    if !role.may_be_scoped() {
        return Err(ValidationError::new(
            "facility_ids",
            format!("limits managers and viewers only: an {role} sees every facility"),
        )
        .into());
    }
    ids.sort();
    ids.dedup();
    if ids.is_empty() || ids.len() > MAX_SCOPE {
        return Err(ValidationError::new(
            "facility_ids",
            format!("must list 1 to {MAX_SCOPE} facilities (leave it out for every facility)"),
        )
        .into());
    }
    let known = known_facilities(conn, company, &ids).await?;
    if let Some(missing) = ids.iter().find(|id| !known.contains(id)) {
        return Err(
            ValidationError::new("facility_ids", format!("no facility with id {missing}")).into(),
        );
    }
    Ok(Scope::Only(ids))
}
