//! Stores one snapshot: the idempotent upsert keyed on facility and date, in one transaction.

use crate::error::{Result, ValidationError};
use crate::facilities;
use crate::payload::Payload;
use chrono::NaiveDate;
use domain::sync::derive::derive;
use domain::sync::payload::SyncPayload;
use serde::Serialize;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// Which intake path produced a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Push,
    Upload,
    Crm,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Self::Push => "push",
            Self::Upload => "upload",
            Self::Crm => "crm",
        }
    }
}

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[schema(as = SyncFacilityOutcome)]
pub struct FacilityOutcome {
    /// Id of the facility.
    pub id: Uuid,
    /// The facility's name.
    pub name: String,
    /// True when the sync created the facility.
    pub created: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub sync_id: Uuid,
    pub date: NaiveDate,
    /// `created` or `updated`.
    pub idempotent: &'static str,
    pub facility: FacilityOutcome,
    /// The `ingest` job recorded with the snapshot; push it once committed.
    pub job_id: Uuid,
    /// Notes on how the snapshot was placed (`<JSON path>: <reason>`), e.g. a `facility.id`
    /// that matched nothing.
    pub warnings: Vec<String>,
}

/// Checks that JSON text, already parsed, can be stored in a `jsonb` column: PostgreSQL refuses
/// the escape `\u0000` and any escaped UTF-16 surrogate that is not part of a pair (`"\ud800"`),
/// both of which are valid JSON that serde skips without complaint inside ignored fields. Every
/// raw body the service keeps passes through here, so such input is a 422, not a 500.
pub fn check_storable(raw_json: &str) -> Result<(), ValidationError> {
    let refuse = |what: &str| {
        Err(ValidationError::new(
            "body",
            format!("contains the escape {what}, which cannot be stored"),
        ))
    };
    let b = raw_json.as_bytes();
    let hex4 = |at: usize| -> Option<u16> {
        let digits = std::str::from_utf8(b.get(at..at + 4)?).ok()?;
        u16::from_str_radix(digits, 16).ok()
    };
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b.get(i + 1) != Some(&b'u') {
            i += 2; // any other escape is one character
            continue;
        }
        let Some(unit) = hex4(i + 2) else {
            i += 2;
            continue;
        };
        match unit {
            0 => return refuse("\\u0000"),
            0xD800..=0xDBFF => {
                let low = (b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u'))
                    .then(|| hex4(i + 8))
                    .flatten();
                if !matches!(low, Some(0xDC00..=0xDFFF)) {
                    return refuse(&format!("\\u{unit:04x} (an unpaired surrogate)"));
                }
                i += 12;
            }
            0xDC00..=0xDFFF => return refuse(&format!("\\u{unit:04x} (an unpaired surrogate)")),
            _ => i += 6,
        }
    }
    Ok(())
}

/// Stores one snapshot in its own transaction; see [`store`].
pub async fn ingest(
    pool: &PgPool,
    company_id: Uuid,
    p: &SyncPayload,
    raw_json: &str,
    source: Source,
) -> Result<Outcome> {
    let mut tx = pool.begin().await?;
    let outcome = store(&mut tx, company_id, p, raw_json, source).await?;
    tx.commit().await?;
    Ok(outcome)
}

/// Matches (or creates) the facility and upserts the record for its date, replacing the
/// record's per-size rows, leads and competitor observations, and records its `ingest` job, all
/// on the caller's connection: an upload or a CRM pull stores all of its snapshots in one
/// transaction. `raw_json` is the body as received, kept for audit. Concurrent calls for one
/// facility and date serialise on the record's row.
pub async fn store(
    tx: &mut PgConnection,
    company_id: Uuid,
    p: &SyncPayload,
    raw_json: &str,
    source: Source,
) -> Result<Outcome> {
    check_storable(raw_json)?;
    let fref = p.facility.clone().unwrap_or_default();
    let facility = facilities::resolve_for_sync(&mut *tx, company_id, &fref).await?;
    let d = derive(p, facility.rentable_sqft);
    let to_i32 = |v: Option<u32>| v.map(|v| i32::try_from(v).unwrap_or(i32::MAX));
    let count = |c: Option<domain::values::Count>| c.map(|c| c.as_i32());
    let promotions = serde_json::to_value(&p.promotions)
        .map_err(|e| crate::Error::Internal(format!("promotions could not be encoded: {e}")))?;
    let tenant_rents = serde_json::to_value(&p.tenant_rents)
        .map_err(|e| crate::Error::Internal(format!("tenant rents could not be encoded: {e}")))?;
    let mi = p.move_ins.clone().unwrap_or_default();
    let mo = p.move_outs.clone().unwrap_or_default();
    let new_id = Uuid::now_v7();
    let row = sqlx::query!(
        r#"INSERT INTO sync_records (
               id, company_id, facility_id, snapshot_date, source, occupancy_pct,
               move_ins_daily, move_ins_mtd, move_ins_target_monthly, move_outs_daily, move_outs_mtd,
               unit_type_count, total_units, occupied_units, units_estimated, rentable_sqft,
               rentable_sqft_estimated, gross_potential_rent, actual_rent, actual_rent_estimated,
               leads_total, promotions, tenant_rents, raw_payload)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
                   $20, $21, $22, $23, $24::text::jsonb)
           ON CONFLICT (facility_id, snapshot_date) DO UPDATE SET
               source = EXCLUDED.source, occupancy_pct = EXCLUDED.occupancy_pct,
               move_ins_daily = EXCLUDED.move_ins_daily, move_ins_mtd = EXCLUDED.move_ins_mtd,
               move_ins_target_monthly = EXCLUDED.move_ins_target_monthly,
               move_outs_daily = EXCLUDED.move_outs_daily, move_outs_mtd = EXCLUDED.move_outs_mtd,
               unit_type_count = EXCLUDED.unit_type_count, total_units = EXCLUDED.total_units,
               occupied_units = EXCLUDED.occupied_units, units_estimated = EXCLUDED.units_estimated,
               rentable_sqft = EXCLUDED.rentable_sqft, rentable_sqft_estimated = EXCLUDED.rentable_sqft_estimated,
               gross_potential_rent = EXCLUDED.gross_potential_rent, actual_rent = EXCLUDED.actual_rent,
               actual_rent_estimated = EXCLUDED.actual_rent_estimated, leads_total = EXCLUDED.leads_total,
               promotions = EXCLUDED.promotions, tenant_rents = EXCLUDED.tenant_rents,
               raw_payload = EXCLUDED.raw_payload, updated_at = now()
           RETURNING id, (xmax = 0) AS "created!""#,
        new_id,
        company_id,
        facility.id,
        p.date.0,
        source.as_str(),
        p.occupancy_pct.map(|v| v.get()),
        count(mi.daily),
        count(mi.mtd),
        count(mi.target_monthly),
        count(mo.daily),
        count(mo.mtd),
        i32::try_from(p.unit_types.len()).unwrap_or(i32::MAX),
        to_i32(d.total_units),
        to_i32(d.occupied_units),
        d.units_estimated,
        d.rentable_sqft,
        d.rentable_sqft_estimated,
        d.gross_potential_rent,
        d.actual_rent,
        d.actual_rent_estimated,
        to_i32(d.leads_total),
        promotions,
        tenant_rents,
        raw_json,
    )
    .fetch_one(&mut *tx)
    .await?;
    let sync_id = row.id;
    if !row.created {
        sqlx::query!("DELETE FROM sync_unit_types WHERE sync_id = $1", sync_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query!("DELETE FROM sync_leads WHERE sync_id = $1", sync_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query!("DELETE FROM competitor_rates WHERE sync_id = $1", sync_id)
            .execute(&mut *tx)
            .await?;
    }
    if !p.unit_types.is_empty() {
        let sizes: Vec<String> = p.unit_types.iter().map(|u| u.size.to_string()).collect();
        let widths: Vec<f64> = p.unit_types.iter().map(|u| u.size.width_ft()).collect();
        let depths: Vec<f64> = p.unit_types.iter().map(|u| u.size.depth_ft()).collect();
        let tiers: Vec<String> = p
            .unit_types
            .iter()
            .map(|u| u.tier_str().to_owned())
            .collect();
        let rates: Vec<f64> = p.unit_types.iter().map(|u| u.street_rate.get()).collect();
        let occ: Vec<Option<f64>> = p
            .unit_types
            .iter()
            .map(|u| u.occupancy_pct.map(|v| v.get()))
            .collect();
        let mtd: Vec<Option<i32>> = p.unit_types.iter().map(|u| count(u.move_ins_mtd)).collect();
        let totals: Vec<Option<i32>> = d.per_type.iter().map(|t| to_i32(t.total_units)).collect();
        let occupied: Vec<Option<i32>> = d
            .per_type
            .iter()
            .map(|t| to_i32(t.occupied_units))
            .collect();
        sqlx::query!(
            "INSERT INTO sync_unit_types (sync_id, facility_id, snapshot_date, size, width_ft, depth_ft, tier,
                 street_rate, occupancy_pct, move_ins_mtd, total_units, occupied_units)
             SELECT $1, $2, $3, * FROM UNNEST($4::text[], $5::float8[], $6::float8[], $7::text[], $8::float8[],
                 $9::float8[], $10::int4[], $11::int4[], $12::int4[])",
            sync_id,
            facility.id,
            p.date.0,
            &sizes,
            &widths,
            &depths,
            &tiers,
            &rates,
            &occ as &[Option<f64>],
            &mtd as &[Option<i32>],
            &totals as &[Option<i32>],
            &occupied as &[Option<i32>],
        )
        .execute(&mut *tx)
        .await?;
    }
    if !p.leads.is_empty() {
        let channels: Vec<String> = p
            .leads
            .iter()
            .map(|l| l.channel.as_str().to_lowercase())
            .collect();
        let counts: Vec<i32> = p.leads.iter().map(|l| l.count.as_i32()).collect();
        sqlx::query!(
            "INSERT INTO sync_leads (sync_id, facility_id, snapshot_date, channel, lead_count)
             SELECT $1, $2, $3, * FROM UNNEST($4::text[], $5::int4[])",
            sync_id,
            facility.id,
            p.date.0,
            &channels,
            &counts,
        )
        .execute(&mut *tx)
        .await?;
    }
    if !p.competitor_rates.is_empty() {
        let c = &p.competitor_rates;
        let names: Vec<String> = c.iter().map(|r| r.competitor.as_str().to_owned()).collect();
        let sizes: Vec<String> = c.iter().map(|r| r.size.to_string()).collect();
        let rates: Vec<f64> = c.iter().map(|r| r.rate.get()).collect();
        let promos: Vec<Option<String>> = c
            .iter()
            .map(|r| r.promo.as_ref().map(|t| t.as_str().to_owned()))
            .collect();
        let urls: Vec<Option<String>> = c
            .iter()
            .map(|r| r.source_url.as_ref().map(|u| u.as_str().to_owned()))
            .collect();
        sqlx::query!(
            "INSERT INTO competitor_rates (company_id, facility_id, sync_id, observed_on, source,
                 competitor, size, rate, promo, source_url)
             SELECT $1, $2, $3, $4, 'sync', * FROM UNNEST($5::text[], $6::text[], $7::float8[], $8::text[], $9::text[])",
            company_id,
            facility.id,
            sync_id,
            p.date.0,
            &names,
            &sizes,
            &rates,
            &promos as &[Option<String>],
            &urls as &[Option<String>],
        )
        .execute(&mut *tx)
        .await?;
    }
    let job_id = crate::runs::insert(
        &mut *tx,
        crate::runs::NewJob::new(
            Some(company_id),
            Payload::Ingest(crate::payload::Ingest {
                sync_id,
                facility_id: facility.id,
                date: Some(p.date.0),
            }),
        ),
    )
    .await?
    .ok_or_else(|| crate::Error::Conflict("the ingest job could not be recorded".to_owned()))?;
    let warnings = facility
        .unmatched_id
        .map(|id| {
            format!(
                "facility.id: no facility has the id {id}; {}",
                if facility.created {
                    "a new facility was created from the name"
                } else {
                    "matched by external_id or name instead"
                }
            )
        })
        .into_iter()
        .collect();
    Ok(Outcome {
        job_id,
        sync_id,
        date: p.date.0,
        idempotent: if row.created { "created" } else { "updated" },
        facility: facilities_outcome(facility),
        warnings,
    })
}

fn facilities_outcome(f: facilities::Resolved) -> FacilityOutcome {
    FacilityOutcome {
        id: f.id,
        name: f.name,
        created: f.created,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_escapes_are_refused() {
        assert!(check_storable(r#"{"a":"x\u0000y"}"#).is_err());
        assert!(check_storable(r#"{"a":"x\u0001y"}"#).is_ok());
        // An escaped backslash followed by "u0000" is text, not an escape.
        assert!(check_storable(r#"{"a":"x\\u0000y"}"#).is_ok());
    }

    #[test]
    fn only_paired_surrogates_are_stored() {
        assert!(check_storable(r#"{"a":"\ud83d\ude00"}"#).is_ok());
        assert!(check_storable(r#"{"a":"\uD83D\uDE00 and \u00e9"}"#).is_ok());
        for bad in [
            r#"{"a":"\ud800"}"#,
            r#"{"a":"\ud800x"}"#,
            r#"{"a":"\udc00"}"#,
            r#"{"a":"\ud800\u0041"}"#,
            r#"{"a":"\ud800\ud800"}"#,
            r#"{"\udfff":1}"#,
        ] {
            assert!(check_storable(bad).is_err(), "{bad}");
        }
    }
}
