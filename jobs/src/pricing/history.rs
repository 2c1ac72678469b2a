//! A facility's daily history for charts and audits: per snapshot day its occupancy and
//! move-ins against the month's target prorated to the day, each unit type's street rate and
//! occupancy, and each size's competitor band (P25, median, P75) as the engine would have seen
//! it that day.

use super::store::settings_of;
use crate::error::Result;
use chrono::{Datelike, NaiveDate};
use domain::ids::{CompanyId, FacilityId};
use domain::pricing::band::{competitor_band, BandSettings, CompetitorBand, CompetitorObservation};
use domain::pricing::engine::days_in_month;
use serde::Serialize;
use sqlx::PgConnection;
use std::collections::BTreeMap;
use uuid::Uuid;

/// Longest history one request reads, in days.
pub const MAX_DAYS: i64 = 730;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct History {
    /// The facility.
    pub facility_id: Uuid,
    /// First and last day of the range asked for (the last is the latest snapshot).
    pub from: Option<NaiveDate>,
    /// Last day of the range (the latest snapshot).
    pub to: Option<NaiveDate>,
    /// One entry per snapshot day, oldest first.
    pub days: Vec<Day>,
    /// Street rate per unit type and day.
    pub unit_types: Vec<UnitTypeSeries>,
    /// Competitor band per size and day.
    pub competitor_bands: Vec<BandSeries>,
    /// The decisions made on the facility since the range's first day (all of them when it has
    /// no snapshot), newest first.
    pub decisions: Vec<crate::decisions::Logged>,
}

/// One snapshot day of the facility.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Day {
    /// The day.
    pub date: NaiveDate,
    /// Facility occupancy, percent.
    pub occupancy_pct: Option<f64>,
    /// Move-ins on the day.
    pub move_ins_daily: Option<i32>,
    /// Move-ins this month to the day.
    pub move_ins_mtd: Option<i32>,
    /// The month's move-in target.
    pub move_ins_target_monthly: Option<i32>,
    /// The monthly target times the share of the month gone by this day.
    pub move_ins_target_to_date: Option<f64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UnitTypeSeries {
    /// Unit size.
    pub size: String,
    /// Tier; empty when none.
    pub tier: String,
    /// Rate per day, oldest first.
    pub points: Vec<UnitTypePoint>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UnitTypePoint {
    /// The day.
    pub date: NaiveDate,
    /// Street rate, currency per month.
    pub street_rate: f64,
    /// Occupancy of the unit type, percent.
    pub occupancy_pct: Option<f64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BandSeries {
    /// Unit size.
    pub size: String,
    /// The band per day, oldest first.
    pub points: Vec<BandPoint>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BandPoint {
    /// The day.
    pub date: NaiveDate,
    /// 25th percentile of the effective competitor rates.
    pub p25: f64,
    /// Median of the effective competitor rates.
    pub median: f64,
    /// 75th percentile of the effective competitor rates.
    pub p75: f64,
    /// Competitors counted.
    pub competitors: usize,
    /// Of which stale.
    pub stale: usize,
}

impl BandPoint {
    /// The day's point of a band.
    fn of(date: NaiveDate, b: &CompetitorBand) -> Self {
        Self {
            date,
            p25: b.p25,
            median: b.median,
            p75: b.p75,
            competitors: b.competitors,
            stale: b.stale,
        }
    }
}

/// The last `days` days of a facility's history, ending at its latest snapshot (404 for a
/// facility that is not the company's; empty lists when it has no snapshot).
pub(crate) async fn load(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    days: i64,
) -> Result<History> {
    let (settings, _) = settings_of(&mut *conn, company_id, facility_id).await?;
    let band_settings = settings.band();
    let to = sqlx::query_scalar!(
        "SELECT max(snapshot_date) FROM sync_records WHERE facility_id = $1",
        facility_id.uuid()
    )
    .fetch_one(&mut *conn)
    .await?;
    let Some(to) = to else {
        return Ok(History {
            facility_id: facility_id.uuid(),
            from: None,
            to: None,
            days: Vec::new(),
            unit_types: Vec::new(),
            competitor_bands: Vec::new(),
            decisions: crate::decisions::list(&mut *conn, company_id, facility_id, None).await?,
        });
    };
    let from = to - chrono::Days::new(u64::try_from(days.clamp(1, MAX_DAYS) - 1).unwrap_or(0));
    let decisions = crate::decisions::list(
        &mut *conn,
        company_id,
        facility_id,
        Some(from.and_time(chrono::NaiveTime::MIN).and_utc()),
    )
    .await?;
    let days = days_of(&mut *conn, facility_id, from, to).await?;
    let unit_types = unit_type_series(&mut *conn, facility_id, from, to).await?;
    let oldest = from - chrono::Days::new(u64::try_from(band_settings.max_age_days).unwrap_or(0));
    let observations = observations_by_size(&mut *conn, facility_id, oldest, to).await?;
    let dates: Vec<NaiveDate> = days.iter().map(|d| d.date).collect();
    let competitor_bands = observations
        .into_iter()
        .map(|(size, obs)| BandSeries {
            points: bands_by_day(&obs, &dates, &band_settings),
            size,
        })
        .collect();
    Ok(History {
        facility_id: facility_id.uuid(),
        from: Some(from),
        to: Some(to),
        days,
        unit_types,
        competitor_bands,
        decisions,
    })
}

/// The facility's snapshot days from `from` to `to`, oldest first.
async fn days_of(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Vec<Day>> {
    Ok(sqlx::query!(
        "SELECT snapshot_date, occupancy_pct, move_ins_daily, move_ins_mtd, move_ins_target_monthly
         FROM sync_records WHERE facility_id = $1 AND snapshot_date BETWEEN $2 AND $3
         ORDER BY snapshot_date",
        facility_id.uuid(),
        from,
        to
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|r| Day {
        date: r.snapshot_date,
        occupancy_pct: r.occupancy_pct,
        move_ins_daily: r.move_ins_daily,
        move_ins_mtd: r.move_ins_mtd,
        move_ins_target_monthly: r.move_ins_target_monthly,
        move_ins_target_to_date: r
            .move_ins_target_monthly
            .map(|t| prorated(f64::from(t), r.snapshot_date)),
    })
    .collect())
}

/// Each unit type's rates from `from` to `to`, smallest size first.
async fn unit_type_series(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Vec<UnitTypeSeries>> {
    let rows = sqlx::query!(
        "SELECT size, tier, snapshot_date, street_rate, occupancy_pct FROM sync_unit_types
         WHERE facility_id = $1 AND snapshot_date BETWEEN $2 AND $3
         ORDER BY width_ft * depth_ft, size, tier, snapshot_date",
        facility_id.uuid(),
        from,
        to
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut unit_types: Vec<UnitTypeSeries> = Vec::new();
    for r in rows {
        let point = UnitTypePoint {
            date: r.snapshot_date,
            street_rate: r.street_rate,
            occupancy_pct: r.occupancy_pct,
        };
        match unit_types.last_mut() {
            Some(s) if s.size == r.size && s.tier == r.tier => s.points.push(point),
            _ => unit_types.push(UnitTypeSeries {
                size: r.size,
                tier: r.tier,
                points: vec![point],
            }),
        }
    }
    Ok(unit_types)
}

/// The competitor observations from `oldest` to `to`, by size.
async fn observations_by_size(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    oldest: NaiveDate,
    to: NaiveDate,
) -> Result<BTreeMap<String, Vec<CompetitorObservation>>> {
    let mut observations: BTreeMap<String, Vec<CompetitorObservation>> = BTreeMap::new();
    for r in sqlx::query!(
        "SELECT size, competitor, rate, promo, observed_on FROM competitor_rates
         WHERE facility_id = $1 AND observed_on BETWEEN $2 AND $3",
        facility_id.uuid(),
        oldest,
        to
    )
    .fetch_all(&mut *conn)
    .await?
    {
        observations
            .entry(r.size)
            .or_default()
            .push(CompetitorObservation {
                competitor: r.competitor,
                rate: r.rate,
                promo: r.promo,
                observed_on: r.observed_on,
                tier: None,
            });
    }
    Ok(observations)
}

/// A monthly target prorated to a day of its month.
fn prorated(monthly: f64, day: NaiveDate) -> f64 {
    let share = f64::from(day.day()) / f64::from(days_in_month(day));
    (monthly * share * 100.0).round() / 100.0
}

/// The band of one size on each date, from what had been observed by then.
fn bands_by_day(
    observations: &[CompetitorObservation],
    dates: &[NaiveDate],
    settings: &BandSettings,
) -> Vec<BandPoint> {
    // Sorted by day once, what had been seen by a date and is young enough to count is one
    // slice of it. The band keeps, per competitor (named as it compares them: trimmed,
    // case-insensitive), the last observation of the slice, in the order of each competitor's
    // first observation in it; so each day hands it just those, found by two binary searches
    // per competitor, instead of the whole slice (a year of days would otherwise read each
    // observation about `max_age_days` times, naming its competitor each time).
    let mut sorted = observations.to_vec();
    sorted.sort_by_key(|o| o.observed_on);
    let mut names: Vec<String> = Vec::new();
    let mut by_competitor: Vec<Vec<usize>> = Vec::new();
    for (i, o) in sorted.iter().enumerate() {
        // The observations the band skips whatever the day.
        if !(o.rate.is_finite() && o.rate > 0.0) {
            continue;
        }
        let name = o.competitor.trim().to_lowercase();
        match names.iter().position(|n| *n == name) {
            Some(k) => by_competitor[k].push(i),
            None => {
                names.push(name);
                by_competitor.push(vec![i]);
            }
        }
    }
    let mut picked: Vec<(usize, usize)> = Vec::with_capacity(by_competitor.len());
    let mut window: Vec<CompetitorObservation> = Vec::with_capacity(by_competitor.len());
    dates
        .iter()
        .filter_map(|&date| {
            let end = sorted.partition_point(|o| o.observed_on <= date);
            let oldest = date - chrono::Duration::days(settings.max_age_days.max(0));
            let start = sorted[..end].partition_point(|o| o.observed_on < oldest);
            // Per competitor seen in the slice: its first and its last observation there.
            picked.clear();
            for seen in &by_competitor {
                let first = seen.partition_point(|&i| i < start);
                let past = seen.partition_point(|&i| i < end);
                if first < past {
                    picked.push((seen[first], seen[past - 1]));
                }
            }
            picked.sort_unstable_by_key(|&(first, _)| first);
            window.clear();
            window.extend(picked.iter().map(|&(_, last)| sorted[last].clone()));
            competitor_band(&window, date, settings).map(|b| BandPoint::of(date, &b))
        })
        .collect()
}

#[cfg(test)]
mod tests;
