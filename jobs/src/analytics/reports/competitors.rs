//! Competitor observations and pricing settings as the pricing engine reads them, so the bands
//! and fill suggestions of the analytics are the engine's.

use crate::error::Result;
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

/// The latest competitor observation per competitor, by (facility, size), ready for the band.
pub async fn competitor_observations(
    pool: &PgPool,
    facility_ids: &[Uuid],
) -> Result<BTreeMap<(Uuid, String), Vec<domain::pricing::band::CompetitorObservation>>> {
    let rows = sqlx::query!(
        "SELECT facility_id, size, competitor, rate, promo, observed_on
         FROM competitor_latest WHERE facility_id = ANY($1)",
        facility_ids
    )
    .fetch_all(pool)
    .await?;
    let mut out: BTreeMap<(Uuid, String), Vec<_>> = BTreeMap::new();
    for r in rows {
        out.entry((r.facility_id, r.size)).or_default().push(
            domain::pricing::band::CompetitorObservation {
                competitor: r.competitor,
                rate: r.rate,
                promo: r.promo,
                observed_on: r.observed_on,
                tier: None,
            },
        );
    }
    Ok(out)
}

/// Each facility's pricing settings (the engine's defaults with the facility's overrides), so
/// bands and fill suggestions here are the ones the engine uses.
pub async fn pricing_settings(
    pool: &PgPool,
    facility_ids: &[Uuid],
) -> Result<BTreeMap<Uuid, domain::pricing::settings::PricingSettings>> {
    let rows = sqlx::query!(
        "SELECT id, pricing_settings FROM facilities WHERE id = ANY($1)",
        facility_ids
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            // No overrides (most facilities) are the defaults, without merging them into the
            // defaults' JSON. Overrides are checked when they are written; one that no longer
            // reads falls back to the defaults rather than failing the whole answer.
            let s = match r.pricing_settings.as_object() {
                Some(o) if o.is_empty() => domain::pricing::settings::PricingSettings::default(),
                _ => {
                    domain::pricing::settings::PricingSettings::with_overrides(&r.pricing_settings)
                        .unwrap_or_default()
                }
            };
            (r.id, s)
        })
        .collect())
}
