//! What the API answers for competitor rates, built from `jobs::competitors`.

use chrono::NaiveDate;
use domain::pricing::band::CompetitorBand;
use serde::Serialize;
use uuid::Uuid;

/// A stored observation, as listed.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = CompetitorRateListed)]
pub(crate) struct Listed {
    /// Id of the observation.
    pub id: i64,
    /// The competitor's name.
    pub competitor: String,
    /// Unit size.
    pub size: String,
    /// The unit tier the rate is for (climate controlled, drive-up...); null when the source
    /// did not say.
    pub tier: Option<String>,
    /// The competitor's street rate, currency per month.
    pub rate: f64,
    /// The competitor's promotion; null when none.
    pub promo: Option<String>,
    /// Where the rate was seen.
    pub source_url: Option<String>,
    /// The day the rate was seen.
    pub observed_on: NaiveDate,
    /// How it came in: `sync` (a push or a CRM pull), `api` or `upload`.
    pub source: String,
    /// The rate with the promotion spread over the expected stay.
    pub effective_rate: f64,
    /// Days since it was seen.
    pub age_days: i64,
    /// Older than the facility's `competitor_stale_after_days`.
    pub stale: bool,
}

impl From<jobs::competitors::Listed> for Listed {
    fn from(r: jobs::competitors::Listed) -> Self {
        Self {
            id: r.id,
            competitor: r.competitor,
            size: r.size,
            tier: r.tier,
            rate: r.rate,
            promo: r.promo,
            source_url: r.source_url,
            observed_on: r.observed_on,
            source: r.source,
            effective_rate: r.effective_rate,
            age_days: r.age_days,
            stale: r.stale,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = CompetitorSizeBand)]
pub(crate) struct SizeBand {
    /// Unit size.
    pub size: String,
    /// Null for the band of the size's whole set (every rate, whatever its tier); a tier (in
    /// lower case) for the band of the rates that name that tier.
    pub tier: Option<String>,
    #[serde(flatten)]
    pub band: CompetitorBand,
}

impl From<jobs::competitors::SizeBand> for SizeBand {
    fn from(r: jobs::competitors::SizeBand) -> Self {
        Self {
            size: r.size,
            tier: r.tier,
            band: r.band,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = CompetitorRateListing)]
pub(crate) struct Listing {
    /// The facility.
    pub facility_id: Uuid,
    /// The date ages and bands are measured from (today, UTC).
    pub as_of: NaiveDate,
    /// The observations, newest first.
    pub competitor_rates: Vec<Listed>,
    /// Observations listed.
    pub count: usize,
    /// The band per size as of `as_of` (and per tier, where rates name one), as the engine
    /// would build it before any fallback (`docs/pricing.md`).
    pub bands: Vec<SizeBand>,
}

impl From<jobs::competitors::Listing> for Listing {
    fn from(r: jobs::competitors::Listing) -> Self {
        Self {
            facility_id: r.facility_id,
            as_of: r.as_of,
            competitor_rates: r.competitor_rates.into_iter().map(Into::into).collect(),
            count: r.count,
            bands: r.bands.into_iter().map(Into::into).collect(),
        }
    }
}
