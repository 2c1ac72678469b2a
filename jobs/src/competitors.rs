//! Competitor rates added through the API or an upload: checked whole, then upserted per
//! competitor, size and day (the history is kept, so the engine can tell fresh from stale).

use crate::error::{Error, Result};
use crate::pricing::store::settings_of;
use chrono::NaiveDate;
use domain::ids::{CompanyId, FacilityId};
use domain::pricing::band::{
    competitor_band, effective_rate, CompetitorBand, CompetitorObservation,
};
use serde::Serialize;
use sqlx::PgConnection;
use uuid::Uuid;

use domain::competitors::Checked;

/// Upserts checked rates for a facility of the company (404 otherwise); within one batch the
/// last rate for a competitor, size, tier and day wins. Returns (inserted, updated).
pub(crate) async fn upsert(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    source: &str,
    rates: &[Checked],
) -> Result<(u64, u64)> {
    ensure_facility(conn, company_id, facility_id).await?;
    let mut unique: Vec<&Checked> = Vec::with_capacity(rates.len());
    let mut seen = std::collections::HashMap::new();
    for r in rates {
        let tier = r.tier.as_deref().map(str::to_lowercase).unwrap_or_default();
        let key = (
            r.competitor.to_lowercase(),
            r.size.clone(),
            tier,
            r.observed_on,
        );
        match seen.get(&key) {
            Some(&i) => unique[i] = r,
            None => {
                seen.insert(key, unique.len());
                unique.push(r);
            }
        }
    }
    let mut inserted = 0u64;
    let mut updated = 0u64;
    for chunk in unique.chunks(5_000) {
        let days: Vec<NaiveDate> = chunk.iter().map(|r| r.observed_on).collect();
        let names: Vec<String> = chunk.iter().map(|r| r.competitor.clone()).collect();
        let sizes: Vec<String> = chunk.iter().map(|r| r.size.clone()).collect();
        let rates: Vec<f64> = chunk.iter().map(|r| r.rate).collect();
        let promos: Vec<Option<String>> = chunk.iter().map(|r| r.promo.clone()).collect();
        let urls: Vec<Option<String>> = chunk.iter().map(|r| r.source_url.clone()).collect();
        let tiers: Vec<Option<String>> = chunk.iter().map(|r| r.tier.clone()).collect();
        let flags = sqlx::query_scalar!(
            // DISTINCT ON with the index's own `lower()`: names that Rust's lowercase keeps
            // apart but the database folds together ('İ' and 'i' under a UTF-8 locale) would
            // otherwise reach the same row twice in one statement.
            r#"INSERT INTO competitor_rates (company_id, facility_id, source, observed_on, competitor,
                   size, rate, promo, source_url, tier)
               SELECT DISTINCT ON (lower(u.competitor), u.size, lower(coalesce(u.tier, '')),
                                   u.observed_on)
                   $1, $2, $3, u.observed_on, u.competitor, u.size, u.rate, u.promo, u.source_url,
                   u.tier
               FROM UNNEST($4::date[], $5::text[], $6::text[], $7::float8[], $8::text[], $9::text[],
                           $10::text[])
                   WITH ORDINALITY AS u(observed_on, competitor, size, rate, promo, source_url, tier, n)
               ORDER BY lower(u.competitor), u.size, lower(coalesce(u.tier, '')), u.observed_on,
                   u.n DESC
               ON CONFLICT (facility_id, lower(competitor), size, lower(coalesce(tier, '')),
                            observed_on) WHERE sync_id IS NULL
               DO UPDATE SET rate = EXCLUDED.rate, promo = EXCLUDED.promo,
                   source_url = EXCLUDED.source_url, source = EXCLUDED.source,
                   competitor = EXCLUDED.competitor, tier = EXCLUDED.tier, created_at = now()
               RETURNING (xmax = 0) AS "inserted!""#,
            company_id.uuid(),
            facility_id.uuid(),
            source,
            &days,
            &names,
            &sizes,
            &rates,
            &promos as &[Option<String>],
            &urls as &[Option<String>],
            &tiers as &[Option<String>]
        )
        .fetch_all(&mut *conn)
        .await?;
        let new = flags.iter().filter(|f| **f).count() as u64;
        inserted += new;
        updated += flags.len() as u64 - new;
    }
    Ok((inserted, updated))
}

async fn ensure_facility(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
) -> Result<()> {
    let found = sqlx::query_scalar!(
        "SELECT id FROM facilities WHERE company_id = $1 AND id = $2",
        company_id.uuid(),
        facility_id.uuid()
    )
    .fetch_optional(&mut *conn)
    .await?;
    found
        .map(|_| ())
        .ok_or_else(|| Error::not_found(format!("no facility with id {facility_id}")))
}

/// A stored observation, as listed.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    /// Id of the observation.
    pub id: i64,
    /// The competitor's name.
    pub competitor: String,
    /// Unit size.
    pub size: String,
    /// The unit tier the rate is for; null when the source did not say.
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

#[derive(Debug, Clone, Serialize)]
pub struct SizeBand {
    pub size: String,
    /// Null for the size's whole set (every rate, whatever its tier); a tier's name for the
    /// band of the rates that name that tier.
    pub tier: Option<String>,
    #[serde(flatten)]
    pub band: CompetitorBand,
}

#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    /// The facility.
    pub facility_id: Uuid,
    /// The date ages and bands are measured from (today, UTC).
    pub as_of: NaiveDate,
    /// The observations, newest first.
    pub competitor_rates: Vec<Listed>,
    /// Observations listed.
    pub count: usize,
    /// The band per size as of `as_of`, as the engine would use it.
    pub bands: Vec<SizeBand>,
}

pub struct ListQuery {
    pub size: Option<String>,
    pub since: Option<NaiveDate>,
    pub limit: i64,
}

pub(crate) async fn list(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    q: &ListQuery,
    today: NaiveDate,
) -> Result<Listing> {
    let (settings, _) = settings_of(conn, company_id, facility_id).await?;
    let rows = sqlx::query!(
        "SELECT id, competitor, size, tier, rate, promo, source_url, observed_on, source
         FROM competitor_rates
         WHERE facility_id = $1 AND ($2::text IS NULL OR size = $2)
           AND ($3::date IS NULL OR observed_on >= $3)
         ORDER BY observed_on DESC, lower(competitor), size, id DESC
         LIMIT $4",
        facility_id.uuid(),
        q.size,
        q.since,
        q.limit
    )
    .fetch_all(&mut *conn)
    .await?;
    let listed: Vec<Listed> = rows
        .into_iter()
        .map(|r| {
            let age_days = (today - r.observed_on).num_days();
            Listed {
                effective_rate: (effective_rate(
                    r.rate,
                    r.promo.as_deref(),
                    settings.expected_stay_months,
                ) * 100.0)
                    .round()
                    / 100.0,
                age_days,
                stale: age_days > settings.competitor_stale_after_days,
                id: r.id,
                competitor: r.competitor,
                size: r.size,
                tier: r.tier,
                rate: r.rate,
                promo: r.promo,
                source_url: r.source_url,
                observed_on: r.observed_on,
                source: r.source,
            }
        })
        .collect();
    // Bands from every observation within the band's age limit (not just the listed page):
    // the size's whole set, and each tier's own where rates name one.
    let recent = sqlx::query!(
        "SELECT size, tier, competitor, rate, promo, observed_on FROM competitor_rates
         WHERE facility_id = $1 AND ($2::text IS NULL OR size = $2)
           AND observed_on BETWEEN $3::date - $4::int AND $3::date",
        facility_id.uuid(),
        q.size,
        today,
        i32::try_from(settings.competitor_max_age_days).unwrap_or(i32::MAX)
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut sets: Vec<(String, Option<String>)> = recent
        .iter()
        .flat_map(|r| {
            let tier = r.tier.as_deref().map(str::to_lowercase);
            [(r.size.clone(), None), (r.size.clone(), tier)]
        })
        .collect();
    sets.sort();
    sets.dedup();
    let band_settings = settings.band();
    let bands = sets
        .into_iter()
        .filter_map(|(size, tier)| {
            let obs: Vec<CompetitorObservation> = recent
                .iter()
                .filter(|r| r.size == size)
                .filter(|r| tier.is_none() || r.tier.as_deref().map(str::to_lowercase) == tier)
                .map(|r| CompetitorObservation {
                    competitor: r.competitor.clone(),
                    rate: r.rate,
                    promo: r.promo.clone(),
                    observed_on: r.observed_on,
                    tier: r.tier.clone(),
                })
                .collect();
            competitor_band(&obs, today, &band_settings).map(|band| SizeBand { size, tier, band })
        })
        .collect();
    Ok(Listing {
        facility_id: facility_id.uuid(),
        as_of: today,
        count: listed.len(),
        competitor_rates: listed,
        bands,
    })
}

/// What [`add`] stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    /// Observations added.
    pub inserted: u64,
    /// Observations replaced (same competitor, size and day).
    pub updated: u64,
}

/// Adds competitor rates posted for a facility (`{"competitor_rates": [...]}`, a bare array or
/// one record; see `domain::competitors::parse_body`): another company's facility is a 404
/// before the body is read, a bad body a 422 naming the record, and the rates are written in
/// one transaction.
pub async fn add(
    pool: &sqlx::PgPool,
    who: &crate::door::Who,
    facility_id: FacilityId,
    body: &[u8],
    today: NaiveDate,
) -> Result<crate::door::Committed<Added>> {
    crate::facilities::ensure_owned(pool, who.company, facility_id).await?;
    let rates = domain::competitors::parse_body(body, today)?;
    let mut tx = pool.begin().await?;
    let (inserted, updated) = upsert(&mut tx, who.company, facility_id, "api", &rates).await?;
    let change = crate::audit::Change::new("competitor_rate.add")
        .target("facility", facility_id)
        .facility(facility_id.uuid())
        .values(
            None,
            Some(serde_json::json!({ "inserted": inserted, "updated": updated })),
        );
    let added = Added { inserted, updated };
    crate::door::commit(tx, who, change, added, crate::door::Jobs::none()).await
}

/// The facility's competitor rates, newest first, with freshness and the band per size.
pub async fn listing(
    pool: &sqlx::PgPool,
    company_id: CompanyId,
    facility_id: FacilityId,
    q: &ListQuery,
    today: NaiveDate,
) -> Result<Listing> {
    let mut conn = pool.acquire().await?;
    list(&mut conn, company_id, facility_id, q, today).await
}
