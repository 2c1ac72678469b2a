//! The rent each past increase's premium is measured against, by the same definition as when
//! deciding (`SizeMarket::reference_rate` of the tenant's market): the competitor median of
//! the tenant's unit type as the pricing engine bands it (each competitor's latest observation
//! per tier within the facility's `competitor_max_age_days`, effective rates, stale ones
//! discounted; where the size's rates name a tier, the tier's own set, else the size's set
//! converted by the facility's tier premium: `tiers::band_for`), else the street rate (the
//! tier's where the snapshot lists it, else the size's, its tiers weighted by their units as
//! `street_by_size` does); all as of the day asked (the first of the month the window starts
//! in), from the stored history. A size with no snapshot on or before that day takes its first
//! snapshot's.

use crate::analytics::reports;
use crate::error::Result;
use chrono::NaiveDate;
use domain::pricing::band::CompetitorObservation;
use domain::pricing::tiers::{self, Premium};
use domain::values::round2;
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// (facility, size, the tenant's tier as compared ('' for none), day).
pub(super) type Key = (Uuid, String, String, NaiveDate);

/// The reference rate of each key asked for that has one.
pub(super) async fn references(pool: &PgPool, keys: &BTreeSet<Key>) -> Result<BTreeMap<Key, f64>> {
    let mut out = BTreeMap::new();
    if keys.is_empty() {
        return Ok(out);
    }
    let ids: Vec<Uuid> = keys
        .iter()
        .map(|k| k.0)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let settings = reports::competitors::pricing_settings(pool, &ids).await?;
    for (key, rate) in street(pool, keys).await? {
        out.insert(key, rate);
    }
    let observed = observations(pool, keys, &settings).await?;
    let tiered: BTreeSet<(Uuid, NaiveDate)> = keys
        .iter()
        .filter(|(id, size, tier, d)| {
            !tier.is_empty()
                && observed
                    .get(&(*id, size.clone(), *d))
                    .is_some_and(|o| tiers::names_a_tier(o))
        })
        .map(|(id, _, _, d)| (*id, *d))
        .collect();
    let premiums = premiums(pool, &tiered, &settings).await?;
    for key in keys {
        let (id, size, tier, day) = key;
        let Some(obs) = observed.get(&(*id, size.clone(), *day)) else {
            continue;
        };
        let s = settings.get(id).copied().unwrap_or_default();
        let premium = premiums.get(&(*id, *day)).copied().unwrap_or(Premium {
            pct: s.tier_premium_pct,
            sizes: 0,
        });
        let (band, _) = tiers::band_for((size, tier), obs, *day, &s.band(), &s, premium);
        if let Some(median) = band.map(|b| b.median).filter(|m| m.is_finite() && *m > 0.0) {
            out.insert(key.clone(), median);
        }
    }
    Ok(out)
}

/// The street rate of each key: its tier's in the size's snapshot of the day, else the size's.
async fn street(pool: &PgPool, keys: &BTreeSet<Key>) -> Result<BTreeMap<Key, f64>> {
    let (mut f, mut s, mut t, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (id, size, tier, day) in keys {
        f.push(*id);
        s.push(size.clone());
        t.push(tier.clone());
        d.push(*day);
    }
    let rows = sqlx::query!(
        r#"SELECT k.facility_id AS "facility_id!", k.size AS "size!", k.tier AS "tier!",
                  k.d AS "d!",
                  coalesce(
                      (SELECT min(u.street_rate) FROM sync_unit_types u
                       WHERE u.facility_id = k.facility_id AND u.size = k.size
                         AND u.snapshot_date = snap.snap_on AND k.tier <> ''
                         AND lower(btrim(u.tier)) = k.tier),
                      (SELECT CASE WHEN bool_and(coalesce(u.total_units, 0) > 0)
                                   THEN sum(u.street_rate * u.total_units) / sum(u.total_units)
                                   ELSE avg(u.street_rate) END
                       FROM sync_unit_types u
                       WHERE u.facility_id = k.facility_id AND u.size = k.size
                         AND u.snapshot_date = snap.snap_on)) AS "street?"
           FROM unnest($1::uuid[], $2::text[], $3::text[], $4::date[]) AS k(facility_id, size, tier, d)
           CROSS JOIN LATERAL (
               SELECT coalesce(
                   (SELECT max(v.snapshot_date) FROM sync_unit_types v
                    WHERE v.facility_id = k.facility_id AND v.size = k.size
                      AND v.snapshot_date <= k.d),
                   (SELECT min(v.snapshot_date) FROM sync_unit_types v
                    WHERE v.facility_id = k.facility_id AND v.size = k.size)) AS snap_on
           ) snap"#,
        &f,
        &s,
        &t,
        &d
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            let rate = r.street.filter(|x| x.is_finite() && *x > 0.0)?;
            Some(((r.facility_id, r.size, r.tier, r.d), round2(rate)))
        })
        .collect())
}

/// Each competitor's latest rate per tier within the facility's maximum age, by (facility,
/// size, day) of the keys.
async fn observations(
    pool: &PgPool,
    keys: &BTreeSet<Key>,
    settings: &BTreeMap<Uuid, domain::pricing::settings::PricingSettings>,
) -> Result<BTreeMap<(Uuid, String, NaiveDate), Vec<CompetitorObservation>>> {
    let days: BTreeSet<(Uuid, String, NaiveDate)> = keys
        .iter()
        .map(|(id, size, _, d)| (*id, size.clone(), *d))
        .collect();
    let (mut f, mut s, mut d, mut age) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (id, size, day) in days {
        let band = settings.get(&id).copied().unwrap_or_default().band();
        f.push(id);
        s.push(size);
        d.push(day);
        age.push(i32::try_from(band.max_age_days.max(0)).unwrap_or(i32::MAX));
    }
    let rows = sqlx::query!(
        r#"SELECT k.facility_id AS "facility_id!", k.size AS "size!", k.d AS "d!",
                  c.competitor AS "competitor!", c.rate AS "rate!", c.promo,
                  c.observed_on AS "observed_on!", c.tier
           FROM unnest($1::uuid[], $2::text[], $3::date[], $4::int[])
                AS k(facility_id, size, d, max_age)
           CROSS JOIN LATERAL (
               SELECT DISTINCT ON (lower(btrim(r.competitor)), lower(btrim(coalesce(r.tier, ''))))
                      r.competitor, r.rate, r.promo, r.observed_on, r.tier
               FROM competitor_rates r
               WHERE r.facility_id = k.facility_id AND r.size = k.size AND r.rate > 0
                 AND r.observed_on <= k.d AND r.observed_on >= k.d - k.max_age
               ORDER BY lower(btrim(r.competitor)), lower(btrim(coalesce(r.tier, ''))),
                        r.observed_on DESC, r.id DESC
           ) c"#,
        &f,
        &s,
        &d,
        &age
    )
    .fetch_all(pool)
    .await?;
    let mut out: BTreeMap<(Uuid, String, NaiveDate), Vec<CompetitorObservation>> = BTreeMap::new();
    for r in rows {
        out.entry((r.facility_id, r.size, r.d))
            .or_default()
            .push(CompetitorObservation {
                competitor: r.competitor,
                rate: r.rate,
                promo: r.promo,
                observed_on: r.observed_on,
                tier: r.tier.filter(|t| !t.trim().is_empty()),
            });
    }
    Ok(out)
}

/// A unit type's size, tier and street rate.
type UnitType = (String, String, f64);

/// The tier premium of each (facility, day) asked, learned from the street rates of the
/// facility's latest snapshot on or before the day, as the engine learns it from a run's.
async fn premiums(
    pool: &PgPool,
    days: &BTreeSet<(Uuid, NaiveDate)>,
    settings: &BTreeMap<Uuid, domain::pricing::settings::PricingSettings>,
) -> Result<BTreeMap<(Uuid, NaiveDate), Premium>> {
    if days.is_empty() {
        return Ok(BTreeMap::new());
    }
    let (f, d): (Vec<Uuid>, Vec<NaiveDate>) = days.iter().copied().unzip();
    let rows = sqlx::query!(
        r#"SELECT k.facility_id AS "facility_id!", k.d AS "d!", u.size, u.tier, u.street_rate
           FROM unnest($1::uuid[], $2::date[]) AS k(facility_id, d)
           JOIN sync_unit_types u ON u.facility_id = k.facility_id
            AND u.snapshot_date = (SELECT max(v.snapshot_date) FROM sync_unit_types v
                                   WHERE v.facility_id = k.facility_id AND v.snapshot_date <= k.d)"#,
        &f,
        &d
    )
    .fetch_all(pool)
    .await?;
    let mut units: BTreeMap<(Uuid, NaiveDate), Vec<UnitType>> = BTreeMap::new();
    for r in rows {
        units
            .entry((r.facility_id, r.d))
            .or_default()
            .push((r.size, r.tier, r.street_rate));
    }
    Ok(units
        .into_iter()
        .map(|(key, rows)| {
            let s = settings.get(&key.0).copied().unwrap_or_default();
            let p = tiers::premium_of(
                rows.iter()
                    .map(|(size, tier, rate)| (size.as_str(), tier.as_str(), *rate)),
                &s,
            );
            (key, p)
        })
        .collect())
}
