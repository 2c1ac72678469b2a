//! Stores one snapshot: the idempotent upsert keyed on facility and date, in one transaction.

use super::write::{write_snapshots, Day};
use crate::audit::Change;
use crate::door::{self, Committed, Jobs, Who};
use crate::error::{Result, ValidationError};
use crate::facilities;
use crate::payload::Payload;
use crate::queue::Kind;
use chrono::NaiveDate;
use domain::ids::CompanyId;
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
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Push => "push",
            Self::Upload => "upload",
            Self::Crm => "crm",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
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
    /// What the snapshot's rent roll changed, when it carried one.
    pub rent_roll: Option<crate::rent_roll::RollOutcome>,
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

/// A push of one snapshot (`POST /api/v1/sync`): stored in its own transaction (see
/// [`store`]) with its audit entry; its `ingest` job is pushed by the caller.
pub async fn ingest(
    pool: &PgPool,
    who: &Who,
    allowed: &crate::access::Scope,
    p: &SyncPayload,
    raw_json: &str,
    source: Source,
) -> Result<Committed<Outcome>> {
    let mut tx = pool.begin().await?;
    let outcome = place(&mut tx, who.company, allowed, p, raw_json, source).await?;
    let change = Change::new("sync.push")
        .target("sync_record", outcome.sync_id)
        .facility(outcome.facility.id);
    let jobs = Jobs::one(Kind::Ingest, outcome.job_id);
    door::commit(tx, who, change, outcome, jobs).await
}

/// Stores one snapshot on the caller's transaction (see [`store`]), for a sender limited to
/// `allowed`: a snapshot that matched another facility, or would create one, is refused as an
/// unknown facility would be, and the caller's transaction (a created facility with it) must
/// be rolled back.
pub(crate) async fn place(
    tx: &mut PgConnection,
    company_id: CompanyId,
    allowed: &crate::access::Scope,
    p: &SyncPayload,
    raw_json: &str,
    source: Source,
) -> Result<Outcome> {
    let outcome = store(tx, company_id, p, raw_json, source).await?;
    if !allowed.sees(outcome.facility.id) {
        return Err(crate::Error::not_found(
            "the snapshot's facility is not one of the facilities this key or member may see",
        ));
    }
    Ok(outcome)
}

/// Matches (or creates) the facility and upserts the record for its date, replacing the
/// record's per-size rows, leads and competitor observations, and records its `ingest` job, all
/// on the caller's connection: an upload or a CRM pull stores all of its snapshots in one
/// transaction. `raw_json` is the body as received, kept for audit. Concurrent calls for one
/// facility and date serialise on the record's row.
pub(crate) async fn store(
    tx: &mut PgConnection,
    company_id: CompanyId,
    p: &SyncPayload,
    raw_json: &str,
    source: Source,
) -> Result<Outcome> {
    check_storable(raw_json)?;
    let fref = p.facility.clone().unwrap_or_default();
    let facility = facilities::resolve_for_sync(&mut *tx, company_id, &fref).await?;
    let day = Day {
        payload: p,
        raw_json,
    };
    let written = write_snapshots(&mut *tx, company_id, &facility, &[day], source).await?;
    let Some(w) = written.first() else {
        return Err(crate::Error::Internal(
            "the snapshot was not written".to_owned(),
        ));
    };
    let (sync_id, created, rent_roll) = (w.sync_id, w.created, w.rent_roll.clone());
    let job_id = crate::runs::insert(
        &mut *tx,
        crate::runs::NewJob::new(
            Some(company_id),
            Payload::Ingest(crate::payload::Ingest {
                sync_id,
                facility_id: facility.id.into(),
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
        idempotent: if created { "created" } else { "updated" },
        facility: facilities_outcome(facility),
        warnings,
        rent_roll,
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
