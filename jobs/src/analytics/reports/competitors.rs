//! Competitor observations and pricing settings as the pricing engine reads them, so the bands
//! and fill suggestions of the analytics are the engine's: where a size's competitor rates name
//! a tier, each tier of the size banded on its own set, or on the size's set converted by the
//! facility's tier premium (`tiers::band_for`).

use super::{street_by_size, UnitRow};
use crate::error::Result;
use chrono::NaiveDate;
use domain::pricing::band::{competitor_band, CompetitorBand, CompetitorObservation};
use domain::pricing::settings::PricingSettings;
use domain::pricing::tiers::{self, SetSource};
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

/// The latest competitor observation per competitor and tier, by (facility, size), ready for
/// the band.
pub async fn competitor_observations(
    pool: &PgPool,
    facility_ids: &[Uuid],
) -> Result<BTreeMap<(Uuid, String), Vec<CompetitorObservation>>> {
    let rows = sqlx::query!(
        "SELECT facility_id, size, competitor, rate, promo, observed_on, tier
         FROM competitor_latest WHERE facility_id = ANY($1)",
        facility_ids
    )
    .fetch_all(pool)
    .await?;
    let mut out: BTreeMap<(Uuid, String), Vec<_>> = BTreeMap::new();
    for r in rows {
        out.entry((r.facility_id, r.size))
            .or_default()
            .push(CompetitorObservation {
                competitor: r.competitor,
                rate: r.rate,
                promo: r.promo,
                observed_on: r.observed_on,
                tier: r.tier,
            });
    }
    Ok(out)
}

/// What a report sets against a band: a size as a whole, or one unit type of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Banded {
    pub size: String,
    /// `None`: the size as a whole, as before tiers (no competitor rate of the size names a
    /// tier). Else the unit type's tier, empty when it has none.
    pub tier: Option<String>,
    /// The size's street rate (`street_by_size`), or the unit type's.
    pub street_rate: f64,
    /// The band, `None` when no competitor rate of the size counts.
    pub band: Option<CompetitorBand>,
    /// The set a unit type was banded on; `None` for a size as a whole.
    pub set: Option<SetSource>,
}

impl Banded {
    /// The name a report gives it: "10x20", or "climate 10x20" for a unit type.
    pub fn name(&self) -> String {
        tiers::unit_type_name(&self.size, self.tier.as_deref().unwrap_or_default())
    }
}

/// The bands of a snapshot's unit types `units` as the engine would build them as of `as_of`,
/// `obs` giving the competitor rates of a size. A size none of whose rates names a tier (or
/// without rates) is one entry, at its street rate, banded on its whole set exactly as before
/// tiers; a size whose rates name one has an entry per unit type, banded as the engine bands it
/// (its tier's own set, else the size's converted by the premium learned from `units`).
pub fn banded<'a>(
    units: &[UnitRow],
    obs: impl Fn(&str) -> Option<&'a [CompetitorObservation]>,
    as_of: NaiveDate,
    s: &PricingSettings,
) -> Vec<Banded> {
    let bs = s.band();
    let premium = tiers::premium_of(
        units
            .iter()
            .map(|u| (u.size.as_str(), u.tier.as_str(), u.street_rate)),
        s,
    );
    let mut out = Vec::new();
    for (size, rate) in street_by_size(units) {
        let of_size = obs(&size);
        match of_size {
            Some(o) if tiers::names_a_tier(o) => {
                for u in units.iter().filter(|u| u.size == size) {
                    let unit_type = (size.as_str(), u.tier.as_str());
                    let (band, set) = tiers::band_for(unit_type, o, as_of, &bs, s, premium);
                    out.push(Banded {
                        size: size.clone(),
                        tier: Some(u.tier.clone()),
                        street_rate: u.street_rate,
                        band,
                        set: set.map(|set| set.source),
                    });
                }
            }
            _ => out.push(Banded {
                band: of_size.and_then(|o| competitor_band(o, as_of, &bs)),
                size,
                tier: None,
                street_rate: rate,
                set: None,
            }),
        }
    }
    out
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

#[cfg(test)]
mod tests;
