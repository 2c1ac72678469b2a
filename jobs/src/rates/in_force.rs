//! What is in force: each unit type's latest decision and whether a snapshot shows its
//! approved rate yet, as the rates page, the CSV export and the next run read it.

use super::Status;
use crate::actor::Actor;
use crate::error::Result;
use chrono::{DateTime, NaiveDate, Utc};
use domain::ids::{CompanyId, FacilityId};
use domain::pricing::decisions;
use domain::values::Currency;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// The decision in force of a unit type (its latest), with where its approved rate stands as
/// of a snapshot date.
#[derive(Clone, Debug)]
pub struct InForce {
    pub id: Uuid,
    pub size: String,
    pub tier: String,
    pub action: String,
    pub rate: Option<f64>,
    pub decided_at: DateTime<Utc>,
    pub actor: Actor,
    /// `None` for a rejection (nothing approved).
    pub status: Option<Status>,
}

impl InForce {
    /// The UTC day of the decision.
    pub fn decided_on(&self) -> NaiveDate {
        self.decided_at.date_naive()
    }
}

/// The decision in force of each unit type of the facility, with its status as of the
/// snapshot of `as_of` (snapshots after it are not counted).
pub(crate) async fn in_force(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    as_of: NaiveDate,
) -> Result<Vec<InForce>> {
    let rows = sqlx::query!(
        // The latest decision of each unit type first, then the one snapshot lookup each.
        r#"SELECT d.id AS "id!", d.size AS "size!", d.tier AS "tier!", d.action AS "action!",
                  d.rate, d.decided_at AS "decided_at!", d.actor AS "actor!",
                  (SELECT min(u.snapshot_date) FROM sync_unit_types u
                   WHERE u.facility_id = $1 AND u.size = d.size AND u.tier = d.tier
                     AND u.snapshot_date >= (d.decided_at AT TIME ZONE 'UTC')::date
                     AND u.snapshot_date <= $2
                     AND abs(u.street_rate - d.rate) < 0.005) AS shown_on
           FROM (SELECT DISTINCT ON (size, tier) id, size, tier, action, rate, decided_at, actor
                 FROM rate_decisions WHERE facility_id = $1
                 ORDER BY size, tier, decided_at DESC, id DESC) d"#,
        facility_id.uuid(),
        as_of
    )
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let decided_on = r.decided_at.date_naive();
            InForce {
                status: r
                    .rate
                    .map(|_| decisions::status(decided_on, r.shown_on, Some(as_of))),
                id: r.id,
                size: r.size,
                tier: r.tier,
                action: r.action,
                rate: r.rate,
                decided_at: r.decided_at,
                actor: Actor::from_json(&r.actor),
            }
        })
        .collect())
}

/// The approved rates of the facility still waiting, as of the snapshot of `as_of`, to appear
/// in a snapshot: where the next run starts from.
pub(crate) async fn pending(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    as_of: NaiveDate,
) -> Result<Vec<InForce>> {
    Ok(in_force(conn, facility_id, as_of)
        .await?
        .into_iter()
        .filter(|d| d.status == Some(Status::Pending) && d.rate.is_some())
        .collect())
}

/// One unit type of the facility's latest snapshot: the rate in force and the approved rate.
#[derive(Clone, Debug)]
pub struct RateLine {
    pub size: String,
    pub tier: String,
    /// The street rate of the latest snapshot.
    pub rate_in_force: f64,
    /// The unit type's units and occupied units in the latest snapshot, where it sent them.
    pub total_units: Option<i32>,
    pub occupied_units: Option<i32>,
    /// The latest approved rate (accepted or overridden) when the unit type's latest decision
    /// approved one; its status says whether a snapshot shows it yet.
    pub approved: Option<InForce>,
}

/// The rates of a facility: in force and approved.
#[derive(Clone, Debug)]
pub struct Rates {
    pub facility_id: Uuid,
    pub facility_name: String,
    /// The company's currency (the CSV writes its minor units).
    pub currency: Currency,
    /// The latest snapshot's date; `None` without snapshots.
    pub snapshot_date: Option<NaiveDate>,
    pub rates: Vec<RateLine>,
}

impl Rates {
    /// The lines whose approved rate waits to appear in a snapshot (what a PMS is to set).
    pub fn pending(&self) -> impl Iterator<Item = (&RateLine, &InForce)> {
        self.rates.iter().filter_map(|l| {
            l.approved
                .as_ref()
                .filter(|a| a.status == Some(Status::Pending))
                .map(|a| (l, a))
        })
    }
}

/// The facility's rates in force and approved (404 for another company's facility).
pub async fn rates(pool: &PgPool, company_id: CompanyId, facility_id: FacilityId) -> Result<Rates> {
    let mut conn = pool.acquire().await?;
    load(&mut conn, company_id, facility_id).await
}

/// [`rates`] on the caller's connection.
pub(crate) async fn load(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<Rates> {
    let facility_name = crate::facilities::name_of(conn, company_id, facility_id).await?;
    let currency = crate::tenancy::currency_of(conn, company_id).await?;
    let units = sqlx::query!(
        "SELECT u.snapshot_date, u.size, u.tier, u.street_rate, u.total_units, u.occupied_units
         FROM sync_unit_types u
         WHERE u.sync_id = (SELECT id FROM sync_records WHERE facility_id = $1
                            ORDER BY snapshot_date DESC LIMIT 1)
         ORDER BY u.width_ft * u.depth_ft, u.size, u.tier",
        facility_id.uuid()
    )
    .fetch_all(&mut *conn)
    .await?;
    let Some(snapshot_date) = units.first().map(|u| u.snapshot_date) else {
        return Ok(Rates {
            facility_id: facility_id.uuid(),
            facility_name,
            currency,
            snapshot_date: None,
            rates: Vec::new(),
        });
    };
    let mut decided = in_force(conn, facility_id, snapshot_date).await?;
    let rates = units
        .into_iter()
        .map(|u| {
            let approved = decided
                .iter()
                .position(|d| d.size == u.size && d.tier == u.tier)
                .map(|i| decided.swap_remove(i))
                .filter(|d| d.rate.is_some());
            RateLine {
                size: u.size,
                tier: u.tier,
                rate_in_force: u.street_rate,
                total_units: u.total_units,
                occupied_units: u.occupied_units,
                approved,
            }
        })
        .collect();
    Ok(Rates {
        facility_id: facility_id.uuid(),
        facility_name,
        currency,
        snapshot_date: Some(snapshot_date),
        rates,
    })
}
