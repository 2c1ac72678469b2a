//! A facility's daily history for charts and audits: per snapshot day its occupancy and
//! move-ins against the month's target prorated to the day, each unit type's street rate and
//! occupancy, and each size's competitor band (P25, median, P75) as the engine would have seen
//! it that day: where the size's competitor rates name a tier, one band per tier of the size's
//! unit types, built as the engine builds it (`tiers::band_for`: the tier's own set, else the
//! size's converted by the tier premium of that day's street rates).

use super::store::settings_of;
use crate::error::Result;
use chrono::{Datelike, NaiveDate};
use domain::ids::{CompanyId, FacilityId};
use domain::pricing::band::{competitor_band, BandSettings, CompetitorBand, CompetitorObservation};
use domain::pricing::engine::days_in_month;
use domain::pricing::settings::PricingSettings;
use domain::pricing::tiers::{self, tier_key, Premium};
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
    /// Competitor band per size (per unit type where the size's rates name a tier) and day.
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
    /// The tier of the size's unit types this band is of (empty for a unit type without one),
    /// when the size's competitor rates name a tier; `None` for the band of the size's whole
    /// set, as before tiers.
    pub tier: Option<String>,
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
    let competitor_bands = band_series(observations, &unit_types, &dates, &settings);
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

/// The competitor observations from `oldest` to `to` (with their tier), by size.
async fn observations_by_size(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    oldest: NaiveDate,
    to: NaiveDate,
) -> Result<BTreeMap<String, Vec<CompetitorObservation>>> {
    let mut observations: BTreeMap<String, Vec<CompetitorObservation>> = BTreeMap::new();
    for r in sqlx::query!(
        "SELECT size, competitor, rate, promo, observed_on, tier FROM competitor_rates
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
                tier: r.tier,
            });
    }
    Ok(observations)
}

/// A monthly target prorated to a day of its month.
fn prorated(monthly: f64, day: NaiveDate) -> f64 {
    let share = f64::from(day.day()) / f64::from(days_in_month(day));
    (monthly * share * 100.0).round() / 100.0
}

/// The band series of each size with observations. A size none of whose observations names a
/// tier, or without unit types in the range, has one series of its whole set, as before tiers;
/// another has one per tier of its unit types, each day's band built as the engine would have
/// built it that day (`tiers::band_for`, with the premium of that day's street rates).
fn band_series(
    observations: BTreeMap<String, Vec<CompetitorObservation>>,
    unit_types: &[UnitTypeSeries],
    dates: &[NaiveDate],
    settings: &PricingSettings,
) -> Vec<BandSeries> {
    let band_settings = settings.band();
    let mut premiums: Option<Vec<Premium>> = None;
    let mut out = Vec::new();
    for (size, obs) in observations {
        let unit_tiers: Vec<&str> = unit_types
            .iter()
            .filter(|u| u.size == size)
            .map(|u| u.tier.as_str())
            .collect();
        if unit_tiers.is_empty() || !tiers::names_a_tier(&obs) {
            out.push(BandSeries {
                points: bands_by_day(&obs, dates, &band_settings),
                size,
                tier: None,
            });
            continue;
        }
        let premiums: &[Premium] =
            premiums.get_or_insert_with(|| premiums_by_day(unit_types, dates, settings));
        // Each day's window once, banded for every tier of the size.
        let by_day = windowed(&obs, dates, &band_settings, |window, i, date| {
            unit_tiers
                .iter()
                .map(|&tier| {
                    let unit_type = (size.as_str(), tier);
                    let bs = &band_settings;
                    let (band, _) =
                        tiers::band_for(unit_type, window, date, bs, settings, premiums[i]);
                    band.map(|b| BandPoint::of(date, &b))
                })
                .collect::<Vec<_>>()
        });
        for (k, tier) in unit_tiers.iter().enumerate() {
            out.push(BandSeries {
                size: size.clone(),
                tier: Some((*tier).to_owned()),
                points: by_day.iter().filter_map(|day| day[k].clone()).collect(),
            });
        }
    }
    out
}

/// The tier premium of each date's street rates (`tiers::premium_of`), as the engine learned it
/// from that day's snapshot.
fn premiums_by_day(
    unit_types: &[UnitTypeSeries],
    dates: &[NaiveDate],
    settings: &PricingSettings,
) -> Vec<Premium> {
    let mut rates: Vec<Vec<(&str, &str, f64)>> = vec![Vec::new(); dates.len()];
    for u in unit_types {
        for p in &u.points {
            if let Ok(i) = dates.binary_search(&p.date) {
                rates[i].push((&u.size, &u.tier, p.street_rate));
            }
        }
    }
    rates
        .into_iter()
        .map(|day| tiers::premium_of(day, settings))
        .collect()
}

/// The band of one size on each date, from what had been observed by then.
fn bands_by_day(
    observations: &[CompetitorObservation],
    dates: &[NaiveDate],
    settings: &BandSettings,
) -> Vec<BandPoint> {
    windowed(observations, dates, settings, |window, _, date| {
        competitor_band(window, date, settings).map(|b| BandPoint::of(date, &b))
    })
    .into_iter()
    .flatten()
    .collect()
}

/// `point` of each date (its index and the date) with the observations a band counts on that
/// day: the latest of each competitor and tier seen by then and young enough to count.
fn windowed<T>(
    observations: &[CompetitorObservation],
    dates: &[NaiveDate],
    settings: &BandSettings,
    mut point: impl FnMut(&[CompetitorObservation], usize, NaiveDate) -> T,
) -> Vec<T> {
    // Sorted by day once, what had been seen by a date and is young enough to count is one
    // slice of it. The band keeps, per competitor (named as it compares them: trimmed,
    // case-insensitive) and tier (as the engine reads them: its latest rate of each tier), the
    // last observation of the slice, in the order of each one's first observation in it; so
    // each day hands it just those, found by two binary searches per competitor and tier,
    // instead of the whole slice (a year of days would otherwise read each observation about
    // `max_age_days` times, naming its competitor each time).
    let mut sorted = observations.to_vec();
    sorted.sort_by_key(|o| o.observed_on);
    let mut names: Vec<(String, String)> = Vec::new();
    let mut by_competitor: Vec<Vec<usize>> = Vec::new();
    for (i, o) in sorted.iter().enumerate() {
        // The observations the band skips whatever the day.
        if !(o.rate.is_finite() && o.rate > 0.0) {
            continue;
        }
        let name = (
            o.competitor.trim().to_lowercase(),
            o.tier.as_deref().map(tier_key).unwrap_or_default(),
        );
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
        .enumerate()
        .map(|(i, &date)| {
            let end = sorted.partition_point(|o| o.observed_on <= date);
            let oldest = date - chrono::Duration::days(settings.max_age_days.max(0));
            let start = sorted[..end].partition_point(|o| o.observed_on < oldest);
            // Per competitor and tier seen in the slice: its first and last observation there.
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
            point(&window, i, date)
        })
        .collect()
}

#[cfg(test)]
mod tests;
