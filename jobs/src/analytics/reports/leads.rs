//! `GET /api/v1/analytics/leads`: the lead funnel over the last 30 or 90 days of data.
//!
//! The period ends at the latest snapshot in scope (`as_of`) and covers `days` snapshot dates
//! back from it; the previous period is the `days` before that, and says how many of its days
//! lie on or after the first data in scope (a previous period before the data began is not a
//! full one to compare with). Leads come from the sync's `leads` addition (`sync_leads`),
//! move-ins from the daily move-ins of the same records; the conversion counts only the
//! move-ins of the facility-days that sent leads, and the report says how many facilities did.

use crate::access::Scope;
use crate::error::Result;
use chrono::{Duration, NaiveDate};
use domain::analytics::leads::{funnel, ChannelLeads, Funnel};
use domain::ids::{CompanyId, FacilityId};
use serde::Serialize;
use sqlx::PgPool;
use uuid::Uuid;

#[derive(Debug, Serialize)]
pub struct Report {
    pub facility_id: Option<Uuid>,
    pub period: String,
    pub as_of: Option<NaiveDate>,
    pub period_start: Option<NaiveDate>,
    pub previous_period_start: Option<NaiveDate>,
    #[serde(flatten)]
    pub funnel: Funnel,
    /// Snapshots in the period, and how many of them carried daily move-ins.
    pub snapshots: i64,
    pub snapshots_with_move_ins: i64,
    /// Snapshots in the period that sent leads.
    pub snapshots_with_leads: i64,
    /// Facilities with a snapshot in the period, and how many of them sent leads.
    pub facilities_reporting: i64,
    pub facilities_with_leads: i64,
    /// Days of the period, and of the previous period, on or after the first data in scope:
    /// less than `days` when the period reaches back before it.
    pub period_days_covered: i64,
    pub previous_period_days_covered: i64,
    pub per_channel_conversion: &'static str,
    pub reason: Option<String>,
}

/// Said on every report: a move-in does not record the lead it came from.
const PER_CHANNEL_NOTE: &str =
    "per-channel conversion is not measured: a move-in does not record which lead it came from";

/// The days a report covers: the period ends at `as_of`, the previous one ends the day before
/// `start`.
struct Period {
    as_of: NaiveDate,
    start: NaiveDate,
    prev_start: NaiveDate,
}

/// The period's move-ins and how many facilities and snapshots reported them.
struct MoveIns {
    move_ins: i64,
    conversion_move_ins: i64,
    snapshots: i64,
    with_move_ins: i64,
    facilities: i64,
    facilities_with_leads: i64,
    snapshots_with_leads: i64,
}

pub async fn report(
    pool: &PgPool,
    company_id: CompanyId,
    facility: Option<FacilityId>,
    allowed: &Scope,
    days: i64,
) -> Result<Report> {
    let facilities = super::scope(pool, company_id, facility, allowed).await?;
    let ids = super::ids(&facilities);
    let narrowed = super::narrowed(facility, allowed);
    let as_of: Option<NaiveDate> = sqlx::query_scalar!(
        "SELECT max(last_date) FROM facility_months WHERE company_id = $1 AND ($2::uuid IS NULL OR facility_id = $2)
           AND ($3::uuid[] IS NULL OR facility_id = ANY($3))",
        company_id.uuid(),
        facility.map(FacilityId::uuid),
        narrowed.as_deref()
    )
    .fetch_one(pool)
    .await?;
    let period = format!("{days}d");
    let Some(as_of) = as_of else {
        return Ok(no_data(facility, period));
    };
    let start = as_of - Duration::days(days - 1);
    let prev_start = start - Duration::days(days);
    let p = Period {
        as_of,
        start,
        prev_start,
    };
    let channels = channel_leads(pool, company_id, facility, allowed, &ids, &p).await?;
    let m = move_ins(pool, company_id, facility, narrowed.as_deref(), &p).await?;
    let first = first_data(pool, company_id, facility, narrowed.as_deref()).await?;
    let (period_days_covered, previous_period_days_covered) =
        days_covered(first.unwrap_or(as_of), &p, days);
    let f = funnel(
        &channels,
        u64::try_from(m.move_ins).unwrap_or(0),
        u64::try_from(m.conversion_move_ins).unwrap_or(0),
    );
    let reason = (f.total_leads == 0).then(|| {
        "no leads were recorded in the period (leads arrive through the sync's `leads` field)"
            .to_owned()
    });
    Ok(Report {
        facility_id: facility.map(FacilityId::uuid),
        period,
        as_of: Some(as_of),
        period_start: Some(start),
        previous_period_start: Some(prev_start),
        funnel: f,
        snapshots: m.snapshots,
        snapshots_with_move_ins: m.with_move_ins,
        snapshots_with_leads: m.snapshots_with_leads,
        facilities_reporting: m.facilities,
        facilities_with_leads: m.facilities_with_leads,
        period_days_covered,
        previous_period_days_covered,
        per_channel_conversion: PER_CHANNEL_NOTE,
        reason,
    })
}

/// The report of a scope without any sync yet.
fn no_data(facility: Option<FacilityId>, period: String) -> Report {
    Report {
        facility_id: facility.map(FacilityId::uuid),
        period,
        as_of: None,
        period_start: None,
        previous_period_start: None,
        funnel: funnel(&[], 0, 0),
        snapshots: 0,
        snapshots_with_move_ins: 0,
        snapshots_with_leads: 0,
        facilities_reporting: 0,
        facilities_with_leads: 0,
        period_days_covered: 0,
        previous_period_days_covered: 0,
        per_channel_conversion: PER_CHANNEL_NOTE,
        reason: Some("no sync has been received in this scope yet".to_owned()),
    }
}

/// The leads of each channel that had any, in the period and the previous one.
async fn channel_leads(
    pool: &PgPool,
    company_id: CompanyId,
    facility: Option<FacilityId>,
    allowed: &Scope,
    ids: &[Uuid],
    p: &Period,
) -> Result<Vec<ChannelLeads>> {
    let (start, prev_start, as_of) = (p.start, p.prev_start, p.as_of);
    let channel = |channel, leads: i64, previous: i64| ChannelLeads {
        channel,
        leads: u64::try_from(leads).unwrap_or(0),
        previous_period_leads: u64::try_from(previous).unwrap_or(0),
    };
    // Company-wide lead counts from the daily company totals (`company_lead_days`); one
    // facility's, or those of a reader limited to some, from their own rows. Both give the
    // same figures (the triggers keep the totals).
    Ok(match (facility, allowed.is_all()) {
        (None, true) => sqlx::query!(
            r#"SELECT channel,
                      coalesce(sum(leads) FILTER (WHERE snapshot_date >= $2), 0)::int8 AS "leads!",
                      coalesce(sum(leads) FILTER (WHERE snapshot_date < $2), 0)::int8 AS "previous!"
               FROM company_lead_days
               WHERE company_id = $1 AND snapshot_date >= $3 AND snapshot_date <= $4
               GROUP BY channel HAVING sum(leads) > 0"#,
            company_id.uuid(),
            start,
            prev_start,
            as_of
        )
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|r| channel(r.channel, r.leads, r.previous))
        .collect::<Vec<_>>(),
        _ => sqlx::query!(
            r#"SELECT channel,
                      coalesce(sum(lead_count) FILTER (WHERE snapshot_date >= $2), 0)::int8 AS "leads!",
                      coalesce(sum(lead_count) FILTER (WHERE snapshot_date < $2), 0)::int8 AS "previous!"
               FROM sync_leads
               WHERE facility_id = ANY($1) AND snapshot_date >= $3 AND snapshot_date <= $4
               GROUP BY channel HAVING sum(lead_count) > 0"#,
            ids,
            start,
            prev_start,
            as_of
        )
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|r| channel(r.channel, r.leads, r.previous))
        .collect::<Vec<_>>(),
    })
}

/// Move-ins, and those of the facility-days that sent leads (the conversion's numerator),
/// from the daily records of the period.
async fn move_ins(
    pool: &PgPool,
    company_id: CompanyId,
    facility: Option<FacilityId>,
    narrowed: Option<&[Uuid]>,
    p: &Period,
) -> Result<MoveIns> {
    Ok(sqlx::query_as!(
        MoveIns,
        r#"SELECT coalesce(sum(mi), 0)::int8 AS "move_ins!",
                  coalesce(sum(cmi), 0)::int8 AS "conversion_move_ins!",
                  coalesce(sum(n), 0)::int8 AS "snapshots!",
                  coalesce(sum(nmi), 0)::int8 AS "with_move_ins!",
                  count(*) AS "facilities!",
                  count(*) FILTER (WHERE nl > 0) AS "facilities_with_leads!",
                  coalesce(sum(nl), 0)::int8 AS "snapshots_with_leads!"
           FROM (
               SELECT facility_id, sum(move_ins_daily) AS mi,
                      sum(move_ins_daily) FILTER (WHERE leads_total IS NOT NULL) AS cmi,
                      count(*) AS n, count(move_ins_daily) AS nmi,
                      count(*) FILTER (WHERE leads_total IS NOT NULL) AS nl
               FROM sync_records
               WHERE company_id = $1 AND ($2::uuid IS NULL OR facility_id = $2)
                 AND snapshot_date >= $3 AND snapshot_date <= $4
                 AND ($5::uuid[] IS NULL OR facility_id = ANY($5))
               GROUP BY facility_id
           ) per_facility"#,
        company_id.uuid(),
        facility.map(FacilityId::uuid),
        p.start,
        p.as_of,
        narrowed
    )
    .fetch_one(pool)
    .await?)
}

/// The first data in scope: a period reaching before it is only partly covered.
async fn first_data(
    pool: &PgPool,
    company_id: CompanyId,
    facility: Option<FacilityId>,
    narrowed: Option<&[Uuid]>,
) -> Result<Option<NaiveDate>> {
    Ok(sqlx::query_scalar!(
        "SELECT min(snapshot_date) FROM sync_records WHERE company_id = $1 AND ($2::uuid IS NULL OR facility_id = $2)
           AND ($3::uuid[] IS NULL OR facility_id = ANY($3))",
        company_id.uuid(),
        facility.map(FacilityId::uuid),
        narrowed
    )
    .fetch_one(pool)
    .await?)
}

/// Days of the period, and of the previous period, on or after `first`, the first data in
/// scope.
fn days_covered(first: NaiveDate, p: &Period, days: i64) -> (i64, i64) {
    let (start, prev_start, as_of) = (p.start, p.prev_start, p.as_of);
    let covered = |from: NaiveDate, to: NaiveDate| (to - from.max(first)).num_days().max(0) + 1;
    let period_days_covered = covered(start, as_of).min(days);
    let previous_period_days_covered = if first > start - Duration::days(1) {
        0
    } else {
        covered(prev_start, start - Duration::days(1)).min(days)
    };
    (period_days_covered, previous_period_days_covered)
}
