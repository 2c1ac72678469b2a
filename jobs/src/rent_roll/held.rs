//! Rolls held back. A roll that would move out more than the facility's share of the tenants
//! in force (`facilities.move_out_hold_pct`, 20 % unless set) is not applied: one CRM night
//! that sends `tenants: []` would otherwise record every tenant as moved out, and the events,
//! the increases' outcomes and what the ECRI engine learns from them would follow. The roll is
//! kept in `held_rolls` (one per facility, the latest) and the rest of its snapshot is stored as
//! usual. It is applied when someone confirms it ([`confirm`]); a later roll that is within the
//! share is applied as any roll and drops it. The same shrink sent again stays held: a feed
//! that is broken tends to stay broken the same way, so repetition proves nothing.

use super::{apply_checked, Guard, RollOutcome};
use crate::actor::Actor;
use crate::audit::{self, By, Change};
use crate::door::{self, Committed, Jobs, Who};
use crate::error::{Error, Result, ValidationError};
use chrono::{DateTime, NaiveDate, Utc};
use domain::ids::{CompanyId, FacilityId};
use domain::sync::payload::RollTenant;
use serde::Serialize;
use serde_json::json;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// The share of the tenants in force a roll may move out unless the facility says otherwise.
pub const DEFAULT_HOLD_PCT: f64 = 20.0;
/// A roll moving out fewer tenants than this is never held: at a handful of tenants a share says
/// little (one of four is 25 %), and the harm a wrong roll does grows with what it moves out.
pub const MIN_MOVE_OUTS_HELD: usize = 5;

/// Why a roll was held, as the answer of its sync and the facility's state say it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hold {
    pub roll_date: NaiveDate,
    /// Tenants in the held roll.
    pub tenants: usize,
    /// Tenants in force when it was held.
    pub in_force: usize,
    /// How many of them it would move out.
    pub moving_out: usize,
    /// The facility's share in force then (percent).
    pub hold_pct: f64,
}

impl Hold {
    /// The sync's warning for a held roll.
    pub fn warning(&self, facility_id: Uuid) -> String {
        format!(
            "tenants: the roll was held, not applied: it would move out {} of the {} tenants in \
             force, more than the facility's {} %; the roll in force stays until the roll is \
             confirmed (POST /api/v1/facilities/{facility_id}/rent-roll/confirm, or the \
             facility's page) or a later roll within the share replaces it",
            self.moving_out, self.in_force, self.hold_pct
        )
    }
}

/// Whether moving out `moving_out` of `in_force` tenants needs a confirmation at `hold_pct`.
pub(super) fn exceeds(moving_out: usize, in_force: usize, hold_pct: f64) -> bool {
    moving_out >= MIN_MOVE_OUTS_HELD && moving_out as f64 > hold_pct / 100.0 * in_force as f64
}

fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Keeps `roll` as the facility's held roll, unless a later one is held already, and records
/// the hold in the audit log as the service's (the sync that sent it has its own entry in the
/// same transaction).
pub(super) async fn hold(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: Uuid,
    roll: &[RollTenant],
    h: &Hold,
) -> Result<()> {
    let tenants = serde_json::to_value(roll)
        .map_err(|e| Error::Internal(format!("a held roll could not be encoded: {e}")))?;
    sqlx::query!(
        "INSERT INTO held_rolls (facility_id, company_id, roll_date, tenants, tenant_count,
             in_force, moving_out, hold_pct)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (facility_id) DO UPDATE SET
             roll_date = EXCLUDED.roll_date, tenants = EXCLUDED.tenants,
             tenant_count = EXCLUDED.tenant_count, in_force = EXCLUDED.in_force,
             moving_out = EXCLUDED.moving_out, hold_pct = EXCLUDED.hold_pct, held_at = now()
         WHERE held_rolls.roll_date <= EXCLUDED.roll_date",
        facility_id,
        company_id.uuid(),
        h.roll_date,
        tenants,
        count(h.tenants),
        count(h.in_force),
        count(h.moving_out),
        h.hold_pct,
    )
    .execute(&mut *conn)
    .await?;
    let change = Change::new("rent_roll.hold")
        .target("facility", facility_id)
        .facility(facility_id)
        .values(None, Some(json!(h)));
    let guard = Actor::system("rent roll guard");
    let by = By {
        actor: &guard,
        role: None,
        via: Some(crate::door::Via::Service),
        client_addr: None,
    };
    audit::record(&mut *conn, company_id, &by, &change).await
}

/// Drops a held roll of `date` or earlier: a roll of that date or later has been applied.
pub(super) async fn release_up_to(
    conn: &mut PgConnection,
    facility_id: Uuid,
    date: NaiveDate,
) -> Result<()> {
    sqlx::query!(
        "DELETE FROM held_rolls WHERE facility_id = $1 AND roll_date <= $2",
        facility_id,
        date
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// A facility's rent roll at a glance: the roll in force, the share setting and a held roll.
#[derive(Clone, Debug, Serialize)]
pub struct RollState {
    pub roll_date: Option<NaiveDate>,
    pub tenants_in_force: i64,
    pub move_out_hold_pct: f64,
    pub held: Option<HeldRoll>,
}

/// A held roll as stored.
#[derive(Clone, Debug, Serialize)]
pub struct HeldRoll {
    pub roll_date: NaiveDate,
    pub tenants: i32,
    pub in_force: i32,
    pub moving_out: i32,
    pub hold_pct: f64,
    pub held_at: DateTime<Utc>,
}

/// The facility's rent roll state (404 for another company's or an unknown facility).
pub async fn state(pool: &PgPool, company_id: CompanyId, id: FacilityId) -> Result<RollState> {
    let r = sqlx::query!(
        r#"SELECT f.rent_roll_date, f.move_out_hold_pct,
                  (SELECT count(*) FROM rent_roll_tenants t
                   WHERE t.facility_id = f.id AND t.moved_out_on IS NULL) AS "in_force!",
                  h.roll_date AS "h_date?", h.tenant_count AS "h_tenants?",
                  h.in_force AS "h_in_force?", h.moving_out AS "h_out?", h.hold_pct AS "h_pct?",
                  h.held_at AS "h_at?"
           FROM facilities f LEFT JOIN held_rolls h ON h.facility_id = f.id
           WHERE f.company_id = $1 AND f.id = $2"#,
        company_id.uuid(),
        id.uuid()
    )
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::not_found(format!("no facility with id {id}")))?;
    let held = match (
        r.h_date,
        r.h_tenants,
        r.h_in_force,
        r.h_out,
        r.h_pct,
        r.h_at,
    ) {
        (Some(roll_date), Some(tenants), Some(in_force), Some(moving_out), Some(pct), Some(at)) => {
            Some(HeldRoll {
                roll_date,
                tenants,
                in_force,
                moving_out,
                hold_pct: pct,
                held_at: at,
            })
        }
        _ => None,
    };
    Ok(RollState {
        roll_date: r.rent_roll_date,
        tenants_in_force: r.in_force,
        move_out_hold_pct: r.move_out_hold_pct,
        held,
    })
}

/// Applies the facility's held roll as confirmed by `who`, against the roll in force now (404
/// when none is held). Recorded as `rent_roll.confirm`.
pub async fn confirm(pool: &PgPool, who: &Who, id: FacilityId) -> Result<Committed<RollOutcome>> {
    let mut tx = pool.begin().await?;
    // The facility's row first, as a push takes it: a confirmation and a push wait on each
    // other instead of deadlocking.
    let found = sqlx::query_scalar!(
        "SELECT id FROM facilities WHERE company_id = $1 AND id = $2 FOR NO KEY UPDATE",
        who.company.uuid(),
        id.uuid()
    )
    .fetch_optional(&mut *tx)
    .await?;
    if found.is_none() {
        return Err(Error::not_found(format!("no facility with id {id}")));
    }
    let held = sqlx::query!(
        "SELECT roll_date, tenants FROM held_rolls WHERE facility_id = $1",
        id.uuid()
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| Error::not_found("no rent roll is held for this facility"))?;
    let roll: Vec<RollTenant> = serde_json::from_value(held.tenants)
        .map_err(|e| Error::Internal(format!("a held roll does not read: {e}")))?;
    let out = apply_checked(
        &mut tx,
        who.company,
        id.uuid(),
        held.roll_date,
        &roll,
        Guard::Confirmed,
    )
    .await?;
    let change = Change::new("rent_roll.confirm")
        .target("facility", id)
        .facility(id.uuid())
        .values(
            None,
            Some(json!({
                "roll_date": held.roll_date, "tenants": out.tenants, "moved_in": out.moved_in,
                "moved_out": out.moved_out, "rent_changed": out.rent_changed,
            })),
        );
    door::commit(tx, who, change, out, Jobs::none()).await
}

/// Sets the facility's share (0 to 100 percent; 100 never holds). Recorded as
/// `rent_roll_settings.update` with the share before and after.
pub async fn set_hold_pct(
    pool: &PgPool,
    who: &Who,
    id: FacilityId,
    pct: f64,
) -> Result<Committed<f64>> {
    if !(0.0..=100.0).contains(&pct) {
        return Err(ValidationError::new("move_out_hold_pct", "must be between 0 and 100").into());
    }
    let mut tx = pool.begin().await?;
    let before = sqlx::query_scalar!(
        "SELECT move_out_hold_pct FROM facilities WHERE company_id = $1 AND id = $2
         FOR NO KEY UPDATE",
        who.company.uuid(),
        id.uuid()
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| Error::not_found(format!("no facility with id {id}")))?;
    sqlx::query!(
        "UPDATE facilities SET move_out_hold_pct = $2 WHERE id = $1",
        id.uuid(),
        pct
    )
    .execute(&mut *tx)
    .await?;
    let change = Change::new("rent_roll_settings.update")
        .target("facility", id)
        .facility(id.uuid())
        .values(
            Some(json!({ "move_out_hold_pct": before })),
            Some(json!({ "move_out_hold_pct": pct })),
        );
    door::commit(tx, who, change, pct, Jobs::none()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_roll_is_held_past_the_share_and_the_floor() {
        assert!(exceeds(10, 10, 20.0));
        assert!(exceeds(7, 10, 20.0));
        assert!(!exceeds(2, 10, 20.0), "20 % is within the share");
        assert!(!exceeds(1, 10, 20.0));
        assert!(!exceeds(4, 4, 20.0), "under the floor");
        assert!(!exceeds(100, 100, 100.0), "100 % never holds");
        assert!(exceeds(5, 100, 0.0));
    }
}
