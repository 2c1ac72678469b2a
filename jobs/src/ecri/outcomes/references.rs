//! The rent each past increase's premium is measured against, by the same definition as when
//! deciding (`SizeMarket::reference_rate`): the size's competitor median as the pricing engine
//! builds the band (each competitor's latest observation within the facility's
//! `competitor_max_age_days`, effective rates, stale ones discounted), else the size's street
//! rate (the lowest tier's); both as of the day asked (the first of the month the window
//! starts in), from the stored history. A size with no snapshot on or before that day takes
//! its first snapshot's street rate.

use crate::analytics::reports;
use crate::error::Result;
use chrono::NaiveDate;
use domain::pricing::band::{competitor_band, CompetitorObservation};
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

type Key = (Uuid, String, NaiveDate);

/// The reference rate of each (facility, size, day) asked for that has one.
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
    let (mut f, mut s, mut d, mut age) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (id, size, day) in keys {
        let band = settings.get(id).copied().unwrap_or_default().band();
        f.push(*id);
        s.push(size.clone());
        d.push(*day);
        age.push(i32::try_from(band.max_age_days.max(0)).unwrap_or(i32::MAX));
    }
    let street = sqlx::query!(
        r#"SELECT k.facility_id AS "facility_id!", k.size AS "size!", k.d AS "d!",
                  (SELECT min(u.street_rate) FROM sync_unit_types u
                   WHERE u.facility_id = k.facility_id AND u.size = k.size
                     AND u.snapshot_date = coalesce(
                         (SELECT max(v.snapshot_date) FROM sync_unit_types v
                          WHERE v.facility_id = k.facility_id AND v.size = k.size
                            AND v.snapshot_date <= k.d),
                         (SELECT min(v.snapshot_date) FROM sync_unit_types v
                          WHERE v.facility_id = k.facility_id AND v.size = k.size))) AS "street?"
           FROM unnest($1::uuid[], $2::text[], $3::date[]) AS k(facility_id, size, d)"#,
        &f,
        &s,
        &d
    )
    .fetch_all(pool)
    .await?;
    for r in street {
        if let Some(rate) = r.street.filter(|x| x.is_finite() && *x > 0.0) {
            out.insert((r.facility_id, r.size, r.d), rate);
        }
    }
    let observed = sqlx::query!(
        r#"SELECT k.facility_id AS "facility_id!", k.size AS "size!", k.d AS "d!",
                  c.competitor AS "competitor!", c.rate AS "rate!", c.promo,
                  c.observed_on AS "observed_on!"
           FROM unnest($1::uuid[], $2::text[], $3::date[], $4::int[])
                AS k(facility_id, size, d, max_age)
           CROSS JOIN LATERAL (
               SELECT DISTINCT ON (lower(btrim(r.competitor)))
                      r.competitor, r.rate, r.promo, r.observed_on
               FROM competitor_rates r
               WHERE r.facility_id = k.facility_id AND r.size = k.size AND r.rate > 0
                 AND r.observed_on <= k.d AND r.observed_on >= k.d - k.max_age
               ORDER BY lower(btrim(r.competitor)), r.observed_on DESC, r.id DESC
           ) c"#,
        &f,
        &s,
        &d,
        &age
    )
    .fetch_all(pool)
    .await?;
    let mut obs: BTreeMap<Key, Vec<CompetitorObservation>> = BTreeMap::new();
    for r in observed {
        obs.entry((r.facility_id, r.size, r.d))
            .or_default()
            .push(CompetitorObservation {
                competitor: r.competitor,
                rate: r.rate,
                promo: r.promo,
                observed_on: r.observed_on,
                tier: None,
            });
    }
    for (key, o) in obs {
        let band_settings = settings.get(&key.0).copied().unwrap_or_default().band();
        if let Some(band) = competitor_band(&o, key.2, &band_settings) {
            if band.median.is_finite() && band.median > 0.0 {
                out.insert(key, band.median);
            }
        }
    }
    Ok(out)
}
