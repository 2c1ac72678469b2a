//! The competitor observations the band is built from. Apart because it is the one input not of
//! the facility's own data: it reads only each competitor's latest observation per size and
//! tier.

use crate::error::Result;
use chrono::NaiveDate;
use domain::ids::FacilityId;
use domain::pricing::band::CompetitorObservation;
use domain::pricing::settings::PricingSettings;
use sqlx::PgConnection;

/// Each competitor's latest observation per size and tier, no older than the settings allow, with its
/// size.
pub(super) async fn latest(
    conn: &mut PgConnection,
    facility_id: FacilityId,
    as_of: NaiveDate,
    settings: &PricingSettings,
) -> Result<Vec<(String, CompetitorObservation)>> {
    // The band counts each competitor's latest observation per size (and, since rates may
    // name their tier, per tier): only those are read.
    Ok(sqlx::query!(
        "SELECT DISTINCT ON (size, lower(btrim(competitor)), lower(coalesce(tier, '')))
                size, competitor, rate, promo, observed_on, tier
         FROM competitor_rates
         WHERE facility_id = $1 AND observed_on BETWEEN $2::date - $3::int AND $2::date
         ORDER BY size, lower(btrim(competitor)), lower(coalesce(tier, '')), observed_on DESC,
                  id DESC",
        facility_id.uuid(),
        as_of,
        i32::try_from(settings.competitor_max_age_days).unwrap_or(i32::MAX)
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|r| {
        (
            r.size,
            CompetitorObservation {
                competitor: r.competitor,
                rate: r.rate,
                promo: r.promo,
                observed_on: r.observed_on,
                tier: r.tier,
            },
        )
    })
    .collect())
}
